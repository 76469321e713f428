// `latlab history --report FILE`: the history page of the listed runs.
// Private to apps/latlab.
#pragma once

#include <string>
#include <vector>

#include "report/store/results_store.hpp"

namespace latlab::cli {

// Loads each of `runs` from `s` and writes their page to `path` (see
// page_files.hpp): kExitOk, kExitRunFailed when a run cannot be read back,
// kExitWriteFailed when the page cannot be written.
int write_history_page(store::ResultsStore& s, const std::vector<store::StoredRunSummary>& runs,
                       const std::string& path, bool json);

}  // namespace latlab::cli
