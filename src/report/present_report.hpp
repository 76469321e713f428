// The present path in the result (private to src/report): the JSON of the
// path and its observers, each mode's present stages, the table rows and
// the per-frame CSV columns.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "latlab/bench/latency_run.hpp"

namespace latlab {

// Top-level "present": null without a present path.
nlohmann::ordered_json present_to_json(const LatencyRun& run);
// modes.<name>.present: stages and screen observers, null without a present path.
nlohmann::ordered_json mode_present_to_json(const LatencyRun& run, const LatencyModeResult& mode);
// Rows of the present stages and observers per mode ("" without a present path).
void append_present_table(std::string& out, const LatencyRun& run);
// CSV: the header's present columns (leading comma), and one frame's values.
void append_present_csv_header(std::string& out, const LatencyRun& run);
void append_present_csv_row(std::string& out, const LatencyRun& run, uint64_t frame_index);

}  // namespace latlab
