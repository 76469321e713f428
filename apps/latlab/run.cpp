// latlab run: the latency benchmark (Baseline and Loaded) and Performance mode.
// Options: `latlab run --help`, docs/usage.md.
//
// Modes: baseline (minimal GPU work), loaded (the same path with four passes
// at the calibrated complexity), latency (both, in interleaved blocks: the
// default), performance (a fixed workload back-to-back, GPU ms and fps), all
// (latency, then performance). Loaded calibrates on the same device first
// (unless --load-complexity); a calibration that fails leaves Loaded
// unavailable with the reason and the rest of the run goes on.
//
// Prints the settings, a progress line when stdout is a terminal, then the
// per-stage table; writes the JSON result atomically. Exit codes: 0 ok,
// 1 run failed or interrupted (result written with "partial": true; nothing
// written when stopped before any measured frame, e.g. during calibration),
// 2 bad input, 3 device/backend unavailable (or `--mode loaded` without a
// usable load), 4 result could not be written.
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "cli_app.hpp"
#include "cli_options.hpp"
#include "command.hpp"
#include "latlab/bench/device_factory.hpp"
#include "latlab/bench/device_list.hpp"
#include "latlab/bench/interrupt_scope.hpp"
#include "latlab/bench/present_probe.hpp"
#include "latlab/bench/run_engine.hpp"
#include "run_options.hpp"
#include "run_parts.hpp"

