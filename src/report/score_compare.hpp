// The latency scores of a comparison's runs (docs/compare.md, "Scores"):
// each run's score with its interval and components, shown beside the rows
// and never tested; with the caveats that keep them from being read as a
// test. Private to src/report and the CLI.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/run_comparison.hpp"

namespace latlab {

// The lines after the rows of format_comparison(); "" when captures are
// compared.
std::string format_compare_scores(const Comparison& c);

// `scores` of comparison_json(); null when captures are compared.
nlohmann::ordered_json compare_scores_json(const Comparison& c);

// What the scores of `c` are not: what each interval covers, and why they
// do not compare when they do not (settings or formulas differ).
std::vector<std::string> compare_score_notes(const Comparison& c);

}  // namespace latlab
