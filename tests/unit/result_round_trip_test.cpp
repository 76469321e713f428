// The typed result and its JSON: a RunResult written by the JSON reporter
// and read back by the reader compares equal to the original, for the whole
// document. Generated results (seeded: one device with present path, bare
// comparison, clock model, bookkeeping, Loaded calibrated, given or
// unavailable, Performance, per-frame series; Performance alone; several
// devices with failed and partial sections; captures) read back as exactly
// the RunResult that was written; real runs of the sim backend (which also
// hold per-frame markers, not in the document) give back the same document
// byte for byte and a result that reads back as itself. The HTML report of
// the result read back is the report of the original. The latency score
// (none, none with a reason, or a value) is part of every latency run.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "latlab/bench/run_result.hpp"
#include "report/html/report_html.hpp"
#include "report/result_json.hpp"
#include "report/result_reader.hpp"
#include "report/score_report.hpp"
#include "unit/sim_result_doc.hpp"

namespace latlab {
namespace {

// Seeded generator of result values.
class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  uint64_t below(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng_); }
  uint32_t below32(uint32_t n) { return static_cast<uint32_t>(below(n)); }
  int64_t ns() { return static_cast<int64_t>(below(4'000'000'000'000)); }
  bool coin() { return below(2) == 1; }
  double us() { return std::uniform_real_distribution<double>(0.0, 1e5)(rng_); }
  std::string text(const char* prefix) { return prefix + std::to_string(below(1000)); }

  // count 0 (statistics null in the JSON), 1 (no stddev) or more.
  Distribution distribution() {
    Distribution d;
    d.count = below(3) == 0 ? 0 : 1 + below(3) * below(500);
    d.missing = below(4) == 0 ? below(50) : 0;
    if (d.count == 0) return d;
    d.min = us() - 5e4;  // negative values too (gpu_end_to_present_start)
    d.p50 = d.min + us();
    d.p90 = d.p50 + us();
    d.p95 = d.p90 + us();
    d.p99 = d.p95 + us();
    d.p999 = d.p99 + us();
    d.max = d.p999 + us();
    d.mean = (d.min + d.max) / 3;
    if (d.count > 1) d.stddev = us() / 3;
    return d;
  }

  SeriesDistributions series() {
    SeriesDistributions s{};
    for (Distribution& d : s) d = distribution();
    return s;
  }

  MissingBreakdown missing() {
    MissingBreakdown m;
    for (uint64_t* v : {&m.gpu_not_ok, &m.gpu_unmapped, &m.fence_not_ok, &m.poll_limit,
                        &m.poll_not_ok, &m.device_error})
      *v = below(4) == 0 ? below(20) : 0;
    for (uint64_t& c : m.gpu_status_counts) c = below(3) == 0 ? below(20) : 0;
    return m;
  }

 private:
  std::mt19937_64 rng_;
};

FrameWorkload workload(Gen& g) {
  FrameWorkload w;
  w.passes = 1 + g.below32(4);
  w.complexity = 1 + g.below32(4096);
  w.width = 16 + g.below32(2000);
  w.height = 16 + g.below32(1000);
  w.form = g.coin() ? WorkloadForm::fragment : WorkloadForm::compute;
  return w;
}

DeviceInfo device(Gen& g) {
  DeviceInfo d;
  d.backend = g.coin() ? "sim" : "vulkan";
  d.name = g.text("device ");
  d.driver = g.text("driver ");
  d.ticks.period_num = 1 + g.below(100);
  d.ticks.period_den = 1 + g.below(7);
  d.ticks.valid_bits = 32 + g.below32(33);
  d.can_time = g.coin();
  d.calibration_domain = g.coin() ? "CLOCK_MONOTONIC" : "";
  d.calibration_estimated = g.coin();
  if (g.coin()) d.missing.push_back({"calibrated_timestamps", g.text("none ")});
  return d;
}

