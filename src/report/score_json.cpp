// The result's `score` object (docs/result-schema.md, "score"); read back by
// read_score.cpp.
#include "report/score_report.hpp"

namespace latlab {

using json = nlohmann::ordered_json;

namespace {

json opt(std::optional<double> v) { return v ? json(*v) : json(nullptr); }

}  // namespace

json score_to_json(const LatencyScore& s) {
  json components = json::array();
  for (const ScoreComponent& c : s.components) {
    components.push_back({{"mode", c.mode},
                          {"series", "core_latency"},
                          {"statistic", c.statistic},
                          {"value_us", c.value_us},
                          {"weight", c.weight}});
  }
  const bool has = s.value.has_value();
  json interval = nullptr;
  if (has) {
    interval = {{"method",
                 "percentile bootstrap: each mode's measured blocks resampled with "
                 "replacement, the components recomputed from their frames"},
                {"confidence", kScoreConfidence},
                {"resamples", s.resamples},
                {"seed", s.seed},
                {"blocks", {{"baseline", s.baseline_blocks}, {"loaded", s.loaded_blocks}}},
                {"covers", "block-to-block noise within this run, not run-to-run noise"}};
  }
  return {{"formula", s.formula},
          {"value", has ? json(*s.value) : json(nullptr)},
          {"ci95", has ? json::array({opt(s.ci_low), opt(s.ci_high)}) : json(nullptr)},
          {"higher_is_better", true},
          {"components", std::move(components)},
          {"interval", std::move(interval)},
          {"unavailable_reason", has ? json(nullptr) : json(s.unavailable_reason)}};
}

}  // namespace latlab
