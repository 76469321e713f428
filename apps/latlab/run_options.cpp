// latlab run: options -> checked plan.
#include "run_options.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "cli_options.hpp"
#include "cli_values.hpp"
#include "latlab/host_clock.hpp"

namespace latlab::cli {
namespace {

WorkloadForm form_of(const RunOptions& o) {
  return o.form == "fragment" ? WorkloadForm::fragment : WorkloadForm::compute;
}

// The schedule, frame count and Baseline workload (--interval-ms, --seconds,
// --size and the plain numbers).
Result<LatencyRunDesc> latency_desc(const RunOptions& o) {
  std::string why;
  const auto interval = parse_interval_ms(o.interval_ms, why);
  if (!interval) return make_error(why);
  LatencyRunDesc desc;
  desc.schedule.seed = o.seed;
  desc.schedule.min_interval_ns = interval->first;
  desc.schedule.max_interval_ns = interval->second;
  desc.frames = o.frames;
  if (o.seconds > 0) {
    const double mean_ns = 0.5 * static_cast<double>(interval->first + interval->second);
    const double n = std::ceil(o.seconds * 1e9 / mean_ns);
    if (n > 10'000'000) {
      return make_error(
          fmt::format("--seconds {:.1f} gives more than 10 million frames", o.seconds));
    }
    desc.frames = static_cast<uint32_t>(std::max(1.0, n));
  }
  desc.blocks = o.blocks;
  desc.warmup_frames = o.warmup;
  desc.cpu_step_iterations = o.cpu_iterations;
  desc.timer_slack_ns = o.keep_timer_slack ? 0 : 1;
  const auto size = parse_run_size(o.size);
  if (!size) {
    return make_error("--size '" + o.size + "' is not WxH with sides in 1..16384 (e.g. 64x64)");
  }
  desc.workload.passes = o.passes;
  desc.workload.complexity = o.complexity;
  desc.workload.width = size->first;
  desc.workload.height = size->second;
  desc.workload.form = form_of(o);
  desc.bare_comparison = o.bare;
  desc.poll_completion = poll_observer_on(o.poll);
  desc.poll_limit_ns = static_cast<int64_t>(o.poll_limit_us * 1000.0);
  desc.turn_warmup_ns = static_cast<int64_t>(o.turn_warmup_ms.value_or(0.0) * 1e6);
  return desc;
}

// The four-pass workload of Loaded or Performance at `size`.
FrameWorkload four_pass_work(std::pair<uint32_t, uint32_t> size, uint32_t complexity,
                             WorkloadForm form) {
  FrameWorkload w;
  w.passes = 4;
  w.complexity = complexity;
  w.width = size.first;
  w.height = size.second;
  w.form = form;
  return w;
}

}  // namespace

namespace {

// What the plan copies from the options beside the checked parts.
void copy_settings(const RunOptions& o, RunCommand& c) {
  RunPlan& p = c.plan;
  p.mode = o.mode;
  p.backend = o.backend;
  p.device = o.device;
  p.load_size_text = o.load_size;
  p.load_complexity = o.load_complexity;
  p.load_target_ms = o.load_target_ms;
  p.load_tolerance = o.load_tolerance;
  p.perf_frames = o.perf_frames;
  p.calibrator.refresh_interval_ns = static_cast<int64_t>(o.clock_refresh_ms * 1e6);
  p.turn_warmup_given = o.turn_warmup_ms.has_value();
  p.per_frame = o.per_frame || !o.report.empty();
  p.validation = o.validation;
  c.outputs = RunOutputs{o.out, o.frames_csv, o.report, o.json, o.use_store, o.store};
  c.form = o.form;
  c.poll = o.poll;
  c.clock_refresh_ms = o.clock_refresh_ms;
  c.time_scale = o.time_scale;
  c.sim_fail_device = o.sim_fail_device;
  c.present = o.present;
  c.present_desc.hold_ns = std::llround(o.present_hold_ms * 1e6);
  c.present_desc.poll_period_ns = std::llround(o.present_poll_us * 1e3);
  c.command_line = o.command_line;
}

// The outputs that need latency frames (the store, the per-frame outputs)
// against a plan without a latency mode; the store's location.
Result<void> check_latency_outputs(const RunOptions& o, const RunPlan& p) {
  if (o.use_store && !p.want_latency()) {
    return make_error("--store keeps latency runs; --mode performance has none to store");
  }
  if (o.use_store) {
    if (Result<void> s = check_store_location(o.store); !s) return s.error();
  }
  if (p.want_latency()) return {};
  // Performance mode's frames have no markers; their GPU times are
  // summarised in modes.performance.
  const char* flag = !o.frames_csv.empty() ? "--frames-csv"
                     : !o.report.empty()   ? "--report"
                     : o.per_frame         ? "--per-frame"
                                           : nullptr;
  if (flag == nullptr) return {};
  return make_error(fmt::format(
      "{} is about latency frames; --mode performance has none (its GPU times per frame are "
      "summarised in the result's modes.performance): use --mode all, or leave {} out",
      flag, flag));
}

}  // namespace

Result<RunCommand> plan_run(const RunOptions& o) {
  Result<LatencyRunDesc> desc = latency_desc(o);
  if (!desc) return desc.error();
  RunCommand c;
  copy_settings(o, c);
  RunPlan& p = c.plan;
  p.desc = std::move(desc.value());
  p.want_baseline = o.mode == "baseline" || o.mode == "latency" || o.mode == "all";
  p.want_loaded = o.mode == "loaded" || o.mode == "latency" || o.mode == "all";
  p.want_perf = o.mode == "performance" || o.mode == "all";
  if (o.bare && p.want_baseline && p.want_loaded) {
    return make_error("--bare runs with one latency mode: add --mode baseline or --mode loaded");
  }
  const bool load_auto = o.load_size == "auto";  // starts at the largest size of the list
  const auto load_size = parse_run_size(load_auto ? "1920x1080" : o.load_size);
  const auto perf_size = parse_run_size(o.perf_size);
  if (!load_size || !perf_size) {
    return make_error(fmt::format("--{} '{}' is not WxH with sides in 1..16384 (e.g. 1920x1080){}",
                                  load_size ? "perf-size" : "load-size",
                                  load_size ? o.perf_size : o.load_size,
                                  load_size ? "" : " or auto"));
  }
  if (!(o.load_target_ms > 0) || !std::isfinite(o.load_target_ms)) {
    return make_error("--load-target-ms must be a positive number of ms");
  }
  if (Result<void> v = validate(p.desc); !v) return v.error();
  if (o.time_scale != 1 && !backend_info(o.backend).time_scale) {
    return make_error("--time-scale only works with --backend sim (a GPU runs on real time)");
  }
  if (Result<void> outputs = check_latency_outputs(o, p); !outputs) return outputs.error();
  if (o.load_complexity > 0 && !p.want_loaded) {
    return make_error(fmt::format(
        "--load-complexity sets the load of the Loaded mode; --mode {} has no Loaded mode (use "
        "--mode loaded, latency or all, or leave --load-complexity out)",
        o.mode));
  }
  // The default complexity until calibration (or --load-complexity) sets it.
  p.loaded_work = four_pass_work(*load_size, FrameWorkload{}.complexity, form_of(o));
  p.perf_work = four_pass_work(*perf_size, o.perf_complexity, form_of(o));
  p.load_size_auto = load_auto;
  return c;
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

void add_present_options(CLI::App* sub, RunOptions* opts) {
  sub->add_flag("--present", opts->present,
                "Vulkan: show every latency frame in a window (lowest-latency present mode) and "
                "time present and screen: on $WAYLAND_DISPLAY when set, the compositor's "
                "wp_presentation times; else on X11 ($DISPLAY), the X server framebuffer "
                "observer. Without a display, present is listed unavailable and the run goes on");
  sub->add_option("--present-poll-us", opts->present_poll_us,
                  "With --present: the framebuffer observer's polling period (us)")
      ->check(real_in(50.0, 100'000.0))
      ->capture_default_str();
  sub->add_option("--present-hold-ms", opts->present_hold_ms,
                  "With --present, a test knob: hold each frame's copy on the GPU this long after "
                  "the present call, so it reaches the screen that much later")
      ->check(real_in(0.0, 1000.0))
      ->capture_default_str();
}

RunEcho run_echo(const RunCommand& c) {
  return {&c.plan, c.form, c.poll, usable_cpus(), c.clock_refresh_ms, c.time_scale, &c.outputs};
}

}  // namespace latlab::cli
