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
// 1 run failed or interrupted (result written with "partial": true),
// 2 bad input, 3 device/backend unavailable (or `--mode loaded` without a
// usable load), 4 result could not be written.
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "command.hpp"
#include "latlab/device_factory.hpp"
#include "latlab/latency_report.hpp"
#include "latlab/latency_run.hpp"
#include "latlab/load_calibration.hpp"
#include "latlab/performance_mode.hpp"
#include "latlab/sim_device.hpp"
#include "latlab/tick_mapper.hpp"
#include "latlab/vulkan.hpp"

namespace latlab::cli {
namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) { g_interrupted.store(true); }

struct RunOptions {
  std::string mode = "latency";
  std::string backend = "vulkan";
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
  bool bare = false;
  bool keep_timer_slack = false;
  bool json = false;
  bool validation = false;
  int64_t time_scale = 1;
  double load_target_ms = kLoadedTargetMs;
  double load_tolerance = 0.02;  // accepted |median - target| / target
  std::string load_size = "1920x1080";
  uint32_t load_complexity = 0;  // 0: calibrate
  uint32_t perf_complexity = 256;
  std::string perf_size = "1920x1080";
  uint32_t perf_frames = 300;
  std::string command_line;
};

// "A-B" or "A" (ms, decimals allowed) -> ns range.
std::optional<std::pair<int64_t, int64_t>> parse_interval_ms(const std::string& text,
                                                             std::string& why) {
  auto parse_one = [&](const std::string& s, int64_t& ns) {
    if (s.empty()) return false;
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    if (errno != 0 || end != s.c_str() + s.size() || !std::isfinite(v)) return false;
    if (v <= 0 || v > 10'000) return false;
    ns = std::llround(v * 1e6);
    return ns > 0;
  };
  const size_t dash = text.find('-', 1);
  int64_t lo = 0;
  int64_t hi = 0;
  const std::string a = dash == std::string::npos ? text : text.substr(0, dash);
  const std::string b = dash == std::string::npos ? text : text.substr(dash + 1);
  if (!parse_one(a, lo) || !parse_one(b, hi)) {
    why = "--interval-ms '" + text +
          "' is not MIN-MAX in milliseconds with 0 < MIN <= MAX <= 10000 (e.g. 8-12)";
    return std::nullopt;
  }
  if (hi < lo) {
    why = "--interval-ms '" + text + "' is reversed: give MIN-MAX with MIN <= MAX";
    return std::nullopt;
  }
  return std::pair{lo, hi};
}

// "WxH" with both sides in 1..16384.
std::optional<std::pair<uint32_t, uint32_t>> parse_size(const std::string& s) {
  const size_t x = s.find('x');
  if (x == std::string::npos) return std::nullopt;
  auto side = [](const std::string& t) -> std::optional<uint32_t> {
    if (t.empty() || t.size() > 5) return std::nullopt;
    uint32_t v = 0;
    for (char ch : t) {
      if (ch < '0' || ch > '9') return std::nullopt;
      v = v * 10 + static_cast<uint32_t>(ch - '0');
    }
    if (v < 1 || v > 16384) return std::nullopt;
    return v;
  };
  const auto w = side(s.substr(0, x));
  const auto h = side(s.substr(x + 1));
  if (!w || !h) return std::nullopt;
  return std::pair{*w, *h};
}

bool output_dir_writable(const std::string& path, std::string& why) {
  const size_t slash = path.find_last_of('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (access(dir.c_str(), W_OK) != 0) {
    why = "cannot write '" + path + "': directory '" + dir + "' does not exist or is not writable";
    return false;
  }
  return true;
}

int run_command(const RunOptions& o) {
  std::FILE* info = o.json ? stderr : stdout;  // --json keeps stdout for the document

  // --- settings ------------------------------------------------------------
  std::string why;
  const auto interval = parse_interval_ms(o.interval_ms, why);
  if (!interval) {
    std::fprintf(stderr, "latlab run: %s\n", why.c_str());
    return kExitUsage;
  }
  LatencyRunDesc desc;
  desc.schedule.seed = o.seed;
  desc.schedule.min_interval_ns = interval->first;
  desc.schedule.max_interval_ns = interval->second;
  desc.frames = o.frames;
  if (o.seconds > 0) {
    const double mean_ns = 0.5 * static_cast<double>(interval->first + interval->second);
    const double n = std::ceil(o.seconds * 1e9 / mean_ns);
    if (n > 10'000'000) {
      std::fprintf(stderr, "latlab run: --seconds %.1f gives more than 10 million frames\n",
                   o.seconds);
      return kExitUsage;
    }
    desc.frames = static_cast<uint32_t>(std::max(1.0, n));
  }
  desc.blocks = o.blocks;
  desc.warmup_frames = o.warmup;
  desc.cpu_step_iterations = o.cpu_iterations;
  desc.timer_slack_ns = o.keep_timer_slack ? 0 : 1;
  const auto size = parse_size(o.size);
  if (!size) {
    std::fprintf(stderr, "latlab run: --size '%s' is not WxH with sides in 1..16384 (e.g. 64x64)\n",
                 o.size.c_str());
    return kExitUsage;
  }
  desc.workload.passes = o.passes;
  desc.workload.complexity = o.complexity;
  desc.workload.width = size->first;
  desc.workload.height = size->second;
  desc.workload.form = o.form == "fragment" ? WorkloadForm::fragment : WorkloadForm::compute;
  desc.bare_comparison = o.bare;
  const bool want_baseline = o.mode == "baseline" || o.mode == "latency" || o.mode == "all";
  const bool want_loaded = o.mode == "loaded" || o.mode == "latency" || o.mode == "all";
  const bool want_perf = o.mode == "performance" || o.mode == "all";
  const bool want_latency = want_baseline || want_loaded;
  if (o.bare && want_baseline && want_loaded) {
    std::fprintf(stderr,
                 "latlab run: --bare runs with one latency mode: add --mode baseline or --mode "
                 "loaded\n");
    return kExitUsage;
  }
  const auto load_size = parse_size(o.load_size);
  const auto perf_size = parse_size(o.perf_size);
  if (!load_size || !perf_size) {
    std::fprintf(
        stderr, "latlab run: --%s '%s' is not WxH with sides in 1..16384 (e.g. 1920x1080)\n",
        load_size ? "perf-size" : "load-size", (load_size ? o.perf_size : o.load_size).c_str());
    return kExitUsage;
  }
  if (!(o.load_target_ms > 0) || !std::isfinite(o.load_target_ms)) {
    std::fprintf(stderr, "latlab run: --load-target-ms must be a positive number of ms\n");
    return kExitUsage;
  }
  const WorkloadForm form = o.form == "fragment" ? WorkloadForm::fragment : WorkloadForm::compute;
  if (Result<void> v = validate(desc); !v) {
    std::fprintf(stderr, "latlab run: %s\n", v.error().message.c_str());
    return kExitUsage;
  }
  if (o.time_scale != 1 && o.backend != "sim") {
    std::fprintf(
        stderr,
        "latlab run: --time-scale only works with --backend sim (a GPU runs on real time)\n");
    return kExitUsage;
  }
  if (!o.out.empty() && !output_dir_writable(o.out, why)) {
    std::fprintf(stderr, "latlab run: %s\n", why.c_str());
    return kExitUsage;
  }
  if (!o.frames_csv.empty() && !output_dir_writable(o.frames_csv, why)) {
    std::fprintf(stderr, "latlab run: %s\n", why.c_str());
    return kExitUsage;
  }

  // --- device ----------------------------------------------------------------
  // The sim backend is opened here, not through the factory: `run` needs the
  // SimLatencyDevice, which lives on the run's own (real or scaled) clock.
  std::shared_ptr<HostTime> time;
  std::unique_ptr<LatencyDevice> device;
  if (o.backend == "sim") {
    const SimDeviceDesc sim_desc;
    if (!o.device.empty() && o.device != "0" && sim_desc.name.find(o.device) == std::string::npos) {
      std::fprintf(stderr, "latlab run: no sim device matches '%s'; devices: 0: %s\n",
                   o.device.c_str(), sim_desc.name.c_str());
      return kExitUsage;
    }
    if (o.time_scale != 1) {
      time = std::make_shared<ScaledHostTime>(o.time_scale);
    } else {
      time = std::make_shared<RealHostTime>();
    }
    // GPU time grows with the workload (SimDeviceDesc::gpu_ns_per_work_unit), so
    // Loaded frames take longer than Baseline ones and calibration converges.
    SimDeviceDesc scaled = sim_desc;
    scaled.gpu_ns_per_work_unit = 0.002;
    device = SimLatencyDevice::create(scaled, time);
  } else {
    time = std::make_shared<RealHostTime>();
    Result<std::unique_ptr<LatencyDevice>> opened =
        open_latency_device(DeviceSelector{o.backend, o.device, o.validation});
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
    device = std::move(opened.value());
  }
  const DeviceInfo& di = device->info();
  std::unique_ptr<TickMapper> mapper = make_calibrated_mapper(*device);

  // Ctrl-C / SIGTERM from here on ends the run early with a partial result
  // (installed before the settings are echoed, so a caller that saw them can
  // interrupt safely). A second Ctrl-C ends the process.
  g_interrupted.store(false);
  struct sigaction sa {};
  struct sigaction old_int {};
  struct sigaction old_term {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = static_cast<int>(SA_RESETHAND);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  fmt::print(info, "latlab run: mode {}, backend {}, device \"{}\" ({})\n", o.mode, di.backend,
             di.name, di.driver);
  if (want_latency) {
    fmt::print(info,
               "  seed {}, intervals {:.3f}-{:.3f} ms (uniform), {} frames in {} blocks after {} "
               "warm-up frames{}\n",
               desc.schedule.seed, static_cast<double>(desc.schedule.min_interval_ns) / 1e6,
               static_cast<double>(desc.schedule.max_interval_ns) / 1e6, desc.frames, desc.blocks,
               desc.warmup_frames,
               want_baseline && want_loaded ? " per mode, modes in interleaved blocks" : "");
  }
  if (want_baseline) {
    fmt::print(info, "  baseline workload: passes {}  complexity {}  size {}x{}  form {}\n",
               desc.workload.passes, desc.workload.complexity, desc.workload.width,
               desc.workload.height, o.form);
  }
  if (want_loaded) {
    if (o.load_complexity > 0) {
      fmt::print(info, "  loaded workload: passes 4  complexity {} (given)  size {}x{}  form {}\n",
                 o.load_complexity, load_size->first, load_size->second, o.form);
    } else {
      fmt::print(info,
                 "  loaded workload: passes 4  complexity calibrated to {} ms GPU  size {}x{}  "
                 "form {}\n",
                 o.load_target_ms, load_size->first, load_size->second, o.form);
    }
  }
  if (want_perf) {
    fmt::print(info,
               "  performance: {} frames, passes 4  complexity {}  size {}x{}  form {}, "
               "offscreen\n",
               o.perf_frames, o.perf_complexity, perf_size->first, perf_size->second, o.form);
  }
  fmt::print(info, "  cpu step {} iterations, timer slack {}{}{}\n", desc.cpu_step_iterations,
             desc.timer_slack_ns > 0 ? "1 ns requested" : "unchanged",
             o.validation && di.backend == "vulkan" ? ", Vulkan validation on" : "",
             desc.bare_comparison ? ", bare-loop and raw-sleep comparison blocks" : "");
  if (o.time_scale != 1) fmt::print(info, "  sim clock accelerated x{}\n", o.time_scale);
  fmt::print(info, "  host clock {}, result -> {}{}\n", kHostClockName,
             o.out.empty() ? "(none)" : o.out,
             o.frames_csv.empty() ? "" : ", frames -> " + o.frames_csv);
  std::fflush(info);

  // --- loaded workload ---------------------------------------------------------
  // Calibrated on this device before any block; timestamps are never
  // rescaled afterwards. A failure leaves Loaded unavailable, the rest runs.
  uint64_t next_frame_id = 0;
  std::optional<LoadCalibrationReport> calibration;
  std::string loaded_unavailable;
  FrameWorkload loaded_work;
  loaded_work.passes = 4;
  loaded_work.width = load_size->first;
  loaded_work.height = load_size->second;
  loaded_work.form = form;
  if (want_loaded && o.load_complexity > 0) {
    loaded_work.complexity = o.load_complexity;
  } else if (want_loaded) {
    LoadCalibrationDesc cd;
    cd.target_ms = o.load_target_ms;
    cd.tolerance = o.load_tolerance;
    cd.width = load_size->first;
    cd.height = load_size->second;
    cd.form = form;
    cd.first_frame_id = next_frame_id;
    cd.on_step = [info](const LoadCalibrationStep& st) {
      fmt::print(info, "  load calibration #{}: {} complexity {} -> median {:.4f} ms ({:+.2f}%)\n",
                 st.index, to_string(st.kind), st.complexity, st.median_ms,
                 st.error_fraction * 100.0);
      std::fflush(info);
    };
    Result<LoadCalibrationReport> cal = calibrate_load(*device, cd);
    if (!cal) {
      loaded_unavailable = "load calibration failed: " + cal.error().message;
    } else {
      next_frame_id = cal->next_frame_id;
      loaded_work.complexity = cal->complexity;
      if (!cal->within_tolerance) {
        loaded_unavailable =
            "load calibration did not reach the target within tolerance: " + cal->outcome;
      }
      calibration = std::move(cal.value());
    }
    if (loaded_unavailable.empty()) {
      fmt::print(info, "  load calibrated: complexity {}, median {:.4f} ms (target {} ms)\n",
                 calibration->complexity, calibration->median_ms, calibration->target_ms);
    } else {
      fmt::print(info, "  Loaded unavailable: {}\n", loaded_unavailable);
    }
    std::fflush(info);
  }
  const bool run_loaded = want_loaded && loaded_unavailable.empty();
  if (want_loaded && !run_loaded && !want_baseline && !want_perf) {
    std::fprintf(stderr, "latlab run: %s\n", loaded_unavailable.c_str());
    return kExitMissingCapability;
  }
  if (want_baseline && run_loaded) {
    desc.modes = {LatencyModeDesc{"baseline", desc.workload},
                  LatencyModeDesc{"loaded", loaded_work}};
  } else if (run_loaded) {
    desc.modes = {LatencyModeDesc{"loaded", loaded_work}};
  }
  desc.first_frame_id = next_frame_id;

  RunMeta meta;
  meta.mode = o.mode;
  meta.backend = o.backend;
  meta.device = o.device;
  meta.command_line = o.command_line;
  meta.created_utc = utc_now_iso8601();
  meta.machine = collect_machine_info();

  // --- performance only ----------------------------------------------------------
  PerformanceDesc pd;
  FrameWorkload perf_work;
  perf_work.passes = 4;
  perf_work.complexity = o.perf_complexity;
  perf_work.width = perf_size->first;
  perf_work.height = perf_size->second;
  perf_work.form = form;
  if (!want_latency) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    pd.first_frame_id = next_frame_id;
    Result<PerformanceReport> perf = run_performance(*device, perf_work, o.perf_frames, pd);
    if (!perf) {
      std::fprintf(stderr, "latlab run: performance mode failed: %s\n",
                   perf.error().message.c_str());
      return kExitRunFailed;
    }
    const nlohmann::ordered_json doc = performance_run_to_json(*perf, di, meta);
    if (o.json) {
      std::printf("%s\n", doc.dump(2).c_str());
    } else {
      std::fputs(format_performance(*perf).c_str(), stdout);
    }
    if (!o.out.empty()) {
      if (Result<void> w = write_file_atomic(o.out, doc.dump(2) + "\n"); !w) {
        std::fprintf(stderr, "latlab run: %s\n", w.error().message.c_str());
        return kExitWriteFailed;
      }
      fmt::print(info, "result written to {}\n", o.out);
    }
    return kExitOk;
  }

  // --- run -------------------------------------------------------------------
  const bool tty = !o.json && isatty(STDOUT_FILENO) == 1;
  LatencyRunEnv env;
  env.device = device.get();
  env.mapper = mapper.get();
  env.time = time.get();
  env.interrupt = &g_interrupted;
  if (tty) {
    env.on_progress = [](const RunProgress& p) {
      if (p.kind == BlockKind::warmup) {
        std::printf("\r\033[K  warm-up %llu/%llu",
                    static_cast<unsigned long long>(p.block_frames_done),
                    static_cast<unsigned long long>(p.block_frames));
      } else {
        std::printf("\r\033[K  %s %s block %u/%u: %llu/%llu frames", std::string(p.mode).c_str(),
                    std::string(to_string(p.kind)).c_str(), p.block + 1, p.blocks,
                    static_cast<unsigned long long>(p.block_frames_done),
                    static_cast<unsigned long long>(p.block_frames));
      }
      std::fflush(stdout);
    };
  }
  const ProcessMemory memory_before = read_process_memory();
  Result<LatencyRun> result = run_latency(desc, env);
  const ProcessMemory memory_after = read_process_memory();
  if (tty) {
    std::printf("\r\033[K");
    std::fflush(stdout);
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (!result) {
    std::fprintf(stderr, "latlab run: %s\n", result.error().message.c_str());
    return kExitUsage;
  }
  const LatencyRun& run = result.value();
  if (run.measured_frames_run() == 0 && run.partial) {
    std::fprintf(stderr, "latlab run: stopped before any measured frame (%s); nothing written\n",
                 run.partial_reason.c_str());
    return kExitRunFailed;
  }

  // --- performance after the latency blocks (--mode all) ------------------------
  std::optional<PerformanceReport> perf_report;
  std::string perf_unavailable;
  if (want_perf && !run.partial) {
    pd.first_frame_id = run.next_frame_id;
    Result<PerformanceReport> perf = run_performance(*device, perf_work, o.perf_frames, pd);
    if (perf) {
      perf_report = std::move(perf.value());
    } else {
      perf_unavailable = "performance mode failed: " + perf.error().message;
    }
  } else if (want_perf) {
    perf_unavailable = "not run: the latency run stopped early";
  }

  // --- report ------------------------------------------------------------------
  meta.memory_before = memory_before;
  meta.memory_after = memory_after;
  uint64_t validation_errors = 0;
  if (const auto* vk = dynamic_cast<const VulkanLatencyDevice*>(device.get());
      vk != nullptr && o.validation) {
    ValidationReport v;
    v.error_count = vk->context().validation_error_count();
    v.messages = vk->context().validation_messages();
    validation_errors = v.error_count;
    meta.validation = std::move(v);
  }
  nlohmann::ordered_json doc = latency_run_to_json(run, meta);
  if (want_loaded) {
    if (calibration) {
      doc["load_calibration"] = load_calibration_to_json(*calibration);
      doc["load_calibration"]["source"] = "calibrated";
    } else if (o.load_complexity > 0) {
      doc["load_calibration"] = {{"source", "given"}, {"complexity", o.load_complexity}};
    } else {
      doc["load_calibration"] = nullptr;
    }
    if (!run_loaded) {
      doc["modes"]["loaded"] = {{"available", false}, {"reason", loaded_unavailable}};
      doc["unavailable"].push_back({{"name", "loaded"}, {"reason", loaded_unavailable}});
    }
  }
  if (want_perf) {
    if (perf_report) {
      doc["modes"]["performance"] = performance_to_json(*perf_report);
    } else {
      doc["modes"]["performance"] = {{"available", false}, {"reason", perf_unavailable}};
      doc["unavailable"].push_back({{"name", "performance"}, {"reason", perf_unavailable}});
    }
  }
  if (o.json) {
    std::printf("%s\n", doc.dump(2).c_str());
  } else {
    std::fputs(format_run_table(run).c_str(), stdout);
    if (want_loaded && !run_loaded)
      std::printf("  Loaded unavailable: %s\n", loaded_unavailable.c_str());
    if (perf_report) std::fputs(format_performance(*perf_report).c_str(), stdout);
    if (want_perf && !perf_report)
      std::printf("  Performance unavailable: %s\n", perf_unavailable.c_str());
  }
  int rc = run.partial ? kExitRunFailed : kExitOk;
  if (want_perf && !perf_report && !run.partial) rc = kExitRunFailed;
  if (!o.out.empty()) {
    if (Result<void> w = write_file_atomic(o.out, doc.dump(2) + "\n"); !w) {
      std::fprintf(stderr, "latlab run: %s\n", w.error().message.c_str());
      rc = kExitWriteFailed;
    } else {
      fmt::print(info, "result written to {}{}\n", o.out, run.partial ? " (partial)" : "");
    }
  }
  if (!o.frames_csv.empty()) {
    if (Result<void> w = write_frames_csv(o.frames_csv, run); !w) {
      std::fprintf(stderr, "latlab run: %s\n", w.error().message.c_str());
      rc = kExitWriteFailed;
    } else {
      fmt::print(info, "per-frame markers written to {}\n", o.frames_csv);
    }
  }
  if (meta.validation) {
    fmt::print(info, "validation errors: {}\n", validation_errors);
    if (validation_errors > 0) {
      for (const std::string& m : meta.validation->messages)
        std::fprintf(stderr, "  %s\n", m.c_str());
      std::fprintf(stderr, "latlab run: the Vulkan validation layer reported %llu errors\n",
                   static_cast<unsigned long long>(validation_errors));
      if (rc == kExitOk) rc = kExitRunFailed;
    }
  }
  if (run.partial)
    std::fprintf(stderr, "latlab run: run incomplete: %s\n", run.partial_reason.c_str());
  return rc;
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

std::function<int()> setup(CLI::App& app) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand(
      "run", "Latency benchmark: a software signal through every stage of a frame");
  sub->add_option("--mode", opts->mode,
                  "baseline | loaded | latency (baseline and loaded, interleaved blocks) | "
                  "performance (fixed workload, GPU ms and fps) | all (latency, then performance)")
      ->check(CLI::IsMember({"baseline", "loaded", "latency", "performance", "all"}))
      ->capture_default_str();
  sub->add_option("--backend", opts->backend, "GPU backend")
      ->check(CLI::IsMember({"vulkan", "cuda", "sim"}))
      ->capture_default_str();
  sub->add_option("--device", opts->device, "Device index or name substring (default: the first)");
  auto* frames =
      sub->add_option("--frames", opts->frames, "Measured frames per latency mode, over all blocks (default: Baseline + Loaded finish in about 30 s)")
          ->check(CLI::Range(1u, 10'000'000u))
          ->capture_default_str();
  auto* seconds =
      sub->add_option("--seconds", opts->seconds, "Measured duration instead of --frames (s)")
          ->check(CLI::Range(0.001, 864000.0));
  frames->excludes(seconds);
  sub->add_option("--seed", opts->seed, "Schedule seed (same seed, same deadlines)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--interval-ms", opts->interval_ms,
                  "Signal interval range MIN-MAX in ms, uniform")
      ->capture_default_str();
  sub->add_option("--blocks", opts->blocks, "Measured blocks")
      ->check(CLI::Range(1u, 100'000u))
      ->capture_default_str();
  sub->add_option("--warmup", opts->warmup, "Warm-up frames, run and discarded")
      ->check(CLI::Range(0u, 1'000'000u))
      ->capture_default_str();
  sub->add_option("--cpu-iterations", opts->cpu_iterations,
                  "CPU simulation step cost (hash rounds)")
      ->check(CLI::Range(0u, 100'000'000u))
      ->capture_default_str();
  sub->add_option("--passes", opts->passes, "GPU passes per frame")
      ->check(CLI::Range(1u, 64u))
      ->capture_default_str();
  sub->add_option("--complexity", opts->complexity, "Per-pixel cost of each pass (1..4096)")
      ->check(CLI::Range(1u, 4096u))
      ->capture_default_str();
  sub->add_option("--size", opts->size, "Render target WxH")->capture_default_str();
  sub->add_option("--form", opts->form, "Workload form")
      ->check(CLI::IsMember({"compute", "fragment"}))
      ->capture_default_str();
  sub->add_option("--load-target-ms", opts->load_target_ms,
                  "Loaded: GPU time per frame the load is calibrated to (ms)")
      ->capture_default_str();
  sub->add_option("--load-tolerance", opts->load_tolerance,
                  "Loaded: accepted |median - target| / target of the calibration")
      ->check(CLI::Range(0.001, 0.5))
      ->capture_default_str();
  sub->add_option("--load-size", opts->load_size, "Loaded: render target WxH")
      ->capture_default_str();
  sub->add_option("--load-complexity", opts->load_complexity,
                  "Loaded: use this complexity (1..4096) instead of calibrating")
      ->check(CLI::Range(1u, 4096u));
  sub->add_option("--perf-complexity", opts->perf_complexity,
                  "Performance: complexity of the fixed 4-pass workload")
      ->check(CLI::Range(1u, 4096u))
      ->capture_default_str();
  sub->add_option("--perf-size", opts->perf_size, "Performance: render target WxH")
      ->capture_default_str();
  sub->add_option("--perf-frames", opts->perf_frames, "Performance: measured frames")
      ->check(CLI::Range(1u, 1'000'000u))
      ->capture_default_str();
  sub->add_option("--out", opts->out, "JSON result file (written atomically; '' for none)")
      ->capture_default_str();
  sub->add_option("--frames-csv", opts->frames_csv, "Also write per-frame markers as CSV");
  sub->add_flag("--bare", opts->bare,
                "After each block, run a bare loop (same path, no instrumentation) and a raw "
                "clock_nanosleep loop");
  sub->add_flag("--keep-timer-slack", opts->keep_timer_slack,
                "Do not lower the generator thread's timer slack");
  sub->add_flag("--json", opts->json, "Print the JSON result on stdout instead of the table");
  sub->add_flag("--validation", opts->validation, "Vulkan: enable the Khronos validation layer");
  sub->add_option("--time-scale", opts->time_scale,
                  "Sim backend only: run the clock this many times faster")
      ->check(CLI::Range(int64_t{1}, int64_t{10'000}))
      ->capture_default_str();
  return [opts] {
    opts->command_line = own_command_line();
    return run_command(*opts);
  };
}

const RegisterCommand kRegister{{"run", setup, 20}};

}  // namespace
}  // namespace latlab::cli
