// Reading result documents for the HTML report. Private to latlab.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "latlab/result.hpp"

namespace latlab {

// One result document, checked well enough to render.
struct ReportInput {
  std::string label;           // shown as the run's title (the file name, or what the caller gives)
  nlohmann::ordered_json doc;  // the whole document
};

// Checks a parsed document: an object with integer `schema_version` 1 (a
// newer version is refused: this latlab cannot know its meaning), `kind`
// "latency_run" or "performance_run", and a `modes` object. The error names
// `label` and what is wrong.
Result<void> check_result_document(const nlohmann::ordered_json& doc, const std::string& label);

// Reads and checks the result file at `path` (parse errors give the byte
// offset: a truncated file says so).
Result<ReportInput> read_report_input(const std::string& path);

}  // namespace latlab
