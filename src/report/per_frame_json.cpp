// `per_frame` of the result (with `latlab run --per-frame` or `--report`):
// every measured frame's series, per mode, as columns. Exact nanoseconds like
// the CSV; an absent value is null, never 0.
#include <array>
#include <string>

#include "report/result_json.hpp"

namespace latlab {

using json = nlohmann::ordered_json;

json per_frame_to_json(const LatencyRun& run) {
  json modes = json::object();
  for (size_t m = 0; m < run.modes.size(); ++m) {
    json frame_id = json::array();
    json block_index = json::array();
    json deadline = json::array();
    std::array<json, kSeriesCount> series;
    series.fill(json::array());
    for (const BlockResult& b : run.blocks) {
      if (b.kind != BlockKind::measured || b.mode != m) continue;
      for (uint64_t i = 0; i < b.frames_run; ++i) {
        const FrameRecord& r = run.frames[b.first_frame + i];
        frame_id.push_back(b.first_device_frame + i);
        block_index.push_back(b.index);
        deadline.push_back(r.has(Marker::deadline) ? json(r.host_ns(Marker::deadline))
                                                   : json(nullptr));
        for (size_t s = 0; s < kSeriesCount; ++s) {
          const auto v = series_value_ns(r, static_cast<Series>(s), run.device.ticks);
          series[s].push_back(v ? json(*v) : json(nullptr));
        }
      }
    }
    json by_name = json::object();
    for (size_t s = 0; s < kSeriesCount; ++s)
      by_name[std::string(to_string(static_cast<Series>(s)))] = std::move(series[s]);
    modes[run.modes[m].name] = json{{"frame_id", std::move(frame_id)},
                                    {"block_index", std::move(block_index)},
                                    {"deadline_ns", std::move(deadline)},
                                    {"series_ns", std::move(by_name)}};
  }
  return json{{"units", "ns"}, {"frames", "measured"}, {"modes", std::move(modes)}};
}

}  // namespace latlab
