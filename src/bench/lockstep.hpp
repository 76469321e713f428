// Test scaffolding for run_latency (not public): run everything on the calling
// thread with the host-side delays scripted (on the device's HostTime,
// normally a sim device's virtual time), so every stage is exactly what the
// script and the sim device say. Pass it as LatencyRunEnv::lockstep.
#pragma once

#include <cstdint>
#include <functional>

namespace latlab {

// Each function gets the frame id; a null function means 0 ns.
struct LockstepScript {
  std::function<int64_t(uint64_t)>
      timer_lateness_ns;  // generator wakes this long after the deadline
  std::function<int64_t(uint64_t)> wake_to_signal_ns;       // generator wake -> signal
  std::function<int64_t(uint64_t)> consumer_wake_delay_ns;  // signal -> consumer wake
  std::function<int64_t(uint64_t)> cpu_cost_ns;             // replaces the CPU step
  std::function<int64_t(uint64_t)> cpu_to_submit_ns;        // cpu end -> submit start
  // The poll observer runs on the calling thread between submit and wait:
  // poll, then sleep this long (virtual time), until complete or the limit.
  // One thread: a poll that ends after the device's fence wake would have
  // come moves that wake to the poll's end (keep poll_delay_ns below
  // fence_wake_delay_ns for exact fence stages).
  int64_t poll_step_ns = 1'000;
};

}  // namespace latlab
