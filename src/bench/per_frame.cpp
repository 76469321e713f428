// Every measured frame's series per mode (per_frame.hpp), from the run's
// frame records: what the result carries as `per_frame`.
#include "latlab/bench/per_frame.hpp"

namespace latlab {

PerFrameSeries per_frame_of(const LatencyRun& run) {
  PerFrameSeries out;
  for (size_t m = 0; m < run.modes.size(); ++m) {
    PerFrameMode& mode = out.modes.emplace_back();
    mode.mode = run.modes[m].name;
    for (const BlockResult& b : run.blocks) {
      if (b.kind != BlockKind::measured || b.mode != m) continue;
      for (uint64_t i = 0; i < b.frames_run; ++i) {
        const FrameRecord& r = run.frames[b.first_frame + i];
        mode.frame_id.push_back(b.first_device_frame + i);
        mode.block_index.push_back(b.index);
        mode.deadline_ns.push_back(r.has(Marker::deadline)
                                       ? std::optional<int64_t>(r.host_ns(Marker::deadline))
                                       : std::nullopt);
        for (size_t s = 0; s < kSeriesCount; ++s)
          mode.series_ns[s].push_back(series_value_ns(r, static_cast<Series>(s), run.device.ticks));
      }
    }
  }
  return out;
}

}  // namespace latlab
