// The outputs of `latlab run`'s typed result behind one interface, as
// google/benchmark's BenchmarkReporter: the engine and the command line
// know no format, and each format is a file of its own (the result JSON
// and the per-frame CSV here, the HTML report in html/, the store's append
// in store/). The console's table is format_run_summary.
//
// Threads: a reporter is used from one thread.
#pragma once

#include <memory>
#include <string>

#include "latlab/bench/run_result.hpp"
#include "latlab/result.hpp"

namespace latlab {

// A run's result with its JSON document (docs/result-schema.md), built once
// for every reporter: the file, standard output and the store hold the same
// text.
class RunDocument {
 public:
  explicit RunDocument(const RunResult& result);
  const RunResult& result() const { return result_; }
  const std::string& json_text() const { return json_; }  // ends with a newline

 private:
  const RunResult& result_;
  std::string json_;
};

class RunReporter {
 public:
  virtual ~RunReporter() = default;
  // What it writes, for messages: "the result 'r.json'".
  virtual std::string what() const = 0;
  // What an interrupt while it writes leaves of its output.
  virtual std::string if_interrupted() const = 0;
  // Writes the run; on success the lines that say where (each ending with a
  // newline), else why not (the output keeps its previous contents).
  virtual Result<std::string> write(const RunDocument& doc) = 0;
};

// --out: the result document, written atomically.
std::unique_ptr<RunReporter> result_file_reporter(std::string path);
// --frames-csv: every measured frame's markers.
std::unique_ptr<RunReporter> frames_csv_reporter(std::string path);

// The per-stage tables, what was unavailable and the latency score; a
// several-device run: one such table per section under its heading.
std::string format_run_summary(const RunResult& r);

// What an interrupt leaves of a file being written atomically.
inline constexpr const char* kAtomicFileIfInterrupted =
    "it keeps its previous contents; a temporary .latlab-XXXXXX beside it may remain";

}  // namespace latlab
