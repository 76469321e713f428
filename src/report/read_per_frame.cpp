// The result reader: `per_frame` (docs/result-schema.md, "Per-frame series
// in the result"): every measured frame's series per mode, as columns.
#include <fmt/format.h>

#include "report/result_sections.hpp"

namespace latlab::reading {
namespace {

// A column of ns values or null (absent in that frame), `n` long.
std::vector<std::optional<int64_t>> ns_column(const json& a, const std::string& path, size_t n) {
  array_of(a, path);
  if (a.size() != n) fail(path, fmt::format("{} entries, frame_id has {}", a.size(), n));
  std::vector<std::optional<int64_t>> out(n);
  for (size_t i = 0; i < n; ++i) {
    if (!a[i].is_null()) out[i] = i64_value(a[i], fmt::format("{}[{}]", path, i));
  }
  return out;
}

PerFrameMode read_mode_columns(const std::string& name, const Obj& m) {
  PerFrameMode out;
  out.mode = name;
  const json& ids = m.array("frame_id");
  const size_t n = ids.size();
  for (size_t i = 0; i < n; ++i)
    out.frame_id.push_back(u64_value(ids[i], fmt::format("{}[{}]", m.key_path("frame_id"), i)));
  const json& blocks = m.array("block_index");
  if (blocks.size() != n) fail(m.key_path("block_index"), "not as long as frame_id");
  for (size_t i = 0; i < n; ++i) {
    const uint64_t b = u64_value(blocks[i], fmt::format("{}[{}]", m.key_path("block_index"), i));
    if (b > UINT32_MAX) fail(fmt::format("{}[{}]", m.key_path("block_index"), i), "out of range");
    out.block_index.push_back(static_cast<uint32_t>(b));
  }
  out.deadline_ns = ns_column(m.at("deadline_ns"), m.key_path("deadline_ns"), n);
  const Obj series = m.obj("series_ns");
  for (size_t s = 0; s < kSeriesCount; ++s) {
    const std::string key(to_string(static_cast<Series>(s)));
    // Results written before the poll observer lack its series: no values.
    out.series_ns[s] = series.has(key) ? ns_column(series.at(key), series.key_path(key), n)
                                       : std::vector<std::optional<int64_t>>(n);
  }
  return out;
}

}  // namespace

PerFrameSeries read_per_frame(const Obj& p) {
  PerFrameSeries out;
  const Obj modes = p.obj("modes");
  for (auto it = modes.raw().begin(); it != modes.raw().end(); ++it)
    out.modes.push_back(read_mode_columns(it.key(), Obj(it.value(), modes.key_path(it.key()))));
  return out;
}

}  // namespace latlab::reading
