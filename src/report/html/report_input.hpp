// Reading result documents for the HTML report. Private to latlab.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "latlab/result.hpp"

namespace latlab {

// One result document to render.
struct ReportInput {
  std::string label;           // shown as the run's title (the file name, or what the caller gives)
  nlohmann::ordered_json doc;  // the whole document
};

// Reads the result file at `path` with the one result reader
// (report/result_reader.hpp: it decides what a valid result is and words
// every error) and keeps the parsed document for rendering.
Result<ReportInput> read_report_input(const std::string& path);

}  // namespace latlab
