#include "bench/final_mapping.hpp"

#include <algorithm>
#include <limits>
#include <span>

namespace latlab {
namespace {

constexpr uint16_t kHostMarkers =
    static_cast<uint16_t>((1u << static_cast<unsigned>(Marker::gpu_begin_host)) |
                          (1u << static_cast<unsigned>(Marker::gpu_end_host)));

// A host time near the frame's GPU work, to resolve a wrapping counter.
int64_t near_host_ns(const FrameRecord& f, int64_t fallback) {
  for (const Marker m : {Marker::submit_end, Marker::submit_start, Marker::fence_wake}) {
    if (f.has(m)) return f.host_ns(m);
  }
  return fallback;
}

void map_frames(std::span<FrameRecord> frames, const TickMapper& mapper, int64_t run_start_ns,
                ClockModelReport& report) {
  const bool count = report.frame_mapping == "interpolated";  // a function has no pairs
  for (FrameRecord& f : frames) {
    f.present = static_cast<uint16_t>(f.present & ~kHostMarkers);
    if (f.gpu_status != QueryStatus::ok || !f.has(Marker::gpu_begin) || !f.has(Marker::gpu_end))
      continue;
    const std::optional<MappedSpan> m =
        mapper.map_final(f.gpu_begin_ticks, f.gpu_end_ticks, near_host_ns(f, run_start_ns));
    if (!m) continue;
    f.gpu_begin_host_ns = m->begin_host_ns;
    f.gpu_end_host_ns = m->end_host_ns;
    f.map_error_ns = static_cast<uint32_t>(
        std::clamp<int64_t>(m->error_ns, 0, std::numeric_limits<uint32_t>::max()));
    f.set(Marker::gpu_begin_host);
    f.set(Marker::gpu_end_host);
    if (count) ++(m->between_pairs ? report.frames_between_pairs : report.frames_outside_pairs);
  }
}

}  // namespace

void map_frames_final(LatencyRun& run, const TickMapper& mapper) {
  map_frames(run.frames, mapper, run.started_ns, run.clock_model);
  map_frames(run.bare_frames, mapper, run.started_ns, run.clock_model);
}

}  // namespace latlab
