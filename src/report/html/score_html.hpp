// The latency score on the HTML pages (docs/score.md): never alone, always
// with its 95 % interval and its four components, or "no score: <reason>".
// Private to src/report/html.
#pragma once

#include <string>

#include "latlab/bench/score_result.hpp"
#include "report/run_comparison.hpp"

namespace latlab::html {

// The run report's headline line (id `id`): the score, its interval and
// components, what the interval covers; or why there is none.
std::string score_paragraph(const LatencyScore& s, const std::string& id);

// A table cell (<td>): "412.7 [398.2, 425.1]" with the components in words
// beside it, or "no score: <reason>".
std::string score_td(const LatencyScore& s);

// The comparison page's "Latency score" section: each run's score beside
// its label and name, and what the scores are not (never tested); "" when
// captures are compared.
std::string compare_scores_section(const Comparison& c);

}  // namespace latlab::html