ClockModelReport clock_model(Gen& g) {
  ClockModelReport c;
  c.available = g.below(4) != 0;
  if (c.available) {
    c.drift_ppm = g.us() / 1e3 - 50;
    c.drift_error_ppm = g.us() / 1e4;
    c.error_bound_ns = static_cast<int64_t>(g.below(10'000));
  } else {
    c.reason = g.text("no pairs ");
  }
  c.source = c.available ? "calibrator" : "none";
  c.frame_mapping = c.available ? "interpolated" : "";
  c.pairs_used = g.below32(20);
  c.pairs_accepted = g.below(100);
  c.refreshes = g.below(30);
  c.max_refresh_cost_ns = g.ns() % 100'000;
  c.refresh_interval_ns = 1'000'000'000;
  c.estimated = g.coin();
  c.block_end_pairs = g.below(10);
  c.frames_between_pairs = g.below(1000);
  c.interpolation_misfit_ns = static_cast<int64_t>(g.below(50));
  for (uint64_t i = g.below(4); i > 0; --i)
    c.pairs.push_back({g.below(UINT32_MAX), g.ns(), static_cast<int64_t>(g.below(900)), g.coin()});
  return c;
}

BlockResult path_block(Gen& g, BlockKind kind, uint32_t index, uint32_t mode) {
  BlockResult b;
  b.kind = kind;
  b.index = index;
  b.mode = mode;
  b.first_device_frame = g.below(100'000);
  b.frames_planned = g.below(1000);
  b.frames_run = g.below(1000);
  b.start_ns = g.ns();
  b.end_ns = b.start_ns + g.ns() % 1'000'000'000;
  b.series = g.series();
  b.missing = g.missing();
  b.consumer_behind = g.below(5);
  b.generator_cpu_ns = g.ns() % 10'000'000;
  b.turn_warmup_frames = g.below(3) == 0 ? g.below(40) : 0;
  b.turn_warmup_wall_ns = b.turn_warmup_frames > 0 ? g.ns() % 300'000'000 : 0;
  if (g.below(5) != 0) b.thread_preparation_ns = g.ns() % 30'000'000;
  if (kind == BlockKind::bare_loop)
    b.bare_latency = b.series[static_cast<size_t>(Series::fence_latency)];
  return b;
}

// After each measured block (--bare): its bare-loop and raw-sleep blocks.
void bare_blocks(Gen& g, uint32_t index, LatencyRun& run) {
  run.blocks.push_back(path_block(g, BlockKind::bare_loop, index, 0));
  BlockResult raw;
  raw.kind = BlockKind::raw_sleep;
  raw.index = index;
  raw.frames_run = g.below(1000);
  raw.raw_lateness = g.distribution();
  raw.turn_warmup_frames = 0;
  run.blocks.push_back(raw);
}

PresentInfo present(Gen& g, size_t modes, LatencyRun& run) {
  PresentInfo p;
  p.api = "vulkan";
  p.surface = g.text("VK_KHR_xcb_surface, window 256x128 on :");
  p.present_mode = "mailbox";
  p.modes_offered = {"fifo", "mailbox"};
  p.swapchain_images = 1 + g.below32(4);
  p.image_content = "frame-id pattern";
  p.hold_ns = g.coin() ? 0 : 2'000'000;
  p.present_wait = g.coin();
  if (!p.present_wait) p.present_wait_reason = g.text("no present_wait ");
  for (const char* name : {"x11_framebuffer", "vk_google_display_timing"}) {
    ScreenObserverInfo o;
    o.name = name;
    o.observes = g.text("what ");
    o.error = g.text("error ");
    o.available = g.coin();
    if (!o.available) o.reason = g.text("why not ");
    if (o.available && g.coin()) {
      o.poll_period_ns = 500'000;
      o.error_p50_ns = 1 + g.ns() % 500'000;
      o.error_bound_ns = 1 + g.ns() % 900'000;
      o.polls = g.below(10'000);
      o.unreadable_polls = g.below(5);
      o.frames_seen = g.below(1000);
      o.cpu_ns = g.ns() % 1'000'000'000;
      o.wall_ns = g.ns() % 1'000'000'000;
      o.read_p50_ns = 1 + g.ns() % 90'000;
      o.read_p99_ns = 1 + g.ns() % 190'000;
    }
    p.observers.push_back(o);
  }
  run.present_errors = g.below(3);
  if (run.present_errors > 0) run.present_first_error = "VK_ERROR_OUT_OF_DATE_KHR";
  for (size_t m = 0; m < modes; ++m) {
    PresentDistributions& d = run.modes[m].present;
    for (Distribution& s : d.stages) s = g.distribution();
    d.screen.resize(p.observers.size());
    for (size_t o = 0; o < p.observers.size(); ++o) {
      if (!p.observers[o].available) continue;
      for (Distribution& s : d.screen[o]) s = g.distribution();
    }
  }
  return p;
}

LatencyModeResult mode(Gen& g, std::string name, const FrameWorkload& w) {
  LatencyModeResult m;
  m.name = std::move(name);
  m.workload = w;
  m.total = g.series();
  m.measured_frames = g.below(10'000);
  m.total_missing = g.missing();
  m.consumer_behind = g.below(5);
  m.bookkeeping.frames_overlapped = g.below(20);
  m.bookkeeping.overlap = g.distribution();
  m.bookkeeping.core_latency_overlapped = g.distribution();
  m.bookkeeping.core_latency_clear = g.distribution();
  if (m.name == "loaded" && g.coin()) {
    GpuTargetCheck c;
    c.target = {8.333333, 0.02};
    if (g.coin()) {
      c.measured_ms = g.us() / 1e4;
      c.error_fraction = (*c.measured_ms - 8.333333) / 8.333333;
      c.off_target = g.coin();
    }
    if (g.coin()) {
      WarmupCheck& check = c.warmup_check.emplace();
      check.frames_used = g.below(50);
      if (g.coin()) check.median_ms = g.us() / 1e4;
      check.complexity_before = 1 + g.below32(4096);
      check.complexity_after = 1 + g.below32(4096);
      check.outcome = g.text("warm-up median ");
    }
    m.gpu_target = c;
  }
  return m;
}

// The settings part of a run: its description, as the document holds it.
void settings(Gen& g, LatencyRun& run) {
  LatencyRunDesc& d = run.desc;
  d.schedule.seed = g.below(1'000'000);
  d.schedule.min_interval_ns = 1'000'000 + static_cast<int64_t>(g.below(8'000'000));
  d.schedule.max_interval_ns =
      d.schedule.min_interval_ns + static_cast<int64_t>(g.below(4'000'000));
  d.blocks = 1 + g.below32(4);
  d.frames = d.blocks * (1 + g.below32(100));
  d.warmup_frames = g.below32(200);
  d.cpu_step_iterations = g.below32(10'000);
  d.bare_comparison = g.below(3) == 0;
  d.poll_completion = g.coin();
  if (d.poll_completion) d.poll_limit_ns = 1 + static_cast<int64_t>(g.below(20'000'000));
  d.block_lead_ns = static_cast<int64_t>(g.below(30'000'000));
  d.turn_warmup_ns = g.coin() ? 0 : 250'000'000;
  run.time_source = g.coin() ? "real" : "virtual";
  run.execution = g.coin() ? "threads" : "lockstep";
  run.timer_slack.requested = g.coin();
  if (run.timer_slack.requested) run.timer_slack.requested_ns = 1;
  run.timer_slack.previous_ns = g.coin() ? -1 : 50'000;
  run.timer_slack.obtained_ns = g.coin() ? -1 : 1;
  run.timer_slack.applied = g.coin();
  if (!run.timer_slack.applied) run.timer_slack.error = g.text("EPERM ");
}

// Every block in run order: per mode its warm-up, then the measured blocks
// interleaved across modes, each followed by its bare-loop and raw-sleep blocks.
void blocks(Gen& g, LatencyRun& run) {
  const auto modes = static_cast<uint32_t>(run.modes.size());
  for (uint32_t m = 0; m < modes; ++m) {
    if (g.below(4) != 0) run.blocks.push_back(path_block(g, BlockKind::warmup, 0, m));
  }
  for (uint32_t b = 0; b < run.desc.blocks; ++b) {
    for (uint32_t m = 0; m < modes; ++m) {
      run.blocks.push_back(path_block(g, BlockKind::measured, b, m));
      if (run.desc.bare_comparison) bare_blocks(g, b, run);
    }
  }
  for (uint32_t i = 0; i < run.blocks.size(); ++i) run.blocks[i].order = i;
}

void diagnostics(Gen& g, LatencyRun& run) {
  for (uint64_t i = g.below(4); i > 0; --i) {
    const int64_t start = g.ns();
    run.bookkeeping.push_back({start, start + g.ns() % 1'000'000});
  }
  run.generator_cpu_ns = g.ns() % 1'000'000'000;
  run.generator_wall_ns = g.ns();
  run.cpu_checksum = g.below(UINT64_MAX);
  run.polled = run.desc.poll_completion && g.coin();
  if (!run.desc.bare_comparison) return;
  run.reference_what = g.coin() ? g.text("one command buffer ") : "";
  run.reference_total = g.series();
  run.reference_missing = g.missing();
  run.bare_total = run.reference_total[static_cast<size_t>(Series::fence_latency)];
  run.raw_total = g.distribution();
  run.raw_sleep_cpu_ns = g.ns() % 1'000'000;
  run.raw_sleep_wall_ns = 1 + g.ns();
  run.core_latency_without_deliberate = g.distribution();
}

// A latency run with one or two modes; a "loaded" mode when and only when
// Loaded runs (as the engine makes them); the engine's invariants kept (the run's
// totals are its first mode's, its description lists its modes).
LatencyRun latency_run(Gen& g, bool loaded_runs) {
  const bool two_modes = loaded_runs && g.coin();
  LatencyRun run;
  settings(g, run);
  run.device = device(g);
  run.clock_model = clock_model(g);
  const uint32_t modes = two_modes ? 2 : 1;
  for (uint32_t mi = 0; mi < modes; ++mi) {
    const bool baseline = mi == 0 && (two_modes || !loaded_runs);
    run.modes.push_back(mode(g, baseline ? "baseline" : "loaded", workload(g)));
    const LatencyModeResult& m = run.modes.back();
    run.desc.modes.push_back({m.name, m.workload, std::nullopt, std::nullopt});
    if (m.gpu_target) run.desc.modes.back().gpu_target = m.gpu_target->target;
  }
  run.desc.workload = run.modes[0].workload;
  run.total = run.modes[0].total;
  run.total_missing = run.modes[0].total_missing;
  run.consumer_behind = run.modes[0].consumer_behind;
  blocks(g, run);
  diagnostics(g, run);
  if (g.below(3) == 0) run.present = present(g, modes, run);
  run.partial = g.below(4) == 0;
  if (run.partial) run.partial_reason = g.text("interrupted at frame ");
  if (g.coin()) run.unavailable.push_back({"calibrated_timestamps", g.text("no extension ")});
  return run;
}

LoadCalibrationReport calibration(Gen& g) {
  LoadCalibrationReport c;
  c.target_ms = 8.333333;
  c.tolerance = 0.02;
  c.width = 640;
  c.height = 360;
  c.passes = 4;
  c.form = g.coin() ? WorkloadForm::fragment : WorkloadForm::compute;
  c.complexity = 1 + g.below32(4096);
  c.verified = g.coin();
  c.within_tolerance = c.verified && g.coin();
  c.median_ms = g.us() / 1e4;
  c.error_fraction = g.us() / 1e6;
  if (c.verified) c.p5_ms = g.us() / 1e4;
  c.gpu_ms = g.distribution();
  c.outcome = g.text("within tolerance after ");
  if (g.coin()) c.noise_fraction = g.us() / 1e6;
  c.noise_limited = g.coin();
  if (c.verified) c.uncertainty_fraction = g.us() / 1e6;
  if (g.coin()) c.step_ms = g.us() / 1e7;
  c.granularity_limited = g.coin();
  if (g.coin()) {
    c.fit_fixed_ms = g.us() / 1e5;
    c.fit_ms_per_complexity = g.us() / 1e7;
  }
  for (uint32_t i = g.below32(3); i > 0; --i) {
    LoadCalibrationStep s;
    s.index = i;
    s.kind = g.coin() ? StepKind::verify : StepKind::search;
    s.complexity = 1 + g.below32(4096);
    s.median_ms = g.us() / 1e4;
    s.repeat_medians_ms = {g.us() / 1e4, g.us() / 1e4};
    if (g.coin()) s.spread_fraction = g.us() / 1e6;
    s.frames_submitted = g.below32(40);
    s.why = g.text("bracket ");
    c.steps.push_back(s);
  }
  c.evaluations = static_cast<uint32_t>(c.steps.size());
  c.frames_submitted = g.below(100);
  c.wall_ns = g.ns() % 10'000'000'000;
  return c;
}

LoadedOutcome loaded_outcome(Gen& g) {
  LoadedOutcome l;
  l.asked = g.coin();
  if (!l.asked) return l;
  l.size.asked = g.coin() ? "auto" : "640x360";
  l.size.used = g.coin() ? "640x360" : "";
  l.size.why = g.text("why ");
  if (g.coin()) l.size.tried.emplace_back("1920x1080", g.text("below reach "));
  switch (g.below(3)) {
    case 0:
      l.calibration = calibration(g);
      break;
    case 1:
      l.given_complexity = 1 + g.below32(4096);
      break;
    default:
      break;
  }
  // Loaded runs at a calibrated or given complexity only.
  l.runs = (l.calibration || l.given_complexity > 0) && g.coin();
  if (!l.runs) l.unavailable = g.text("load calibration failed: ");
  return l;
}

PerformanceReport performance_report(Gen& g) {
  PerformanceReport r;
  r.work = workload(g);
  r.frames = g.below32(300);
  r.gpu_ms = g.distribution();
  r.fps = g.distribution();
  r.gpu_timeline_fps = g.coin() ? 0.0 : g.us();
  r.wall_ns = g.ns() % 10'000'000'000;
  return r;
}

PerformanceOutcome performance_outcome(Gen& g) {
  PerformanceOutcome p;
  p.asked = g.coin();
  if (!p.asked) return p;
  if (g.coin()) {
    p.report = performance_report(g);
    if (g.below(4) == 0) p.interrupted = p.report->partial_reason = g.text("interrupted ");
  } else {
    p.unavailable = g.text("performance mode failed: ");
  }
  return p;
}

RunMeta meta(Gen& g) {
  RunMeta m;
  m.mode = g.coin() ? "latency" : "baseline";
  m.backend = g.coin() ? "sim" : "vulkan";
  m.device = g.coin() ? "" : "0";
  m.command_line = g.text("latlab run --seed ");
  m.created_utc = "2026-01-31T12:00:00Z";
  m.tool_version = g.coin() ? kVersion : "0.0.9";
  m.machine.hostname = g.text("host");
  m.machine.os = g.coin() ? "" : "Debian GNU/Linux 12";  // "" is null in the JSON
  m.machine.kernel = "Linux 6.1";
  m.machine.arch = "x86_64";
  m.machine.cpu_model = g.coin() ? "" : "cpu";
  m.machine.logical_cpus = 1 + g.below32(256);
  m.memory_before.rss_kb = g.coin() ? -1 : 1000;
  m.memory_after.rss_kb = g.coin() ? -1 : 2000;
  m.memory_after.peak_rss_kb = g.coin() ? -1 : 3000;
  if (g.coin()) m.validation = ValidationReport{g.below(3), {g.text("VUID-"), g.text("VUID-")}};
  return m;
}

PerFrameSeries per_frame(Gen& g, const LatencyRun& run) {
  PerFrameSeries p;
  for (const LatencyModeResult& m : run.modes) {
    PerFrameMode& pm = p.modes.emplace_back();
    pm.mode = m.name;
    for (uint64_t i = g.below(30); i > 0; --i) {
      pm.frame_id.push_back(g.below(100'000));
      pm.block_index.push_back(g.below32(4));
      pm.deadline_ns.push_back(g.coin() ? std::optional<int64_t>(g.ns()) : std::nullopt);
      for (auto& column : pm.series_ns)
        column.push_back(g.below(5) == 0 ? std::nullopt
                                         : std::optional<int64_t>(g.ns() % 1'000'000 - 1000));
    }
  }
  return p;
}

// A latency run's score: none (nobody scored it), none with a reason, or a
// value with its interval, components and bootstrap.
std::optional<LatencyScore> score(Gen& g) {
  const uint64_t kind = g.below(3);
  if (kind == 0) return std::nullopt;
  LatencyScore s;
  if (kind == 1) {
    s.unavailable_reason = g.text("the run has no Loaded mode ");
    return s;
  }
  s.value = 1 + g.us() / 10;
  s.ci_low = *s.value * (0.5 + g.us() / 2e5);
  s.ci_high = *s.value * (1 + g.us() / 1e5);
  for (const char* mode : {"baseline", "loaded"})
    for (const char* stat : {"p50", "p99"}) s.components.push_back({mode, stat, 1 + g.us(), 0.25});
  s.resamples = 1 + g.below32(5000);
  s.seed = g.below(uint64_t{1} << 40);
  s.baseline_blocks = 2 + g.below32(20);
  s.loaded_blocks = 2 + g.below32(20);
  return s;
}

// A one-device result: a latency run (with Loaded's and Performance's
// outcomes and the per-frame series) or Performance alone.
RunResult one_device(Gen& g) {
  RunResult r;
  r.meta = meta(g);
  if (g.below(5) == 0) {  // Performance alone
    r.meta.validation.reset();
    r.meta.memory_before = r.meta.memory_after = ProcessMemory{};
    r.device.backend = "sim";
    r.device.name = g.text("device ");
    r.device.driver = g.text("driver ");
    if (g.coin()) r.device.missing.push_back({"calibrated_timestamps", g.text("none ")});
    r.performance.asked = true;
    r.performance.report = performance_report(g);
    if (g.coin()) r.performance.report->partial_reason = g.text("interrupted ");
    return r;
  }
  r.loaded = loaded_outcome(g);
  r.latency = latency_run(g, r.loaded.asked && r.loaded.runs);
  r.device = r.latency->device;
  r.performance = performance_outcome(g);
  if (r.latency->partial) r.performance.interrupted.clear();
  if (r.performance.report && r.latency->partial) r.performance.report->partial_reason.clear();
  if (g.coin()) r.per_frame = per_frame(g, *r.latency);
  r.score = score(g);
  return r;
}

// Several devices: sections that ran (ok or partial) or failed.
RunResult several_devices(Gen& g) {
  RunResult r;
  r.meta = meta(g);
  r.meta.validation.reset();  // per section
  const uint32_t n = 2 + g.below32(3);
  for (uint32_t i = 0; i < n; ++i) {
    DeviceSectionResult s;
    s.head.section = i;
    s.head.backend = "sim";
    s.head.selector = std::to_string(i);
    s.head.name = g.coin() ? "" : g.text("device ");
    if (g.coin()) {
      s.head.physical_device = static_cast<int>(g.below(3));
      s.head.uuid = g.coin() ? "" : "00000000-0000-0000-0000-000000000001";
    }
    if (i > 0 && g.below(3) == 0) {
      s.status = "failed";
      s.failure = g.text("cannot open: ");
      s.device_name = s.head.name;
    } else {
      RunResult one;
      one.meta = r.meta;
      if (g.coin()) one.meta.validation = ValidationReport{0, {}};
      one.loaded = loaded_outcome(g);
      one.latency = latency_run(g, one.loaded.asked && one.loaded.runs);
      one.device = one.latency->device;
      one.score = score(g);
      s.status = one.partial() ? "partial" : "ok";
      s.failure = one.partial_reason();
      s.device_name = one.device.name;
      s.result.push_back(std::move(one));
      if (!r.top_section) r.top_section = i;
    }
    r.sections.push_back(std::move(s));
  }
  return r;
}

NamedDistributions named(Gen& g, std::initializer_list<const char*> names) {
  NamedDistributions out;
  for (const char* n : names) out.emplace_back(n, g.distribution());
  return out;
}

// A capture of a program: its head, sources, counts and figures.
RunResult capture(Gen& g) {
  RunResult r;
  r.meta.command_line = g.text("latlab capture vkcube --c ");
  r.meta.created_utc = "2026-02-01T08:00:00Z";
  r.meta.machine = meta(g).machine;
  CaptureResult& c = r.capture.emplace();
  if (g.below(4) == 0) c.partial_reason = g.text("the program was ended by signal ");
  c.program = {{"vkcube", "--c", "60"},
               1000 + g.ns() % 30'000,
               g.coin() ? std::optional<int64_t>(g.below(3)) : std::nullopt,
               g.coin() ? std::optional<int64_t>(15) : std::nullopt,
               g.coin()};
  c.stop.stopped_by = g.coin() ? "program_exit" : "frames";
  if (g.coin()) c.stop.frames_limit = 1 + g.below(1000);
  if (g.coin()) c.stop.seconds_limit = g.us() / 1e3;
  c.stop.terminate = g.coin();
  if (g.coin()) c.stop.signal_sent = g.coin() ? 15 : 2;
  c.stop.records_dropped = g.below(3);
  for (uint64_t i = g.below(3); i > 0; --i)
    c.sources.push_back({1000 + g.ns() % 30'000, "vulkan", g.coin() ? "llvmpipe" : "",
                         g.coin() ? "vkGetCalibratedTimestampsEXT" : "", g.text("VkDevice "),
                         g.coin() ? "VK_KHR_present_wait" : "", g.coin()});
  c.frames = g.below(1000);
  c.submits = g.below(2000);
  c.gpu_spans_missing = g.below(4);
  c.submit_spans = {{"measured", g.below(100)}, {"no_work", g.below(3)}, {"failed", 0}};
  c.present_complete = {{"measured", g.below(100)}, {"unavailable", g.below(100)}};
  c.display = {g.below(100), g.below(100), std::nullopt, g.below(9),
               g.below(9),   g.below(9),   g.below(9)};
  if (g.coin()) c.display.refresh_us = 16666.666;
  c.figures = named(g, {"between_presents", "in_present_api", "cpu_busy", "gpu_busy"});
  c.submit_figures = named(g, {"gpu_span", "layer_cpu"});
  for (uint64_t i = g.below(3); i > 0; --i)
    c.per_swapchain.push_back({1000 + g.ns() % 30'000, g.below(2), g.below(2), g.below(500),
                               named(g, {"between_presents", "gpu_busy"})});
  c.layer_cpu_per_submit = c.submit_figures[1].second;
  c.layer_cpu_per_present = g.distribution();
  auto us = [&g] { return static_cast<double>(g.below(100'000)) / 8.0; };
  // A long capture's: percentiles from a histogram, the frame times decimated.
  if (g.coin()) c.figures[0].second.percentile_resolution = 1.0 / 2048;
  c.frame_times.frames_per_bucket = 1 + g.below(4);
  for (uint64_t i = g.below(4); i > 0; --i)
    c.frame_times.buckets.push_back({us() / 1e3, 1 + g.below(8), us(), us(), us()});
  if (g.coin()) {
    c.overhead.threads_cpu_per_frame_us = us();
    c.overhead.layer_cpu_per_frame_us = us();
  }
  if (g.coin()) c.overhead.driver_cpu_per_frame_us = us();
  if (g.coin()) c.overhead.layer_cpu_us = us();
  if (g.coin()) c.overhead.driver_cpu_us = us();
  if (g.coin()) c.overhead.gpu_per_frame_us = us();
  if (g.coin()) c.overhead.gpu_us = us();
  c.overhead.threads = static_cast<uint32_t>(g.below(5));
  c.overhead.bracketed_submits = g.below(2000);
  c.overhead.leaves_out = g.text("the driver ");
  for (uint64_t i = g.below(3); i > 0; --i) {
    c.bracketing.push_back({1000 + static_cast<int64_t>(g.below(100)),
                            static_cast<uint32_t>(g.below(3)), static_cast<uint32_t>(g.below(2)),
                            16, us(), us(), us(), us(), us(), us(), us() - 100.0});
  }
  if (g.coin()) c.unavailable.push_back({"present_complete", g.text("no present_wait "), 1234});
  for (uint64_t i = g.below(2); i > 0; --i) {
    CaptureScreenObserver o;
    o.name = "x11_damage";
    o.observes = g.text("DamageNotify ");
    o.available = g.coin();
    if (!o.available) o.reason = g.text("no window known ");
    if (g.coin()) o.display = ":99";
    for (uint64_t w = g.below(3); w > 0; --w) o.windows.push_back(0x400000 + g.below(1000));
    o.frames_watched = g.below(100);
    o.frames_matched = g.below(100);
    o.events = g.below(100);
    o.events_unmatched = g.below(5);
    o.figures = named(g, {"until_screen_updated"});
    c.screen_observers.push_back(o);
  }
  // --input: settings, counts by reason, lateness and the per-input figures.
  if (g.coin()) {
    CaptureInput& in = c.input.emplace();
    in.spec = g.coin() ? "key:space" : "motion";
    in.seed = g.below(100);
    in.min_interval_ns = 8'000'000;
    in.max_interval_ns = 8'000'000 + static_cast<int64_t>(g.below(4'000'000));
    in.reaction = g.coin();
    if (in.reaction && g.coin()) in.region = "0,0,80,24";
    if (g.coin()) in.display = ":99";
    if (g.coin()) {
      in.window = 0x400000 + g.below(1000);
      in.window_found_by = g.coin() ? "_NET_WM_PID" : "frame source";
    }
    if (g.coin()) in.timer_slack_ns = 1;
    in.sent = in.scheduled = g.below(1000);
    in.seen = g.below(1000);
    in.other_events = g.below(3);
    in.assigned = g.below(1000);
    if (g.coin()) in.not_assigned = {{"no_frame_source", g.below(10)}};
    if (in.reaction) {
      in.reactions = g.below(1000);
      if (g.coin()) in.no_reaction = {{"capture_ended_first", 1 + g.below(3)}};
    }
    in.injector_lateness = g.distribution();
    in.timer_lateness = g.distribution();
    in.figures = named(g, {"input_to_frame_start", "input_to_present", "sent_to_seen"});
    if (g.coin()) {
      in.server_offset_min_ms = 0.25;
      in.server_offset_max_ms = us() / 1e3;
    }
  }
  return r;
}

std::string document(const RunResult& r) { return run_result_to_json(r).dump(2) + "\n"; }

// Where two documents first differ: the line of each (a failure message
// that does not print two whole documents).
std::string first_difference(const std::string& a, const std::string& b) {
  size_t at = 0;
  while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
  const size_t from = a.rfind('\n', at) == std::string::npos ? 0 : a.rfind('\n', at) + 1;
  auto line = [from](const std::string& s) { return s.substr(from, s.find('\n', from) - from); };
  return "at byte " + std::to_string(at) + ": '" + line(a) + "' vs '" + line(b) + "'";
}

std::string html(const RunResult& r) {
  const ReportInput in{"r.json", &r};
  return render_html_report(std::span(&in, 1));
}

// Written, read back: the same document byte for byte and the same HTML
// report; `exact`: the result read back equals `r` in every field, else (a
// result holding what no document does, the engine's per-frame markers) it
// reads back as itself.
void expect_round_trip(const RunResult& r, const std::string& what, bool exact) {
  const std::string text = document(r);
  Result<ResultDocument> read = read_result_json(text, what);
  ASSERT_TRUE(read) << what << ": " << read.error().message;
  EXPECT_EQ(read->schema_version, kResultSchemaVersion);
  const RunResult& back = read->result;
  const std::string written_again = document(back);
  // The whole document, and the whole page.
  EXPECT_TRUE(written_again == text) << what << ": " << first_difference(text, written_again);
  const std::string page = html(r), page_back = html(back);
  EXPECT_TRUE(page_back == page) << what << ": " << first_difference(page, page_back);
  if (!exact) {
    Result<ResultDocument> again = read_result_json(written_again, what);
    ASSERT_TRUE(again) << what;
    EXPECT_TRUE(again->result == back) << what;
    return;
  }
  EXPECT_TRUE(back == r) << what;
  // Part by part where they differ, so a failure says which part.
  EXPECT_TRUE(back.meta == r.meta) << what;
  EXPECT_TRUE(back.loaded == r.loaded) << what;
  EXPECT_TRUE(back.performance == r.performance) << what;
  EXPECT_TRUE(back.per_frame == r.per_frame) << what;
  EXPECT_TRUE(back.capture == r.capture) << what;
  EXPECT_TRUE(back.sections == r.sections) << what;
  if (back.latency && r.latency) {
    const LatencyRun &b = *back.latency, &o = *r.latency;
    EXPECT_TRUE(b.desc == o.desc) << what;
    EXPECT_TRUE(b.device == o.device) << what;
    EXPECT_TRUE(b.clock_model == o.clock_model) << what;
    EXPECT_TRUE(b.modes == o.modes) << what;
    EXPECT_TRUE(b.blocks == o.blocks) << what;
    EXPECT_TRUE(b.present == o.present) << what;
    EXPECT_TRUE(b.unavailable == o.unavailable) << what;
  }
}

TEST(ResultRoundTrip, GeneratedOneDeviceResultsReadBackAsThemselves) {
  for (uint64_t seed = 1; seed <= 80; ++seed) {
    Gen g(seed);
    expect_round_trip(one_device(g), "one device, seed " + std::to_string(seed), true);
    if (HasFatalFailure() || HasNonfatalFailure()) return;
  }
}

TEST(ResultRoundTrip, GeneratedSeveralDeviceResultsReadBackAsThemselves) {
  for (uint64_t seed = 1; seed <= 25; ++seed) {
    Gen g(seed * 7919);
    expect_round_trip(several_devices(g), "several devices, seed " + std::to_string(seed), true);
    if (HasFatalFailure() || HasNonfatalFailure()) return;
  }
}

TEST(ResultRoundTrip, GeneratedCapturesReadBackAsThemselves) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Gen g(seed * 104729);
    expect_round_trip(capture(g), "capture, seed " + std::to_string(seed), true);
    if (HasFatalFailure() || HasNonfatalFailure()) return;
  }
}

// The comparison is not vacuous: a statistic changed after writing, a key
// of any section, is seen.
TEST(ResultRoundTrip, AChangedValueIsSeen) {
  Gen g(3);
  RunResult r = one_device(g);
  while (!r.latency || !r.latency->desc.bare_comparison) r = one_device(g);
  for (auto change : std::initializer_list<void (*)(RunResult&)>{
           [](RunResult& x) { x.latency->modes[0].total[0].count += 1; },
           [](RunResult& x) { x.latency->blocks.back().frames_run += 1; },
           [](RunResult& x) { x.latency->raw_sleep_cpu_ns += 1; },
           [](RunResult& x) { x.latency->clock_model.refreshes += 1; },
           [](RunResult& x) { x.meta.machine.logical_cpus += 1; },
           [](RunResult& x) {
             x.score.emplace();
             x.score->unavailable_reason = "changed";
           }}) {
    Result<ResultDocument> read = read_result_json(document(r), "changed");
    ASSERT_TRUE(read);
    change(read->result);
    EXPECT_FALSE(read->result == r);
    EXPECT_FALSE(document(read->result) == document(r));
  }
}

// A sim run on virtual time (deterministic): its result as the engine makes
// it, with Performance asked and unavailable, and its per-frame series.
RunResult sim_result(uint64_t seed, uint32_t frames, uint32_t blocks) {
  testing::SimRunSpec spec;
  spec.noise_seed = seed;
  spec.frames = frames;
  spec.blocks = blocks;
  RunResult r;
  r.latency.emplace();
  EXPECT_FALSE(testing::sim_result_doc(spec, &*r.latency).empty());
  r.meta.backend = "sim";
  r.meta.command_line = "latlab run --backend sim (test)";
  r.meta.created_utc = utc_now_iso8601();
  r.meta.machine = collect_machine_info();
  r.device = r.latency->device;
  r.performance.asked = true;
  r.performance.unavailable = "not run: the test asks for none";
  r.per_frame = per_frame_of(*r.latency);
  attach_latency_scores(r);
  return r;
}

// Real results: the document is the same, and every part the document holds
// is the engine's (the per-frame markers are not in it).
TEST(ResultRoundTrip, SimRunsGiveBackTheirDocument) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const RunResult r = sim_result(seed, 60, 3);
    expect_round_trip(r, "sim seed " + std::to_string(seed), false);
    Result<ResultDocument> read = read_result_json(document(r), "sim");
    ASSERT_TRUE(read);
    const LatencyRun &b = *read->result.latency, &o = *r.latency;
    EXPECT_TRUE(b.modes == o.modes);
    EXPECT_TRUE(b.clock_model.pairs == o.clock_model.pairs);
    EXPECT_TRUE(read->result.per_frame == r.per_frame);
    EXPECT_TRUE(b.frames.empty());
    ASSERT_EQ(b.blocks.size(), o.blocks.size());
    for (size_t i = 0; i < b.blocks.size(); ++i)
      EXPECT_TRUE(b.blocks[i].series == o.blocks[i].series) << i;
  }
}

// The JSON reporter of a latency run alone is the run's document with
// nothing added (latency_run_to_json, which tests and users call).
TEST(ResultRoundTrip, ALatencyOnlyResultIsTheRunDocument) {
  testing::SimRunSpec spec;
  spec.frames = 40;
  spec.blocks = 2;
  RunResult r;
  r.latency.emplace();
  ASSERT_FALSE(testing::sim_result_doc(spec, &*r.latency).empty());
  r.meta.backend = "sim";
  attach_latency_scores(r);  // as `latlab run` does
  EXPECT_EQ(run_result_to_json(r).dump(2), latency_run_to_json(*r.latency, r.meta).dump(2));
}

}  // namespace
}  // namespace latlab
