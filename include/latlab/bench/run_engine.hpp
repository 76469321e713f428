// The benchmark engine: runs a checked plan (run_plan.hpp) on opened
// devices and returns one typed result (run_result.hpp). Loaded's workload
// (given, or calibrated with the automatic size search), the latency blocks
// with or without the present path, Performance, several devices in
// interleaved blocks. It prints nothing: lines for the user and progress go
// through RunHooks. Not thread-safe; one run at a time per device.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "latlab/bench/run_plan.hpp"
#include "latlab/bench/run_result.hpp"
#include "latlab/bench/tick_mapper.hpp"
#include "latlab/core/latency_device.hpp"
#include "latlab/core/present_path.hpp"
#include "latlab/host_time.hpp"

namespace latlab {

// What a run tells whoever shows it; each member may be empty (null).
struct RunHooks {
  std::function<void(const std::string& line)> info;  // one line, no newline
  std::function<void(const RunProgress&)> progress;   // the latency blocks' progress
  std::function<void()> progress_done;                // after the last progress call
  const std::atomic<bool>* interrupt = nullptr;       // stops the run (a partial result)
};

// The present path of a run: asked for, opened (before the run, by the
// caller: it prints) or why not.
struct PresentSetup {
  bool asked = false;
  std::string probe_error;            // the child probe's finding; "" when it passed
  std::unique_ptr<PresentPath> path;  // null when unavailable (destroy before the device)
  std::string unavailable;            // why there is no present path
};

// The device a one-device run measures, and its clocks (not owned).
struct RunDeviceEnv {
  LatencyDevice* device = nullptr;
  TickMapper* mapper = nullptr;
  HostTime* time = nullptr;               // null: the real host clock
  const PresentSetup* present = nullptr;  // null: not asked
};

// Why a run stopped without a result.
enum class RunStop {
  none,                // a result (possibly partial)
  nothing_measured,    // interrupted before any measured frame
  loaded_unavailable,  // only Loaded asked for, and it cannot run
  bad_settings,        // the latency run refused the settings
  failed,              // Performance alone failed
};

struct RunOutcome {
  RunStop stop = RunStop::none;
  std::string why;  // when stop != none
  RunResult result;
};

// The sizes the automatic load size tries, largest first
// (docs/load-calibration.md).
const std::vector<std::pair<uint32_t, uint32_t>>& auto_load_sizes();

// Whether a calibration error says the target is below the lowest GPU time
// reachable at that size (a smaller size may reach it; nothing else would).
bool target_below_reach(const Error& e);

// Sets plan.loaded_work (complexity given or calibrated; the size the
// search chose). A failed calibration leaves Loaded unavailable with the
// reason; an interrupt stops it within a frame and no other size is tried.
LoadedOutcome prepare_loaded(RunPlan& plan, LatencyDevice& device, const RunHooks& hooks);

// Sets the latency modes of plan.desc: Baseline and/or Loaded as they run.
void set_latency_modes(RunPlan& plan, const LoadedOutcome& loaded);

// The run's metadata: mode, backend, device of the plan, the command line,
// the time, the machine.
RunMeta make_run_meta(const RunPlan& plan, std::string command_line);

// The validation layer's (or KHR_debug's) findings of `device` when `on`.
std::optional<ValidationReport> validation_findings(const LatencyDevice& device, bool on);

// Adds present, screen and each observer that could not run to run.unavailable.
void note_present_unavailable(const PresentSetup& setup, LatencyRun& run);

// One device: Loaded's workload, the latency blocks, Performance (as the
// plan asks), the result.
RunOutcome run_on_device(RunPlan& plan, const RunDeviceEnv& env, RunMeta meta,
                         const RunHooks& hooks);

// One device of a several-device run, opened by the caller (or why not).
struct RunLane {
  DeviceSectionHead head;
  std::unique_ptr<LatencyDevice> device;  // null when it could not be opened
  std::string failure;                    // why not; "" when opened
};

// Sets the turn warm-up of a run over `devices` devices (unless given).
void plan_for_devices(RunPlan& plan, size_t devices);

// Several devices: each lane's Loaded workload, then every lane's latency
// blocks interleaved on the same deadlines, one section per lane. stop is
// nothing_measured (why: each lane's failure) when no lane ran.
RunOutcome run_on_devices(const RunPlan& plan, std::vector<RunLane>& lanes, const RunMeta& meta,
                          const RunHooks& hooks);

}  // namespace latlab