namespace latlab::cli {
namespace {

// Opens the plan's backend/device into `out`; on failure prints why and
// returns the exit code.
int open_device(const RunCommand& c, RunDevice& out) {
  const RunPlan& p = c.plan;
  Result<RunDevice> opened =
      open_run_device(DeviceSelector{p.backend, p.device, p.validation, c.present}, c.time_scale);
  if (!opened) {
    const std::string backend(backend_name(p.backend));
    if (!p.device.empty()) {
      std::fprintf(stderr, "latlab run: cannot open %s device '%s': %s\n", backend.c_str(),
                   p.device.c_str(), opened.error().message.c_str());
    } else {
      std::fprintf(stderr, "latlab run: %s backend unavailable: %s\n", backend.c_str(),
                   opened.error().message.c_str());
    }
    return device_open_exit_code(p.device);
  }
  out = std::move(opened.value());
  return kExitOk;
}

// The engine's stop without a result: its exit code, after saying why.
int report_stop(const RunOutcome& out) {
  print_run_stop(out);
  switch (out.stop) {
    case RunStop::loaded_unavailable:
      return kExitMissingCapability;
    case RunStop::bad_settings:
      return kExitUsage;
    case RunStop::none:
      return kExitOk;
    case RunStop::nothing_measured:
    case RunStop::failed:
      break;
  }
  return kExitRunFailed;
}

// The checked plan -> device -> the engine -> the reporters. Each stage
// prints its own errors; the exit codes are in the header comment.
int run_command(RunCommand& c) {
  // --json, or an output on stdout, keeps stdout for that document.
  const bool stdout_taken = c.outputs.json || run_outputs_take_stdout(c.outputs);
  std::FILE* info = stdout_taken ? stderr : stdout;
  // Opened (its schema version checked) before anything runs; a new store
  // is created only when the run is appended.
  std::unique_ptr<store::ResultsStore> store;
  if (c.outputs.use_store && !(store = open_run_store(c.outputs.store))) return kExitUsage;
  if (is_device_list(c.plan.device)) {
    InterruptScope interrupt;
    return run_device_list(c, info, InterruptScope::flag(), store.get());
  }
  RunDevice rd;
  // --present: probed in a child process before this one touches Vulkan;
  // declared after the device, so the present path goes first.
  PresentSetup present = probe_run_present(
      c.present, DeviceSelector{c.plan.backend, c.plan.device, false, true}, c.present_desc);
  if (const int rc = open_device(c, rd); rc != kExitOk) return rc;
  LatencyDevice& device = *rd.device;
  std::unique_ptr<TickMapper> mapper = make_calibrated_mapper(device, c.plan.calibrator);

  // Installed before the settings are echoed, so a caller that saw them can
  // interrupt safely.
  InterruptScope interrupt;
  print_run_settings(info, run_echo(c), device.info());
  if (c.plan.want_latency()) {
    open_run_present(device, c.present_desc, present,
                     [info](const std::string& line) { fmt::print(info, "{}\n", line); });
  }
  const RunDeviceEnv env{&device, mapper.get(), rd.time.get(), &present};
  const bool progress = !stdout_taken && isatty(STDOUT_FILENO) == 1;
  RunOutcome out = run_on_device(c.plan, env, make_run_meta(c.plan, c.command_line),
                                 console_run_hooks(info, progress, InterruptScope::flag()));
  if (out.stop != RunStop::none) return report_stop(out);
  interrupt.restore();  // a second Ctrl-C while the result is written ends the process
  return run_exit_code(report_run(c.outputs, out.result, info, store.get()));
}

// --mode, --backend, --device and the schedule.
void add_schedule_options(CLI::App* sub, RunOptions* opts) {
  sub->add_option("--mode", opts->mode,
                  "baseline | loaded | latency (baseline and loaded, interleaved blocks) | "
                  "performance (fixed workload, GPU ms and fps) | all (latency, then performance)")
      ->check(CLI::IsMember({"baseline", "loaded", "latency", "performance", "all"}))
      ->capture_default_str();
  add_backend_option(sub, opts->backend, BackendUse::any,
                     "GPU backend: vulkan, cuda, gl (OpenGL through EGL), sim");
  sub->add_option("--device", opts->device,
                  "Device index or name substring (default: the first); 'all' or a comma-separated "
                  "list: every device in interleaved blocks, one result section per device");
  auto* frames = sub->add_option("--frames", opts->frames,
                                 "Measured frames per latency mode, over all blocks (default: "
                                 "Baseline + Loaded finish in about 30 s)")
                     ->transform(unsigned_in(1, 10'000'000))
                     ->capture_default_str();
  auto* seconds =
      sub->add_option("--seconds", opts->seconds, "Measured duration instead of --frames (s)")
          ->check(real_in(0.001, 864000.0));
  frames->excludes(seconds);
  sub->add_option("--seed", opts->seed, "Schedule seed (same seed, same deadlines)")
      ->transform(unsigned_in(0, UINT64_MAX))
      ->capture_default_str();
  sub->add_option("--interval-ms", opts->interval_ms,
                  "Signal interval range MIN-MAX in ms, uniform")
      ->capture_default_str();
  sub->add_option("--blocks", opts->blocks, "Measured blocks")
      ->transform(unsigned_in(1, 100'000))
      ->capture_default_str();
  sub->add_option("--warmup", opts->warmup, "Warm-up frames, run and discarded")
      ->transform(unsigned_in(0, 1'000'000))
      ->capture_default_str();
  sub->add_option("--cpu-iterations", opts->cpu_iterations,
                  "CPU simulation step cost (hash rounds)")
      ->transform(unsigned_in(0, 100'000'000))
      ->capture_default_str();
}

// Outputs, comparison blocks and switches.
void add_output_options(CLI::App* sub, RunOptions* opts) {
  sub->add_option("--out", opts->out,
                  "JSON result file (written atomically; '-' for stdout; '' for none)")
      ->capture_default_str();
  sub->add_option("--frames-csv", opts->frames_csv, "Also write per-frame markers as CSV");
  sub->add_option("--store", opts->store,
                  "Append the run to the results store: a SQLite file or postgresql:// URL "
                  "(no value: $XDG_DATA_HOME/latlab/results.db)")
      ->expected(0, 1);
  sub->add_option("--report", opts->report,
                  "Also write a self-contained HTML report (implies --per-frame)");
  sub->add_flag("--per-frame", opts->per_frame,
                "Add every measured frame's series to the result (key per_frame)");
  sub->add_flag("--bare", opts->bare,
                "After each block, run a bare loop (same path, no instrumentation) and a raw "
                "clock_nanosleep loop");
  sub->add_option("--poll", opts->poll,
                  "The poll observer (a thread spinning on each frame's completion beside the "
                  "blocking wait: poll_latency): on, off, or auto (on with 4 or more usable "
                  "CPUs; with fewer the spinner competes with the blocking waiter)")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  sub->add_option("--poll-limit-us", opts->poll_limit_us,
                  "Bound of the poll observer's spin per frame; past it the frame's poll_latency "
                  "is missing (counted)")
      ->check(real_in(1.0, 10'000'000.0))
      ->capture_default_str();
  sub->add_option("--turn-warmup-ms", opts->turn_warmup_ms,
                  "Unrecorded frames of each block's workload, back to back, for this long "
                  "before the block (default: 0 with one device, 250 with several: each device "
                  "idles through the others' turns and its GPU may lower its clocks)")
      ->check(real_in(0.0, 60'000.0));
  sub->add_option("--clock-refresh-ms", opts->clock_refresh_ms,
                  "Period of the clock model's refresh (calibration pairs on their own thread); "
                  "0: the start-up calibration only (a diagnostic: nothing samples beside the "
                  "frames, the drift stays unknown)")
      ->check(real_in(0.0, 3'600'000.0))
      ->capture_default_str();
  sub->add_flag("--keep-timer-slack", opts->keep_timer_slack,
                "Do not lower the generator thread's timer slack");
  sub->add_flag("--json", opts->json, "Print the JSON result on stdout instead of the table");
  sub->add_flag("--validation", opts->validation, "Vulkan: enable the Khronos validation layer");
  sub->add_option("--time-scale", opts->time_scale,
                  "Sim backend only: run the clock this many times faster")
      ->transform(whole_in(1, 10'000))
      ->capture_default_str();
  sub->add_option("--sim-fail-device", opts->sim_fail_device,
                  "Sim backend with several devices: this device fails its submits from its 20th "
                  "measured frame on (tests)")
      ->transform(whole_in(-1, 1'000'000))
      ->group("");  // hidden
}

CommandRunner setup(CLI::App& app) {
  auto opts = std::make_shared<RunOptions>();
  auto plan = std::make_shared<RunCommand>();
  CLI::App* sub = app.add_subcommand(
      "run", "Latency benchmark: a software signal through every stage of a frame");
  add_schedule_options(sub, opts.get());
  add_workload_options(sub, opts.get());
  add_output_options(sub, opts.get());
  add_present_options(sub, opts.get());
  auto check = [opts, sub, plan] {
    opts->use_store = sub->count("--store") > 0;
    Result<RunCommand> planned = plan_run(*opts);
    if (!planned) {
      std::fprintf(stderr, "latlab run: %s\n", planned.error().message.c_str());
      return static_cast<int>(kExitUsage);
    }
    // Every file, before any work: outputs writable, none the same file as
    // another output or the store.
    if (Result<void> files = check_run_files(planned->outputs); !files) {
      std::fprintf(stderr, "latlab run: %s\n", files.error().message.c_str());
      return static_cast<int>(kExitUsage);
    }
    *plan = std::move(planned.value());
    return static_cast<int>(kExitOk);
  };
  auto run = [plan] {
    plan->command_line = own_command_line();
    return run_command(*plan);
  };
  return {check, run};
}

const RegisterCommand kRegister{{"run", setup, 20}};

}  // namespace
}  // namespace latlab::cli
