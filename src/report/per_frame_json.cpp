// `per_frame` of the result (with `latlab run --per-frame` or `--report`):
// every measured frame's series, per mode, as columns. Exact nanoseconds like
// the CSV; an absent value is null, never 0.
#include <string>

#include "report/result_json.hpp"

namespace latlab {

using json = nlohmann::ordered_json;

namespace {

json column(const std::vector<std::optional<int64_t>>& values) {
  json out = json::array();
  for (const std::optional<int64_t>& v : values) out.push_back(v ? json(*v) : json(nullptr));
  return out;
}

}  // namespace

json per_frame_to_json(const PerFrameSeries& p) {
  json modes = json::object();
  for (const PerFrameMode& m : p.modes) {
    json by_name = json::object();
    for (size_t s = 0; s < kSeriesCount; ++s)
      by_name[std::string(to_string(static_cast<Series>(s)))] = column(m.series_ns[s]);
    modes[m.mode] = json{{"frame_id", m.frame_id},
                         {"block_index", m.block_index},
                         {"deadline_ns", column(m.deadline_ns)},
                         {"series_ns", std::move(by_name)}};
  }
  return json{{"units", "ns"}, {"frames", "measured"}, {"modes", std::move(modes)}};
}

}  // namespace latlab
