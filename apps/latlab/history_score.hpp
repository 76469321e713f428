// `latlab history`'s latency score (docs/score.md): the column, the reasons
// below the table, and `score` in --json. Private to apps/latlab.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "report/store/results_store.hpp"

namespace latlab::cli {

// `score` of a run in --json: null when it was stored without one; its
// components are the core p50 and p99 of its baseline and loaded rows.
nlohmann::ordered_json history_score_json(const store::StoredRunSummary& r);

// The score column: "412.7 [398.2, 425.1]", or "-" (the reason is listed
// below the table).
std::string history_score_cell(const std::optional<store::StoredScore>& s);

// Why each listed latency run has no score, one line each.
void print_score_reasons(const std::vector<store::StoredRunSummary>& runs);

}  // namespace latlab::cli
