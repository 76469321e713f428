// latlab run: the latency benchmark (Baseline and Loaded) and Performance mode.
//
//   latlab run [--mode baseline|loaded|latency|performance|all]
//              [--backend vulkan|cuda|sim] [--device D]
//              [--frames N | --seconds S] [--seed X] [--interval-ms A-B]
//              [--blocks K] [--warmup N] [--out FILE] [--frames-csv FILE]
//              [--load-target-ms T] [--load-tolerance F] [--load-size WxH]
//              [--load-complexity C]
//              [--perf-complexity C] [--perf-size WxH] [--perf-frames N] ...
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
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "cli_checks.hpp"
#include "command.hpp"
#include "device_list.hpp"
#include "interrupt_scope.hpp"
#include "latlab/bench/device_factory.hpp"
#include "latlab/bench/sim.hpp"
#include "run_options.hpp"
#include "run_parts.hpp"
#include "run_present.hpp"

namespace latlab::cli {
namespace {

// The device of the run and the clock it lives on.
struct RunDevice {
  std::shared_ptr<HostTime> time;
  std::unique_ptr<LatencyDevice> device;
};

// The sim backend is opened here, not through the factory: `run`'s sim device
// lives on the run's own (real or scaled) clock. Its GPU time grows with the
// workload (sim_latency_desc's cost model), so Loaded frames take longer than
// Baseline ones and calibration converges.
int open_sim_device(const RunOptions& o, RunDevice& out) {
  SimDesc sim_desc = sim_latency_desc();
  if (!o.device.empty() && o.device != "0" && sim_desc.name.find(o.device) == std::string::npos) {
    std::fprintf(stderr, "latlab run: no sim device matches '%s'; devices: 0: %s\n",
                 o.device.c_str(), sim_desc.name.c_str());
    return kExitUsage;
  }
  if (o.time_scale != 1) {
    out.time = std::make_shared<ScaledHostTime>(o.time_scale);
  } else {
    out.time = std::make_shared<RealHostTime>();
  }
  out.device = std::make_unique<SimDevice>(std::move(sim_desc), out.time);
  return kExitOk;
}

// Opens --backend/--device into `out`; on failure prints why and returns the
// exit code.
int open_run_device(const RunOptions& o, RunDevice& out) {
  if (o.backend == "sim") return open_sim_device(o, out);
  out.time = std::make_shared<RealHostTime>();
  Result<std::unique_ptr<LatencyDevice>> opened =
      open_latency_device(DeviceSelector{o.backend, o.device, o.validation, o.present});
  if (!opened) {
    if (!o.device.empty()) {
      std::fprintf(stderr, "latlab run: cannot open %s device '%s': %s\n", o.backend.c_str(),
                   o.device.c_str(), opened.error().message.c_str());
    } else {
      std::fprintf(stderr, "latlab run: %s backend unavailable: %s\n", o.backend.c_str(),
                   opened.error().message.c_str());
    }
    return device_open_exit_code(o.device);
  }
  out.device = std::move(opened.value());
  return kExitOk;
}

}  // namespace

RunMeta make_run_meta(const RunOptions& o) {
  RunMeta meta;
  meta.mode = o.mode;
  meta.backend = o.backend;
  meta.device = o.device;
  meta.command_line = o.command_line;
  meta.created_utc = utc_now_iso8601();
  meta.machine = collect_machine_info();
  return meta;
}

void set_latency_modes(RunPlan& plan, const LoadedSetup& loaded) {
  LatencyRunDesc& desc = plan.desc;
  // A calibrated load is checked against its target after the run (off
  // target when its measured GPU time misses it); a given complexity has none.
  LatencyModeDesc loaded_mode{"loaded", plan.loaded_work, std::nullopt};
  if (loaded.calibration) {
    loaded_mode.gpu_target =
        GpuTimeTarget{loaded.calibration->target_ms, loaded.calibration->tolerance};
  }
  if (plan.want_baseline && loaded.runs) {
    desc.modes = {LatencyModeDesc{"baseline", desc.workload, std::nullopt}, loaded_mode};
  } else if (loaded.runs) {
    desc.modes = {loaded_mode};
  }
  desc.first_frame_id = loaded.next_frame_id;
}

namespace {

// The checked plan -> device -> Loaded's workload -> latency blocks ->
// Performance -> result. Each stage prints its own errors; the exit codes are in the
// header comment.
int run_command(const RunOptions& o, RunPlan& plan) {
  // --json, or an output on stdout, keeps stdout for that document.
  const bool stdout_taken = o.json || run_outputs_take_stdout(o);
  std::FILE* info = stdout_taken ? stderr : stdout;
  if (is_device_list(o.device)) {
    InterruptScope interrupt;
    return run_device_list(o, plan, info, InterruptScope::flag());
  }
  // Opened (its schema version checked) before anything runs; a new store
  // is created only when the run is appended.
  std::unique_ptr<store::ResultsStore> store;
  if (o.use_store && !(store = open_run_store(o.store))) return kExitUsage;
  RunDevice rd;
  // --present: probed in a child process before this one touches Vulkan;
  // declared after the device, so the present path goes first.
  PresentSetup present = probe_run_present(o);
  if (const int rc = open_run_device(o, rd); rc != kExitOk) return rc;
  LatencyDevice& device = *rd.device;
  std::unique_ptr<TickMapper> mapper = make_calibrated_mapper(device, calibrator_desc(o));

  // Installed before the settings are echoed, so a caller that saw them can
  // interrupt safely.
  InterruptScope interrupt;
  print_run_settings(info, o, plan, device.info());
  if (plan.want_latency()) open_run_present(o, device, present, info);
  const LoadedSetup loaded = prepare_loaded(o, plan, device, info, InterruptScope::flag());
  if (!loaded.interrupted.empty()) {  // Ctrl-C during calibration: as before any measured frame
    std::fprintf(stderr, "latlab run: stopped before any measured frame (%s); nothing written\n",
                 loaded.interrupted.c_str());
    return kExitRunFailed;
  }
  if (plan.want_loaded && !loaded.runs && !plan.want_baseline && !plan.want_perf) {
    std::fprintf(stderr, "latlab run: %s\n", loaded.unavailable.c_str());
    return kExitMissingCapability;
  }
  set_latency_modes(plan, loaded);
  RunMeta meta = make_run_meta(o);
  if (!plan.want_latency()) {
    return run_performance_only(o, plan, device, meta, loaded.next_frame_id, info,
                                InterruptScope::flag());
  }

  LatencyRunEnv env;
  env.device = &device;
  env.mapper = mapper.get();
  env.time = rd.time.get();
  env.interrupt = InterruptScope::flag();
  env.present = present.path.get();
  const bool progress = !stdout_taken && isatty(STDOUT_FILENO) == 1;
  Result<LatencyRun> result = run_latency_blocks(plan.desc, std::move(env), progress, meta);
  if (!result) {
    std::fprintf(stderr, "latlab run: %s\n", result.error().message.c_str());
    return kExitUsage;
  }
  note_present_unavailable(present, result.value());
  const LatencyRun& run = result.value();
  if (run.measured_frames_run() == 0 && run.partial) {
    std::fprintf(stderr, "latlab run: stopped before any measured frame (%s); nothing written\n",
                 run.partial_reason.c_str());
    return kExitRunFailed;
  }
  const PerformanceOutcome perf =
      run_performance_after(plan, run, device, o.perf_frames, InterruptScope::flag());
  interrupt.restore();  // a second Ctrl-C while the result is written ends the process
  return report_latency_run(o, plan, run, loaded, perf, device, std::move(meta), info, store.get());
}

// argv as the kernel holds it (main owns argv; this keeps run self-contained).
std::string own_command_line() {
  std::FILE* f = std::fopen("/proc/self/cmdline", "rb");
  if (f == nullptr) return "";
  std::string s;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  for (char& ch : s) {
    if (ch == '\0') ch = ' ';
  }
  return s;
}

// --mode, --backend, --device and the schedule.
void add_schedule_options(CLI::App* sub, RunOptions* opts) {
  sub->add_option("--mode", opts->mode,
                  "baseline | loaded | latency (baseline and loaded, interleaved blocks) | "
                  "performance (fixed workload, GPU ms and fps) | all (latency, then performance)")
      ->check(CLI::IsMember({"baseline", "loaded", "latency", "performance", "all"}))
      ->capture_default_str();
  sub->add_option("--backend", opts->backend,
                  "GPU backend: vulkan, cuda, gl (OpenGL through EGL), sim")
      ->check(CLI::IsMember({"vulkan", "cuda", "gl", "sim"}))
      ->capture_default_str();
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

// The workloads of Baseline, Loaded and Performance.
void add_workload_options(CLI::App* sub, RunOptions* opts) {
  sub->add_option("--passes", opts->passes, "GPU passes per frame")
      ->transform(unsigned_in(1, 64))
      ->capture_default_str();
  sub->add_option("--complexity", opts->complexity, "Per-pixel cost of each pass (1..4096)")
      ->transform(unsigned_in(1, 4096))
      ->capture_default_str();
  sub->add_option("--size", opts->size, "Render target WxH")->capture_default_str();
  sub->add_option("--form", opts->form, "Workload form")
      ->check(CLI::IsMember({"compute", "fragment"}))
      ->capture_default_str();
  sub->add_option("--load-target-ms", opts->load_target_ms,
                  "Loaded: GPU time per frame the load is calibrated to (ms)")
      ->check(real_in(kMinTargetMs, kMaxTargetMs))
      ->capture_default_str();
  sub->add_option("--load-tolerance", opts->load_tolerance,
                  "Loaded: accepted |median - target| / target of the calibration")
      ->check(real_in(0.001, 0.5))
      ->capture_default_str();
  sub->add_option("--load-size", opts->load_size,
                  "Loaded: render target WxH, or auto (1920x1080 where the target is reachable, "
                  "else the largest of 1280x720 960x540 640x360 320x180 160x90 where it is)")
      ->capture_default_str();
  sub->add_option("--load-complexity", opts->load_complexity,
                  "Loaded: use this complexity (1..4096) instead of calibrating")
      ->transform(unsigned_in(1, 4096));
  sub->add_option("--perf-complexity", opts->perf_complexity,
                  "Performance: complexity of the fixed 4-pass workload")
      ->transform(unsigned_in(1, 4096))
      ->capture_default_str();
  sub->add_option("--perf-size", opts->perf_size, "Performance: render target WxH")
      ->capture_default_str();
  sub->add_option("--perf-frames", opts->perf_frames, "Performance: measured frames")
      ->transform(unsigned_in(1, 1'000'000))
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
  auto plan = std::make_shared<RunPlan>();
  CLI::App* sub = app.add_subcommand(
      "run", "Latency benchmark: a software signal through every stage of a frame");
  add_schedule_options(sub, opts.get());
  add_workload_options(sub, opts.get());
  add_output_options(sub, opts.get());
  add_present_options(sub, opts.get());
  auto check = [opts, sub, plan] {
    opts->use_store = sub->count("--store") > 0;
    Result<RunPlan> planned = plan_run(*opts);
    if (!planned) {
      std::fprintf(stderr, "latlab run: %s\n", planned.error().message.c_str());
      return static_cast<int>(kExitUsage);
    }
    // Every file, before any work: outputs writable, none the same file as
    // another output or the store.
    if (Result<void> files = check_run_files(*opts); !files) {
      std::fprintf(stderr, "latlab run: %s\n", files.error().message.c_str());
      return static_cast<int>(kExitUsage);
    }
    *plan = std::move(planned.value());
    return static_cast<int>(kExitOk);
  };
  auto run = [opts, plan] {
    opts->command_line = own_command_line();
    return run_command(*opts, *plan);
  };
  return {check, run};
}

const RegisterCommand kRegister{{"run", setup, 20}};

}  // namespace
}  // namespace latlab::cli
