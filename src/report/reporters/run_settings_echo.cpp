// What `latlab run` says on the console besides its result (reporters.hpp):
// the settings echo, the engine's lines and progress, why a run stopped.
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "latlab/host_clock.hpp"
#include "report/reporters/reporters.hpp"

namespace latlab {
namespace {

// The workload of each mode the plan runs.
void print_workloads(std::FILE* info, const RunPlan& plan, const std::string& form) {
  const LatencyRunDesc& desc = plan.desc;
  if (plan.want_baseline) {
    fmt::print(info, "  baseline workload: passes {}  complexity {}  size {}x{}  form {}\n",
               desc.workload.passes, desc.workload.complexity, desc.workload.width,
               desc.workload.height, form);
  }
  const FrameWorkload& lw = plan.loaded_work;
  if (plan.want_loaded && plan.load_complexity > 0) {
    fmt::print(info, "  loaded workload: passes 4  complexity {} (given)  size {}x{}  form {}\n",
               plan.load_complexity, lw.width, lw.height, form);
  } else if (plan.want_loaded) {
    fmt::print(info,
               "  loaded workload: passes 4  complexity calibrated to {} ms GPU  size {}x{}  "
               "form {}\n",
               plan.load_target_ms, lw.width, lw.height, form);
  }
  if (plan.want_perf) {
    fmt::print(info,
               "  performance: {} frames, passes 4  complexity {}  size {}x{}  form {}, "
               "offscreen\n",
               plan.perf_frames, plan.perf_work.complexity, plan.perf_work.width,
               plan.perf_work.height, form);
  }
}

// The poll observer, the turn warm-up and the clock model's refresh.
void print_observers(std::FILE* info, const RunEcho& c) {
  const LatencyRunDesc& desc = c.plan->desc;
  if (desc.poll_completion) {
    fmt::print(
        info,
        "  poll observer on (a thread spinning on each frame's completion, limit {:.0f} us)\n",
        static_cast<double>(desc.poll_limit_ns) / 1e3);
  } else {
    fmt::print(info, "  poll observer off (--poll {}{})\n", c.poll,
               c.poll == "auto" ? ", " + std::to_string(c.usable_cpus) + " CPUs" : std::string());
  }
  if (desc.turn_warmup_ns > 0) {
    fmt::print(info, "  turn warm-up: {:.0f} ms of unrecorded frames before every block\n",
               static_cast<double>(desc.turn_warmup_ns) / 1e6);
  }
  if (c.clock_refresh_ms != 1000) {
    fmt::print(info, "  clock model refresh: {}\n",
               c.clock_refresh_ms > 0 ? fmt::format("every {:.0f} ms", c.clock_refresh_ms)
                                      : std::string("none (the start-up calibration only)"));
  }
}

}  // namespace

void print_run_settings(std::FILE* info, const RunEcho& c, const DeviceInfo& device) {
  const RunPlan& plan = *c.plan;
  const LatencyRunDesc& desc = plan.desc;
  fmt::print(info, "latlab run: mode {}, backend {}, device \"{}\" ({})\n", plan.mode,
             device.backend, device.name, device.driver);
  if (plan.want_latency()) {
    fmt::print(
        info,
        "  seed {}, intervals {:.3f}-{:.3f} ms (uniform), {} frames in {} blocks after {} "
        "warm-up frames{}\n",
        desc.schedule.seed, static_cast<double>(desc.schedule.min_interval_ns) / 1e6,
        static_cast<double>(desc.schedule.max_interval_ns) / 1e6, desc.frames, desc.blocks,
        desc.warmup_frames,
        plan.want_baseline && plan.want_loaded ? " per mode, modes in interleaved blocks" : "");
  }
  print_workloads(info, plan, c.form);
  fmt::print(info, "  cpu step {} iterations, timer slack {}{}{}\n", desc.cpu_step_iterations,
             desc.timer_slack_ns > 0 ? "1 ns requested" : "unchanged",
             plan.validation && plan.backend == Backend::vulkan ? ", Vulkan validation on" : "",
             desc.bare_comparison ? ", bare-loop and raw-sleep comparison blocks" : "");
  print_observers(info, c);
  if (c.time_scale != 1) fmt::print(info, "  sim clock accelerated x{}\n", c.time_scale);
  fmt::print(info, "  host clock {}, result -> {}{}\n", kHostClockName,
             c.outputs->out.empty() ? "(none)" : c.outputs->out,
             c.outputs->frames_csv.empty() ? "" : ", frames -> " + c.outputs->frames_csv);
  std::fflush(info);
}

namespace {

void print_progress(const RunProgress& p) {
  if (p.kind == BlockKind::warmup) {
    std::printf("\r\033[K  warm-up %llu/%llu", static_cast<unsigned long long>(p.block_frames_done),
                static_cast<unsigned long long>(p.block_frames));
  } else {
    std::printf("\r\033[K  %s %s block %u/%u: %llu/%llu frames", std::string(p.mode).c_str(),
                std::string(to_string(p.kind)).c_str(), p.block + 1, p.blocks,
                static_cast<unsigned long long>(p.block_frames_done),
                static_cast<unsigned long long>(p.block_frames));
  }
  std::fflush(stdout);
}

}  // namespace

RunHooks console_run_hooks(std::FILE* info, bool progress, const std::atomic<bool>* interrupt) {
  RunHooks h;
  h.info = [info](const std::string& line) {
    std::fprintf(info, "%s\n", line.c_str());
    std::fflush(info);
  };
  if (progress) {
    h.progress = print_progress;
    h.progress_done = [] {
      std::printf("\r\033[K");
      std::fflush(stdout);
    };
  }
  h.interrupt = interrupt;
  return h;
}

void print_run_stop(const RunOutcome& out) {
  if (out.stop == RunStop::none) return;
  if (out.stop == RunStop::nothing_measured) {
    std::fprintf(stderr, "latlab run: stopped before any measured frame (%s); nothing written\n",
                 out.why.c_str());
  } else {
    std::fprintf(stderr, "latlab run: %s\n", out.why.c_str());
  }
}

}  // namespace latlab
