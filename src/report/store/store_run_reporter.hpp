// --store: the run appended to a results store as one of run's reporters
// (run_reporter.hpp): the typed result with its document as written (no
// text parsed) and the per-frame series of its top-level device, which a
// several-device run's row describes, as `store add` of its file stores it.
#pragma once

#include <memory>

#include "report/run_reporter.hpp"
#include "report/store/results_store.hpp"

namespace latlab::store {

// `s` must outlive the reporter.
std::unique_ptr<RunReporter> store_run_reporter(ResultsStore& s);

}  // namespace latlab::store
