// The score as text: a table cell, its components, the console's lines.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "report/score_report.hpp"

namespace latlab {

std::string score_number(double v) {
  const int magnitude = v > 0 ? static_cast<int>(std::floor(std::log10(v))) : 0;
  return fmt::format("{:.{}f}", v, std::max(1, 3 - magnitude));
}

std::string score_cell(const LatencyScore& s) {
  if (!s.value) return "none";
  return fmt::format("{} [{}, {}]", score_number(*s.value), score_number(s.ci_low.value_or(0)),
                     score_number(s.ci_high.value_or(0)));
}

std::string score_components_text(const LatencyScore& s) {
  std::string out;
  std::string mode;
  for (const ScoreComponent& c : s.components) {
    if (c.mode != mode) {
      out += fmt::format("{}{} ", out.empty() ? "Core Latency us: " : "; ", c.mode);
      mode = c.mode;
    } else {
      out += ", ";
    }
    out += fmt::format("{} {:.1f}", c.statistic, c.value_us);
  }
  return out;
}

std::string format_score(const LatencyScore& s) {
  if (!s.value) return fmt::format("  latency score: none: {}\n", s.unavailable_reason);
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "  latency score {} (95% interval; {}, higher is better, docs/score.md)\n",
                 score_cell(s), s.formula);
  fmt::format_to(it, "    = 1000 / geometric mean (weight {:g} each) of the components in ms; {}\n",
                 s.components.empty() ? 0.0 : s.components.front().weight,
                 score_components_text(s));
  fmt::format_to(it,
                 "    interval: {} bootstrap resamples of {} + {} measured blocks (seed {}): "
                 "block-to-block noise within this run, not run-to-run noise\n",
                 s.resamples, s.baseline_blocks, s.loaded_blocks, s.seed);
  return out;
}

}  // namespace latlab
