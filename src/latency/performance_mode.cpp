#include "latlab/performance_mode.hpp"

#include <string>
#include <vector>

#include "latlab/host_clock.hpp"

namespace latlab {

Result<PerformanceReport> run_performance(LatencyDevice& device, const FrameWorkload& work,
                                          uint32_t frames, const PerformanceDesc& desc) {
  if (frames == 0) return make_error("performance: frames must be at least 1");
  if (desc.in_flight == 0) return make_error("performance: in_flight must be at least 1");
  const DeviceInfo& info = device.info();
  if (!info.can_time) {
    return make_error("performance: device '" + info.name + "' (" + info.backend +
                      ") has no usable GPU timestamps");
  }
  const TickFormat& ticks = info.ticks;
  const int64_t start = host_now_ns();
  const uint64_t total = uint64_t{desc.warmup_frames} + frames;
  const uint64_t id0 = desc.first_frame_id;

  std::vector<double> gpu_ms, fps;
  gpu_ms.reserve(frames);
  fps.reserve(frames);
  uint64_t gpu_missing = 0, fps_missing = 0;
  bool prev_ok = false;
  uint64_t prev_end = 0;
  bool have_first = false;
  uint64_t first_prev_end = 0;  // end of the frame before the first measured one
  uint64_t last_end = 0;
  bool timeline_ok = true;  // every measured frame had ok timestamps

  uint64_t submitted = 0;
  for (uint64_t waited = 0; waited < total; ++waited) {
    while (submitted < total && submitted - waited < desc.in_flight) {
      if (auto s = device.submit_frame(id0 + submitted, work); !s) {
        return make_error("performance: submitting frame " + std::to_string(id0 + submitted) +
                          " failed: " + s.error().message);
      }
      ++submitted;
    }
    auto t = device.wait_frame(id0 + waited);
    if (!t) {
      return make_error("performance: waiting for frame " + std::to_string(id0 + waited) +
                        " failed: " + t.error().message);
    }
    const bool ok = t->gpu_status == QueryStatus::ok;
    const bool measured = waited >= desc.warmup_frames;
    if (measured) {
      if (waited == desc.warmup_frames) {
        have_first = prev_ok;
        first_prev_end = prev_end;
      }
      if (ok) {
        gpu_ms.push_back(static_cast<double>(ticks.span_ns(t->gpu_begin_ticks, t->gpu_end_ticks)) /
                         1e6);
        const int64_t gap = prev_ok ? ticks.span_ns(prev_end, t->gpu_end_ticks) : 0;
        if (gap > 0) {
          fps.push_back(1e9 / static_cast<double>(gap));
        } else {
          ++fps_missing;
        }
        last_end = t->gpu_end_ticks;
      } else {
        ++gpu_missing;
        ++fps_missing;
        timeline_ok = false;
      }
    }
    prev_ok = ok;
    prev_end = ok ? t->gpu_end_ticks : 0;
  }

  PerformanceReport r;
  r.work = work;
  r.frames = frames;
  r.gpu_ms = summarize_in_place(gpu_ms, gpu_missing);
  r.fps = summarize_in_place(fps, fps_missing);
  if (have_first && timeline_ok) {
    const int64_t span = ticks.span_ns(first_prev_end, last_end);
    if (span > 0)
      r.gpu_timeline_fps = static_cast<double>(frames) * 1e9 / static_cast<double>(span);
  }
  r.wall_ns = host_now_ns() - start;
  r.next_frame_id = id0 + total;
  return r;
}

}  // namespace latlab
