// The reporters as the command line sees them: the one header of src/report
// that apps/ includes (tests/layering.cmake holds it so). A command hands its
// typed result (latlab/bench/) to these functions, or to the per-command
// reporters this header brings in below; the formats (table, JSON, CSV,
// HTML, the results store) are theirs.
#pragma once

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>

#include "latlab/bench/capture_session.hpp"
#include "latlab/bench/run_engine.hpp"
#include "latlab/bench/run_plan.hpp"
#include "latlab/bench/run_result.hpp"
#include "latlab/core/latency_device.hpp"
#include "latlab/result.hpp"
#include "report/calibrate_load_report.hpp"  // latlab calibrate-load
#include "report/capture_input_report.hpp"   // latlab capture --input
#include "report/clocks_report.hpp"          // latlab clocks
#include "report/devices_report.hpp"         // latlab devices
#include "report/file_plan.hpp"              // every command's files
#include "report/html/compare_html.hpp"      // latlab compare --report
#include "report/html/history_html.hpp"      // latlab history --report
#include "report/html/report_html.hpp"       // latlab report
#include "report/html/report_input.hpp"
#include "report/page_files.hpp"
#include "report/profile_report.hpp"        // latlab profile
#include "report/result_reader.hpp"         // result files read back
#include "report/run_comparison.hpp"        // latlab compare
#include "report/store/history_report.hpp"  // latlab history
#include "report/store/results_store.hpp"   // latlab store, run --store
#include "report/store/run_sources.hpp"     // compare's runs from files and the store

namespace latlab {

// Where `latlab run`'s result goes.
struct RunOutputs {
  std::string out;         // JSON result ("" none, "-" stdout)
  std::string frames_csv;  // per-frame CSV ("" none)
  std::string report;      // HTML report ("" none)
  bool json = false;       // the JSON on stdout instead of the table
  bool use_store = false;  // append the run to the results store
  std::string store;       // its location ("" = the default)
};

// Whether --out, --frames-csv or --report writes to standard output ("-",
// /dev/stdout): the table and messages then go to stderr.
bool run_outputs_take_stdout(const RunOutputs& o);

// Checks run's files before anything runs (file_plan.hpp): --out,
// --frames-csv, --report, --json's standard output and the SQLite store are
// writable and no two are the same file.
Result<void> check_run_files(const RunOutputs& o);

// Opens the store `location` ("" = the default) for appending (its schema
// version checked) before the run starts; on failure prints why and returns
// nullptr.
std::unique_ptr<store::ResultsStore> open_run_store(const std::string& location);

// What `latlab run` echoes at its start: the plan and the options as asked.
struct RunEcho {
  const RunPlan* plan = nullptr;
  std::string form;  // --form
  std::string poll;  // --poll (auto: with the usable CPUs)
  int usable_cpus = 1;
  double clock_refresh_ms = 1000;
  int64_t time_scale = 1;  // the sim backend's clock speed-up
  const RunOutputs* outputs = nullptr;
};

// Echoes the settings of the run to `info` (stdout, or stderr with --json).
void print_run_settings(std::FILE* info, const RunEcho& e, const DeviceInfo& device);

// The engine's hooks on the console: its lines on `info`, with `progress`
// a progress line on stdout (a terminal's), and `interrupt` as its stop.
RunHooks console_run_hooks(std::FILE* info, bool progress, const std::atomic<bool>* interrupt);

// Why the engine stopped without a result, on stderr (nothing for a result).
void print_run_stop(const RunOutcome& out);

// How the reporting of a run ended.
enum class RunReported {
  complete,      // every section ok, every output written
  incomplete,    // partial, a section not ok, Performance without a report, validation errors
  write_failed,  // an output could not be written (the others were)
};

// Every reporter of a result (one device, Performance-only, or several
// devices' sections), after its latency scores are attached (docs/score.md):
// the table (one per section) or --json, --out,
// --frames-csv, --report, the store when not null; then the validation
// findings and what did not complete, on stderr.
RunReported report_run(const RunOutputs& o, RunResult& r, std::FILE* info,
                       store::ResultsStore* store);

// Where `latlab capture`'s result goes.
struct CaptureOutputs {
  std::string out;         // result JSON ("" none, "-" stdout)
  std::string frames_csv;  // per-frame CSV ("" none), and so on
  std::string submits_csv;
  std::string presentmon_csv;
  std::string inputs_csv;
  std::string report;        // HTML report
  std::string command_line;  // latlab's own, into the result
};

// Every output of a capture checked together before it starts (file_plan.hpp).
Result<void> check_capture_files(const CaptureOutputs& o);

struct CaptureCsvFiles;

// The reporters of one capture: the CSVs are row sinks of the session,
// written as it runs and renamed into place at its end; then the result,
// the report and the console summary (on stderr: the program's streams are
// its own).
class CaptureReporters {
 public:
  explicit CaptureReporters(CaptureOutputs o);
  ~CaptureReporters();
  CaptureReporters(const CaptureReporters&) = delete;
  CaptureReporters& operator=(const CaptureReporters&) = delete;

  // Opens every CSV asked for; false after saying why on stderr.
  bool open();
  // Hands the session the CSVs as row (and input) sinks.
  void attach(CaptureHooks& hooks);
  // Every file asked for, then the console summary; false when a file could
  // not be written (the others were).
  bool report(const CaptureOutcome& out);

 private:
  CaptureOutputs outputs_;
  std::unique_ptr<CaptureCsvFiles> csv_;
};

}  // namespace latlab
