#include "latlab/bench/performance_mode.hpp"

#include <string>
#include <vector>

#include "latlab/host_clock.hpp"

namespace latlab {

namespace {

// The measured frames' figures, added as each frame is waited for.
struct PerformanceTally {
  std::vector<double> gpu_ms, fps;
  uint64_t gpu_missing = 0, fps_missing = 0;
  bool prev_ok = false;
  uint64_t prev_end = 0;
  bool have_first = false;
  uint64_t first_prev_end = 0;  // end of the frame before the first measured one
  uint64_t last_end = 0;
  bool timeline_ok = true;  // every measured frame had ok timestamps

  // Frame number `index` of the run (warm-up included).
  void add(const TickFormat& ticks, const GpuFrameTiming& t, uint64_t index, uint32_t warmup) {
    const bool ok = t.gpu_status == QueryStatus::ok;
    if (index >= warmup) add_measured(ticks, t, ok, index == warmup);
    prev_ok = ok;
    prev_end = ok ? t.gpu_end_ticks : 0;
  }

  void add_measured(const TickFormat& ticks, const GpuFrameTiming& t, bool ok, bool first) {
    if (first) {
      have_first = prev_ok;
      first_prev_end = prev_end;
    }
    if (!ok) {
      ++gpu_missing;
      ++fps_missing;
      timeline_ok = false;
      return;
    }
    gpu_ms.push_back(static_cast<double>(ticks.span_ns(t.gpu_begin_ticks, t.gpu_end_ticks)) / 1e6);
    const int64_t gap = prev_ok ? ticks.span_ns(prev_end, t.gpu_end_ticks) : 0;
    if (gap > 0) {
      fps.push_back(1e9 / static_cast<double>(gap));
    } else {
      ++fps_missing;
    }
    last_end = t.gpu_end_ticks;
  }
};

// Why an interrupted run is partial, after `waited` frames of the run.
std::string interrupted_reason(uint64_t waited, uint64_t measured, uint32_t frames,
                               const PerformanceDesc& desc) {
  return measured == 0
             ? "interrupted in Performance mode during its warm-up (" + std::to_string(waited) +
                   " of " + std::to_string(desc.warmup_frames) + " frames)"
             : "interrupted in Performance mode after " + std::to_string(measured) + " of " +
                   std::to_string(frames) + " measured frames";
}

void fill_figures(PerformanceReport& r, PerformanceTally& tally, const TickFormat& ticks,
                  uint64_t measured) {
  r.gpu_ms = summarize_in_place(tally.gpu_ms, tally.gpu_missing);
  r.fps = summarize_in_place(tally.fps, tally.fps_missing);
  if (tally.have_first && tally.timeline_ok && measured > 0) {
    const int64_t span = ticks.span_ns(tally.first_prev_end, tally.last_end);
    if (span > 0)
      r.gpu_timeline_fps = static_cast<double>(measured) * 1e9 / static_cast<double>(span);
  }
}

}  // namespace

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

  PerformanceTally tally;
  tally.gpu_ms.reserve(frames);
  tally.fps.reserve(frames);
  uint64_t submitted = 0;
  uint64_t waited = 0;
  uint64_t end = total;  // frames to wait for: cut to those submitted on an interrupt
  for (; waited < end; ++waited) {
    while (submitted < end && submitted - waited < desc.in_flight) {
      if (desc.interrupt != nullptr && desc.interrupt->load(std::memory_order_relaxed)) {
        end = submitted;  // queued frames still run: wait for them, count them
        break;
      }
      if (auto s = device.submit_frame(id0 + submitted, work); !s) {
        return make_error("performance: submitting frame " + std::to_string(id0 + submitted) +
                          " failed: " + s.error().message);
      }
      ++submitted;
    }
    if (waited >= end) break;  // interrupted with nothing in flight
    auto t = device.wait_frame(id0 + waited);
    if (!t) {
      return make_error("performance: waiting for frame " + std::to_string(id0 + waited) +
                        " failed: " + t.error().message);
    }
    tally.add(ticks, *t, waited, desc.warmup_frames);
  }

  PerformanceReport r;
  r.work = work;
  const uint64_t measured = waited > desc.warmup_frames ? waited - desc.warmup_frames : 0;
  r.frames = static_cast<uint32_t>(measured);
  r.frames_asked = frames;
  if (end < total) r.partial_reason = interrupted_reason(waited, measured, frames, desc);
  fill_figures(r, tally, ticks, measured);
  r.wall_ns = host_now_ns() - start;
  r.next_frame_id = id0 + submitted;
  return r;
}

}  // namespace latlab
