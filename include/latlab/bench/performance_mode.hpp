// Performance mode: a fixed workload run back-to-back offscreen (no present),
// reporting GPU time per frame and frames per second as distributions.
//
// Frames are queued `in_flight` ahead so the GPU never waits on the CPU;
// GPU time per frame comes from the frame's begin/end timestamps, and the
// per-frame rate from the spacing of consecutive GPU end timestamps (so gaps
// the GPU spent idle count against the rate, as they should). A frame without
// ok timestamps is counted as missing in both, never replaced.
//
// Interrupt: once `interrupt` is true no further frame is submitted; the
// frames already queued are waited for and counted, and the report says so
// (partial_reason).
//
// Thread safety: drives `device` from the calling thread only.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "latlab/core/latency_device.hpp"
#include "latlab/result.hpp"
#include "latlab/stats.hpp"

namespace latlab {

struct PerformanceDesc {
  uint32_t warmup_frames = 5;  // run first and not measured
  uint32_t in_flight =
      2;  // frames queued ahead of the one waited on (>= 1; the device must accept this many)
  uint64_t first_frame_id = 0;  // frame ids used: first_frame_id, +1, ...
  // Optional: once true, no further frame is submitted (see the file comment).
  const std::atomic<bool>* interrupt = nullptr;
};

struct PerformanceReport {
  FrameWorkload work;
  uint32_t frames = 0;        // measured frames that ran (fewer than asked when partial)
  uint32_t frames_asked = 0;  // measured frames asked for
  // Why the run stopped early, and where ("interrupted in Performance mode
  // after 120 of 300 measured frames"); "" when every frame ran.
  std::string partial_reason;
  Distribution gpu_ms;  // per frame: GPU end - begin, ms
  Distribution fps;     // per frame: 1000 / (GPU end[i] - GPU end[i-1] in ms)
  double gpu_timeline_fps =
      0;  // measured frames / (last GPU end - end of the frame before the first), 0 if unknown
  int64_t wall_ns = 0;         // host-clock time of the whole run, warm-up included
  uint64_t next_frame_id = 0;  // first frame id not used
  bool operator==(const PerformanceReport&) const = default;
};

// Errors: frames == 0, in_flight == 0, device without timestamps, and device
// failures (with the frame id). An interrupt is not an error: a partial report.
Result<PerformanceReport> run_performance(LatencyDevice& device, const FrameWorkload& work,
                                          uint32_t frames, const PerformanceDesc& desc = {});

}  // namespace latlab
