// `latlab run --store [DB]`: the store is opened (and its schema version
// checked) before the run starts; the run is appended after its result is
// written. Private to apps/latlab/run*.cpp.
#pragma once

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "latlab/bench/latency_run.hpp"
#include "latlab/bench/run_result.hpp"
#include "report/store/results_store.hpp"

namespace latlab::cli {

// Opens the store `location` ("" = the default) for appending; on failure
// prints why and returns nullptr.
std::unique_ptr<store::ResultsStore> open_run_store(const std::string& location);

// Appends the result `r` (its JSON document `doc`, as written) with the
// per-frame series of its top-level device (which a several-device run's
// row describes, as `store add` stores it); prints where. False (printed) when it could not be
// stored.
bool store_run(store::ResultsStore& s, const RunResult& r, const nlohmann::ordered_json& doc,
               std::FILE* info);

}  // namespace latlab::cli
