// The stages of `latlab run` after its options are planned: the Loaded
// workload, the latency blocks, Performance, and the result. run.cpp calls
// them in order. Private to apps/latlab/run*.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "latlab/bench/latency_device.hpp"
#include "latlab/bench/latency_report.hpp"
#include "latlab/bench/latency_run.hpp"
#include "latlab/bench/load_calibration.hpp"
#include "latlab/bench/performance_mode.hpp"
#include "latlab/bench/tick_mapper.hpp"
#include "report/result_json.hpp"
#include "run_options.hpp"
#include "run_store.hpp"

namespace latlab::cli {

// --load-size as asked and as used: with auto, the first size of
// auto_load_sizes() at which the load calibration reaches the target.
struct LoadSizeChoice {
  std::string asked;                                       // "auto" or "WxH"
  std::string used;                                        // "WxH"; "" when no size worked
  std::string why;                                         // one line
  std::vector<std::pair<std::string, std::string>> tried;  // (size, why not) of each size given up
};

// The sizes --load-size auto tries, largest first (docs/load-calibration.md).
const std::vector<std::pair<uint32_t, uint32_t>>& auto_load_sizes();

// Whether a calibration error says the target is below the lowest GPU time
// reachable at that size (a smaller size may reach it; nothing else would).
bool target_below_reach(const Error& e);

// `load_calibration.size` of the result.
nlohmann::ordered_json load_size_to_json(const LoadSizeChoice& c);

// Loaded's workload on this device: given by --load-complexity or calibrated
// before any block (timestamps are never rescaled afterwards).
struct LoadedSetup {
  LoadSizeChoice size;                               // set when Loaded was asked for
  std::optional<LoadCalibrationReport> calibration;  // set when calibration returned a report
  std::string unavailable;     // why Loaded does not run; "" when it runs or was not asked for
  bool runs = false;           // Loaded was asked for and is available
  uint64_t next_frame_id = 0;  // the first frame id after calibration's frames
  // Set when `interrupt` stopped the calibration: where ("interrupted during
  // load calibration at 640x360, evaluation #3 ..."); the run stops there.
  std::string interrupted;
};

// Sets plan.loaded_work.complexity (given or calibrated, printing each
// calibration step to `info`). A failed calibration leaves Loaded
// unavailable with the reason; the rest of the run goes on. An interrupt
// (optional) stops the calibration within a frame and no other size is
// tried: `interrupted` says where.
LoadedSetup prepare_loaded(const RunOptions& o, RunPlan& plan, LatencyDevice& device,
                           std::FILE* info, const std::atomic<bool>* interrupt);

// Runs the latency blocks of `desc`, with a progress line on stdout when
// `progress`; records the process memory around the run in `meta`.
Result<LatencyRun> run_latency_blocks(const LatencyRunDesc& desc, LatencyRunEnv env, bool progress,
                                      RunMeta& meta);

// `--mode performance`: runs Performance alone, prints and writes its result
// (partial when `interrupt` stopped it). Returns the exit code.
int run_performance_only(const RunOptions& o, const RunPlan& plan, LatencyDevice& device,
                         const RunMeta& meta, uint64_t first_frame_id, std::FILE* info,
                         const std::atomic<bool>* interrupt);

// Performance after the latency blocks (`--mode all`).
struct PerformanceOutcome {
  std::optional<PerformanceReport> report;  // partial_reason set when an interrupt cut it short
  std::string unavailable;                  // why there is no report, when one was asked for
  // An interrupt stopped Performance (its report, or `unavailable` when no
  // measured frame ran, says where): the whole run is partial.
  std::string interrupted;
};

// Runs Performance after `run` when the plan asks for it and the latency run
// completed; `interrupt` (optional) stops it (a partial report).
PerformanceOutcome run_performance_after(const RunPlan& plan, const LatencyRun& run,
                                         LatencyDevice& device, uint32_t frames,
                                         const std::atomic<bool>* interrupt);

// The result document of a latency run without Performance, with the
// device's validation findings, as report_latency_run builds it (the
// per-device sections of `run --device all`).
nlohmann::ordered_json latency_result_doc(const RunOptions& o, const RunPlan& plan,
                                          const LatencyRun& run, const LoadedSetup& loaded,
                                          const LatencyDevice& device, RunMeta meta);

// The run's metadata: mode, backend, device, command line, time, machine.
RunMeta make_run_meta(const RunOptions& o);

// Sets the latency modes of plan.desc: Baseline and/or Loaded as they run.
void set_latency_modes(RunPlan& plan, const LoadedSetup& loaded);

// `run --device all` or a device list (run_devices.cpp): every device in
// interleaved blocks, one section per device. Returns the exit code.
int run_device_list(const RunOptions& o, RunPlan& plan, std::FILE* info,
                    const std::atomic<bool>* interrupt);

// Whether --out, --frames-csv or --report writes to standard output ("-",
// /dev/stdout): the table and messages then go to stderr.
bool run_outputs_take_stdout(const RunOptions& o);

// Checks run's files before anything runs (file_plan.hpp): --out,
// --frames-csv, --report, --json's standard output and the SQLite store are
// writable and no two are the same file.
Result<void> check_run_files(const RunOptions& o);

// Writes `doc` to `path` atomically and says so on `info` (with `suffix`);
// on failure prints why on stderr and returns false.
bool write_result_json(const std::string& path, const nlohmann::ordered_json& doc, std::FILE* info,
                       const char* suffix);

// Prints and writes the result of a latency run (JSON, CSV, validation
// findings) and appends it to `store` when not null; returns the exit code.
int report_latency_run(const RunOptions& o, const RunPlan& plan, const LatencyRun& run,
                       const LoadedSetup& loaded, const PerformanceOutcome& perf,
                       const LatencyDevice& device, RunMeta meta, std::FILE* info,
                       store::ResultsStore* store);

}  // namespace latlab::cli
