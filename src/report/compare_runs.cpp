// What `latlab compare` reads of a typed result (compare_parts.hpp).
#include <fmt/format.h>

#include <algorithm>

#include "report/compare_parts.hpp"

namespace latlab::compare {
namespace {

const LatencyModeResult* latency_mode(const RunResult& r, const std::string& mode) {
  if (!r.latency) return nullptr;
  for (const LatencyModeResult& m : r.latency->modes) {
    if (m.name == mode) return &m;
  }
  return nullptr;
}

// The index of the series named `name`, or kSeriesCount.
size_t series_index(const std::string& name) {
  for (size_t i = 0; i < kSeriesCount; ++i) {
    if (to_string(static_cast<Series>(i)) == name) return i;
  }
  return kSeriesCount;
}

}  // namespace

std::string run_label(const NamedRun& n) {
  return n.name == n.label ? n.label : fmt::format("{} '{}'", n.label, n.name);
}

std::vector<std::string> mode_names(const RunResult& r) {
  if (r.capture) return {kCaptureMode};
  std::vector<std::string> out;
  if (r.latency) {
    for (const LatencyModeResult& m : r.latency->modes) out.push_back(m.name);
  }
  if (r.loaded.asked && !r.loaded.runs) out.emplace_back("loaded");
  return out;
}

bool mode_available(const RunResult& r, const std::string& mode) {
  return r.capture ? mode == kCaptureMode : latency_mode(r, mode) != nullptr;
}

const Distribution* total_of(const RunResult& r, const std::string& mode,
                             const std::string& series) {
  if (r.capture) return mode == kCaptureMode ? r.capture->figure(series) : nullptr;
  const LatencyModeResult* m = latency_mode(r, mode);
  const size_t i = series_index(series);
  return m != nullptr && i < kSeriesCount ? &m->total[i] : nullptr;
}

uint64_t measured_frames(const RunResult& r, const std::string& mode) {
  if (r.capture) return r.capture->frames;
  const LatencyModeResult* m = latency_mode(r, mode);
  return m != nullptr ? m->measured_frames : 0;
}

std::vector<BlockView> measured_blocks(const RunResult& r, const std::string& mode) {
  std::vector<BlockView> out;
  if (!r.latency) return out;  // a capture has no blocks
  const std::vector<LatencyModeResult>& modes = r.latency->modes;
  for (const BlockResult& b : r.latency->blocks) {
    if (b.kind == BlockKind::measured && b.mode < modes.size() && modes[b.mode].name == mode)
      out.push_back({b.frames_run, &b.series});
  }
  return out;
}

const Distribution* block_series(const BlockView& b, const std::string& series) {
  const size_t i = series_index(series);
  return i < kSeriesCount ? &(*b.series)[i] : nullptr;
}

uint64_t block_size(const RunResult& r, const std::string& mode) {
  uint64_t s = 0;
  for (const BlockView& b : measured_blocks(r, mode)) s = std::max(s, b.frames_run);
  return s;
}

std::vector<std::pair<std::string, std::string>> compared_series(const RunResult& r) {
  std::vector<std::pair<std::string, std::string>> out;
  if (r.capture) {
    for (const auto& [name, d] : r.capture->figures) out.emplace_back(name, "stage");
    return out;
  }
  for (size_t i = 0; i < kStageCount; ++i)
    out.emplace_back(std::string(to_string(static_cast<Series>(i))), "stage");
  out.emplace_back("core_latency", "observer");
  out.emplace_back("fence_latency", "observer");
  out.emplace_back("poll_latency", "observer");
  return out;
}

}  // namespace latlab::compare
