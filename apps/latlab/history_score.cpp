#include "history_score.hpp"

#include <fmt/format.h>

#include "report/score_report.hpp"

namespace latlab::cli {
namespace {

using json = nlohmann::ordered_json;

json opt(std::optional<double> v) { return v ? json(*v) : json(nullptr); }

bool is_latency_run(const store::StoredRunSummary& r) {
  for (const auto& m : r.modes)
    if (m.mode != "capture") return true;
  return false;
}

}  // namespace

json history_score_json(const store::StoredRunSummary& r) {
  if (!r.score) return nullptr;
  const store::StoredScore& s = *r.score;
  json components = json::array();
  for (const auto& m : r.modes) {
    if (!s.value || (m.mode != "baseline" && m.mode != "loaded")) continue;
    components.push_back({{"mode", m.mode}, {"statistic", "p50"}, {"value_us", opt(m.core_p50)}});
    components.push_back({{"mode", m.mode}, {"statistic", "p99"}, {"value_us", opt(m.core_p99)}});
  }
  return {{"formula", s.formula},
          {"value", opt(s.value)},
          {"ci95", s.value ? json::array({opt(s.ci_low), opt(s.ci_high)}) : json(nullptr)},
          {"components", std::move(components)},
          {"unavailable_reason", s.value ? json(nullptr) : json(s.unavailable_reason)}};
}

std::string history_score_cell(const std::optional<store::StoredScore>& s) {
  if (!s || !s->value) return "-";
  return fmt::format("{} [{}, {}]", score_number(*s->value), score_number(s->ci_low.value_or(0)),
                     score_number(s->ci_high.value_or(0)));
}

void print_score_reasons(const std::vector<store::StoredRunSummary>& runs) {
  for (const auto& r : runs) {
    if (!is_latency_run(r) || (r.score && r.score->value)) continue;
    fmt::print("  run {}: no score: {}\n", r.id,
               r.score ? r.score->unavailable_reason
                       : "stored without one (before latlab computed scores)");
  }
}

}  // namespace latlab::cli
