// `latlab run` after its options are planned: the engine's result handed to
// the reporters (table, JSON, CSV, HTML, store), and several devices.
// run.cpp calls them. Private to apps/latlab/run*.cpp.
#pragma once

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>

#include "latlab/bench/latency_report.hpp"
#include "latlab/bench/latency_run.hpp"
#include "latlab/bench/load_calibration.hpp"
#include "latlab/bench/performance_mode.hpp"
#include "latlab/bench/run_result.hpp"
#include "latlab/bench/tick_mapper.hpp"
#include "latlab/core/latency_device.hpp"
#include "report/store/results_store.hpp"
#include "run_options.hpp"

namespace latlab::cli {

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

// Every reporter of a result (one device, Performance-only, or several
// devices' sections): the table (one per section) or --json, --out,
// --frames-csv, --report, the store when not null, the validation findings
// and what did not complete. Returns the exit code (1 when a section is not
// ok).
int report_run(const RunOutputs& o, const RunResult& r, std::FILE* info,
               store::ResultsStore* store);

// `run --device all` or a device list (run_devices.cpp): every device in
// interleaved blocks, one section per device, appended to `store` when not
// null. Returns the exit code.
int run_device_list(RunCommand& c, std::FILE* info, const std::atomic<bool>* interrupt,
                    store::ResultsStore* store);

}  // namespace latlab::cli
