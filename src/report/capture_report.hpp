// The reporters of a capture (docs/capture.md): the per-frame and
// per-submission CSVs of a capture held whole (a session streams them
// through the writers of capture_csv_writers.hpp instead), the
// PresentMon-compatible CSV and the console summary. The JSON's shape is
// result_json.hpp's.
#pragma once

#include <cstdio>
#include <string>

#include "capture/capture_records.hpp"
#include "latlab/bench/capture_session.hpp"
#include "latlab/bench/run_result.hpp"

namespace latlab {

// --out: the result document (kind "capture"), indented, with a final
// newline.
std::string capture_result_text(const RunResult& result);

// --frames-csv of `records.summary.frames` (summarize_capture's rows): one
// row per frame, times in ns on CLOCK_MONOTONIC, an empty cell where a
// value was not measured.
std::string capture_frames_csv(const capture::CaptureRecords& records);

// --submits-csv: one row per submission.
std::string capture_submits_csv(const capture::CaptureRecords& records);

// --presentmon-csv: PresentMon 2.x's column names and units (ms; "NA"
// where latlab has no value); docs/capture.md maps each column.
std::string capture_presentmon_csv(const capture::CaptureRecords& records);

// What was captured, in a few lines on `out` (every line begins
// "latlab capture: ").
void print_capture_summary(std::FILE* out, const CaptureOutcome& outcome);

}  // namespace latlab
