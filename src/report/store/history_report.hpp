// What `latlab history` prints from the store's run summaries, newest first:
// the JSON document (every run's key figures per mode and its latency score
// with its formula and components, docs/score.md) and the table with the
// reasons for missing scores below it. A value not measured is null / "-".
#pragma once

#include <string>
#include <vector>

#include "report/store/results_store.hpp"

namespace latlab {

// {"store": name, "runs": [...]}, indented by 2.
std::string history_json(const std::vector<store::StoredRunSummary>& runs,
                         const std::string& store_name);
std::string history_text(const std::vector<store::StoredRunSummary>& runs,
                         const std::string& store_name);

}  // namespace latlab
