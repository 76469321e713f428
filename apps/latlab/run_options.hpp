// `latlab run`'s options, checked into a plan before any device is opened,
// and the settings it echoes at the start. Private to apps/latlab/run*.cpp;
// RunOptions stays in run.cpp and run_options.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "latlab/bench/latency_run.hpp"
#include "latlab/bench/load_calibration.hpp"
#include "latlab/bench/run_plan.hpp"
#include "latlab/calibrator.hpp"
#include "latlab/core/latency_device.hpp"
#include "latlab/core/present_path.hpp"
#include "latlab/result.hpp"
#include "report/reporters/reporters.hpp"

namespace latlab::cli {

// The command line of `latlab run`, as parsed (defaults as --help shows).
struct RunOptions {
  std::string mode = "latency";
  Backend backend = Backend::vulkan;
  std::string device;
  uint32_t frames = 1250;
  double seconds = 0;
  uint64_t seed = 1;
  std::string interval_ms = "8-12";
  uint32_t blocks = 5;
  uint32_t warmup = 100;
  uint32_t cpu_iterations = 2000;
  uint32_t passes = 1;
  uint32_t complexity = 1;
  std::string size = "64x64";
  std::string form = "compute";
  std::string out = "latlab-result.json";
  std::string frames_csv;
  bool use_store = false;  // --store given: append the run to the results store
  std::string store;       // its location ("" = the default)
  std::string report;      // HTML report to write at the end ("" = none); implies per_frame
  bool per_frame = false;  // add every measured frame's series to the result (`per_frame`)
  bool bare = false;
  std::string poll = "auto";      // --poll auto|on|off: the poll observer thread
  double poll_limit_us = 20'000;  // --poll-limit-us: one frame's spin bound
  // --turn-warmup-ms: unrecorded frames before each block; unset: 0 for one
  // device, kSeveralDevicesTurnWarmupNs with several (run_devices.cpp)
  std::optional<double> turn_warmup_ms;
  bool keep_timer_slack = false;
  // --clock-refresh-ms: the clock model's refresh period; 0: the start-up
  // calibration only (a diagnostic: no refresh beside the frames)
  double clock_refresh_ms = 1000;
  bool json = false;
  bool validation = false;
  int sim_fail_device = -1;  // hidden (tests): with several sim devices, this one fails mid-run
  int64_t time_scale = 1;
  bool present = false;          // --present: the Vulkan present path and screen observers
  double present_hold_ms = 0;    // --present-hold-ms (test knob)
  double present_poll_us = 500;  // --present-poll-us: framebuffer observer period
  double load_target_ms = kLoadedTargetMs;
  double load_tolerance = 0.02;    // accepted |median - target| / target
  std::string load_size = "auto";  // WxH, or auto: see load_size.cpp
  uint32_t load_complexity = 0;    // 0: calibrate
  uint32_t perf_complexity = 256;
  std::string perf_size = "1920x1080";
  uint32_t perf_frames = 300;
  std::string command_line;
};

// `latlab run`, checked: the engine's plan, the outputs, how the device is
// opened and what the settings echo says. The options stop here.
struct RunCommand {
  RunPlan plan;
  RunOutputs outputs;
  std::string form = "compute";  // as asked (the echo)
  std::string poll = "auto";     // as asked (the echo)
  double clock_refresh_ms = 1000;
  int64_t time_scale = 1;    // the sim backend's clock speed-up
  int sim_fail_device = -1;  // with several sim devices, this one fails mid-run (tests)
  bool present = false;      // the present path
  PresentDesc present_desc;
  std::string command_line;
};

// The plan of `o`, or why the options are bad input (the message follows
// "latlab run: "): options that contradict each other or the mode, a
// default store without a home. Opens nothing and creates no file. The
// output files are checked apart (check_run_files).
Result<RunCommand> plan_run(const RunOptions& o);

// The workloads of Baseline, Loaded and Performance.
void add_workload_options(CLI::App* sub, RunOptions* opts);

// --present and its knobs.
void add_present_options(CLI::App* sub, RunOptions* opts);

// What the settings echo (print_run_settings) says of `c`.
RunEcho run_echo(const RunCommand& c);

}  // namespace latlab::cli
