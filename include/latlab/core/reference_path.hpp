// ReferencePath: an independent minimal path beside the measured one, the
// control of `latlab run --bare`. Part of the rig seam (LatencyDevice): no GPU
// headers; header-only.
//
// It shares nothing with the measured path but the schedule: its own
// prerecorded work (two GPU timestamps and nothing between: on Vulkan a
// command buffer recorded once with its own query pool and fence; on CUDA
// two stamps on its own stream; on sim the device script without the cost
// model's work), its own submit and its own blocking wait. The engine times
// it with the same observers as the measured path (core latency, fence
// latency, timer lateness) on the same deadlines, so what the measured path
// adds shows as a difference.
//
// Ownership: LatencyDevice::open_reference() makes it; it refers to the
// device, so destroy it first. Threads: driven from one thread (the
// consumer), like the frame calls, and never at the same time as them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "latlab/query_status.hpp"
#include "latlab/result.hpp"
#include "latlab/core/poll_target.hpp"

namespace latlab {

struct GpuFrameTiming;

class ReferencePath {
 public:
  virtual ~ReferencePath() = default;
  ReferencePath() = default;
  ReferencePath(const ReferencePath&) = delete;
  ReferencePath& operator=(const ReferencePath&) = delete;

  // What one reference frame submits, for the result (static text).
  virtual const char* what() const = 0;
  // Submits the prerecorded work for `frame_id`. One frame in flight: error
  // when the previous one was not waited for, or the driver fails.
  virtual Result<void> submit(uint64_t frame_id) = 0;
  // Blocks (no spinning) until `frame_id` completed; fence_wake_ns is the
  // host time right after the wait returned, GPU ticks read with
  // availability as in LatencyDevice::wait_frame.
  virtual Result<GpuFrameTiming> wait(uint64_t frame_id) = 0;
  // The poll target of the frame in flight, for the device's
  // CompletionPoller (same contract as LatencyDevice::poll_target); nullopt:
  // not pollable. Default: not pollable.
  virtual std::optional<PollTarget> poll_target(uint64_t /*frame_id*/) { return std::nullopt; }
};

}  // namespace latlab
