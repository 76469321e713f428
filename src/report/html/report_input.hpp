// What the HTML report renders: typed results with their titles. Private to latlab.
#pragma once

#include <string>

#include "latlab/bench/run_result.hpp"
#include "latlab/result.hpp"

namespace latlab {

// One result to render (a several-device result shows its top-level device).
struct ReportInput {
  std::string label;                  // the run's title (the file name, or what the caller gives)
  const RunResult* result = nullptr;  // not owned; alive while rendering
};

// A result file read for the report.
struct ReportFile {
  std::string label;  // the file's name
  RunResult result;
};

// Reads the result file at `path` with the one result reader
// (report/result_reader.hpp: it decides what a valid result is and words
// every error).
Result<ReportFile> read_report_input(const std::string& path);

}  // namespace latlab
