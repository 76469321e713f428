// The turn warm-up (not public): before a device's block in an interleaved
// run, its frames run back to back, unrecorded, for a set time. While other
// devices have their turns this one idles for whole blocks, and a GPU left
// idle that long may lower its clocks: without the warm-up the first frames
// of its next turn measure the clock ramp, not the path (on the 2-GPU H200
// Vulkan Loaded frames took up to 5.7x their time and a backlog built up).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "latlab/host_time.hpp"
#include "latlab/core/latency_device.hpp"

namespace latlab {

struct TurnWarmup {
  uint64_t frames = 0;  // device frame ids used: first_id .. first_id + frames - 1
  int64_t wall_ns = 0;
  std::string error;         // the device failed; "" when it did not
  bool interrupted = false;  // `interrupt` stopped it before `duration_ns` had passed
};

// Submits and waits `work` back to back from device frame id `first_id`
// until `duration_ns` of host time has passed (at least one frame when
// duration_ns > 0), or `interrupt` is set, or the device fails.
TurnWarmup run_turn_warmup(LatencyDevice& device, HostTime& time, const FrameWorkload& work,
                           uint64_t first_id, int64_t duration_ns,
                           const std::atomic<bool>* interrupt);

}  // namespace latlab
