// The reader's model (result_reader.hpp) of a typed result, made from the
// RunResult itself: what `latlab store add` of the written file would read
// back, without writing text to parse it again. tests/unit/
// result_model_test.cpp checks, for generated results, that reading the
// JSON back gives exactly this. Private to src/report and apps/latlab.
#pragma once

#include <nlohmann/json.hpp>

#include "latlab/bench/run_result.hpp"
#include "report/result_reader.hpp"

namespace latlab {

// The model of `r`; `doc` is its document as run_result_to_json wrote it
// (the model keeps the text and `settings` as compact JSON).
ReadResult result_model(const RunResult& r, const nlohmann::ordered_json& doc);

}  // namespace latlab
