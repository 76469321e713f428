// The latency score (latency_score.hpp, docs/score.md) where it is shown:
// computed from the engine's typed result into RunResult::score, the
// result's `score` object, and the text beside the console table, `history`
// and `compare`. Every place shows the score with its interval and
// components, or that there is none and why. Private to src/report and
// apps/latlab.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "latlab/bench/run_result.hpp"
#include "report/latency_score.hpp"

namespace latlab {

// The score of one device's latency run: its measured blocks' per-frame
// Core Latency. `r` (optional) says why Loaded did not run, when it did not.
LatencyScore latency_score_of(const LatencyRun& run, const RunResult* r);

// Sets RunResult::score of `r`'s latency run and of every device section's
// (the engine's result, before it is reported). A Performance-only run and
// a capture keep none.
void attach_latency_scores(RunResult& r);

// The score of `r` (one device: a section's or the top level's) for display:
// RunResult::score, or a LatencyScore whose unavailable_reason says why
// there is none (a Performance-only run, a capture, a result nobody scored).
LatencyScore score_for_display(const RunResult& r);

// The result's `score` object (docs/result-schema.md).
nlohmann::ordered_json score_to_json(const LatencyScore& s);

// A score with 4 significant digits, at least one decimal and no exponent:
// "1085.3", "426.7", "6.042".
std::string score_number(double v);

// A short line: "412.7 [398.2, 425.1]", or "none".
std::string score_cell(const LatencyScore& s);

// The components in words: "Core Latency us: baseline p50 512.3, p99 801.2;
// loaded p50 9012.4, p99 12011.0"; "" without a score.
std::string score_components_text(const LatencyScore& s);

// Lines under the console table: the score, its interval and components,
// what the interval covers; or that there is none and why.
std::string format_score(const LatencyScore& s);

}  // namespace latlab
