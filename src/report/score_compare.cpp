#include "report/score_compare.hpp"

#include <fmt/format.h>

#include <iterator>
#include <set>
#include <tuple>

#include "report/score_report.hpp"

namespace latlab {
namespace {

using json = nlohmann::ordered_json;

constexpr const char* kCovers =
    "each interval is block-to-block noise within its own run, not run-to-run noise: the rows "
    "above are the test of B against A";

std::string label(char side, size_t i, size_t n) {
  return n == 1 ? std::string(1, side) : fmt::format("{}{}", side, i + 1);
}

std::string score_line(const std::optional<LatencyScore>& s) {
  if (!s) return "none: the result holds no score";
  if (!s->value) return "none: " + s->unavailable_reason;
  return fmt::format("{:<24} {}", score_cell(*s), score_components_text(*s));
}

// Why the scores of `c` do not compare, beyond what kCovers says.
std::vector<std::string> score_caveats(const Comparison& c) {
  std::vector<std::string> out;
  if (c.settings_differ) {
    out.push_back(
        "the runs were measured with different settings (--allow-different-settings, notes "
        "above): their scores measure different things and do not compare");
  }
  std::set<std::string> formulas;
  for (const auto* side : {&c.a_scores, &c.b_scores}) {
    for (const std::optional<LatencyScore>& s : *side)
      if (s && s->value) formulas.insert(s->formula);
  }
  if (formulas.size() > 1)
    out.push_back("the scores come from different formulas: they do not compare");
  return out;
}

json side_json(const std::vector<std::string>& names,
               const std::vector<std::optional<LatencyScore>>& scores) {
  json out = json::array();
  for (size_t i = 0; i < scores.size(); ++i) {
    out.push_back({{"name", i < names.size() ? names[i] : ""},
                   {"score", scores[i] ? score_to_json(*scores[i]) : json(nullptr)}});
  }
  return out;
}

}  // namespace

std::string format_compare_scores(const Comparison& c) {
  if (c.a_scores.empty() && c.b_scores.empty()) return "";
  std::string out;
  auto o = std::back_inserter(out);
  out += "latency score (docs/score.md; higher is better; [95% interval over the run's blocks])\n";
  for (const auto& [side, names, scores] :
       {std::tuple{'A', &c.a_names, &c.a_scores}, std::tuple{'B', &c.b_names, &c.b_scores}}) {
    for (size_t i = 0; i < scores->size(); ++i) {
      fmt::format_to(o, "  {:<3} {:<24.24} {}\n", label(side, i, scores->size()),
                     i < names->size() ? (*names)[i] : "", score_line((*scores)[i]));
    }
  }
  fmt::format_to(o, "  note: {}\n", kCovers);
  for (const std::string& n : score_caveats(c)) fmt::format_to(o, "  note: {}\n", n);
  return out;
}

std::vector<std::string> compare_score_notes(const Comparison& c) {
  std::vector<std::string> out{kCovers};
  for (std::string& n : score_caveats(c)) out.push_back(std::move(n));
  return out;
}

json compare_scores_json(const Comparison& c) {
  if (c.a_scores.empty() && c.b_scores.empty()) return nullptr;
  return {{"a", side_json(c.a_names, c.a_scores)},
          {"b", side_json(c.b_names, c.b_scores)},
          {"tested", false},
          {"interval_covers", kCovers},
          {"caveats", score_caveats(c)}};
}

}  // namespace latlab
