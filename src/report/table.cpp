#include <fmt/format.h>

#include <iterator>
#include <string>

#include "latlab/bench/latency_report.hpp"
#include "report/present_report.hpp"

namespace latlab {

namespace {

void row(std::string& out, std::string_view name, const Distribution& d) {
  auto it = std::back_inserter(out);
  if (d.empty()) {
    fmt::format_to(it, "  {:<28} {:>7} {:>7}   (no samples)\n", name, d.count, d.missing);
    return;
  }
  fmt::format_to(it, "  {:<28} {:>7} {:>7} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f}\n",
                 name, d.count, d.missing, d.mean, d.p50, d.p90, d.p99, d.p999, d.max);
}

void header(std::string& out) {
  fmt::format_to(std::back_inserter(out),
                 "  {:<28} {:>7} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "us", "count",
                 "missing", "mean", "p50", "p90", "p99", "p99.9", "max");
}

// One stage, every mode side by side: count, p50, p99 per mode.
void side_row(std::string& out, std::string_view name, const LatencyRun& run, Series series) {
  auto it = std::back_inserter(out);
  fmt::format_to(it, "  {:<26}", name);
  for (const LatencyModeResult& m : run.modes) {
    const Distribution& d = m.total[static_cast<size_t>(series)];
    if (d.empty()) {
      fmt::format_to(it, " | {:>6} {:>9} {:>9}", d.count, "-", "-");
    } else {
      fmt::format_to(it, " | {:>6} {:>9.1f} {:>9.1f}", d.count, d.p50, d.p99);
    }
  }
  out += '\n';
}

bool off_target(const LatencyModeResult& m) {
  return m.gpu_target && m.gpu_target->off_target.value_or(false);
}

void side_by_side(std::string& out, const LatencyRun& run) {
  auto it = std::back_inserter(out);
  fmt::format_to(it, "  {:<26}", "");
  for (const LatencyModeResult& m : run.modes)
    fmt::format_to(it, " | {:<26}",
                   fmt::format("{}{} (complexity {})", m.name, off_target(m) ? "*" : "",
                               m.workload.complexity));
  out += '\n';
  fmt::format_to(it, "  {:<26}", "us");
  for (size_t i = 0; i < run.modes.size(); ++i)
    fmt::format_to(it, " | {:>6} {:>9} {:>9}", "count", "p50", "p99");
  out += '\n';
  for (size_t i = 0; i < kStageCount; ++i) {
    const auto s = static_cast<Series>(i);
    side_row(out, to_string(s), run, s);
  }
  out += "  observers of completion\n";
  side_row(out, "core_latency", run, Series::core_latency);
  side_row(out, "fence_latency", run, Series::fence_latency);
  side_row(out, "poll_latency", run, Series::poll_latency);
  out += "  diagnostics (outside every stage)\n";
  side_row(out, "timer_lateness", run, Series::timer_lateness);
  side_row(out, "clock_map_error", run, Series::clock_map_error);
  side_row(out, "gpu_end_to_poll_wake", run, Series::gpu_end_to_poll_wake);
  side_row(out, "poll_cpu", run, Series::poll_cpu);
}

// Each mode with a GPU time target (Loaded): its measured median against it.
// Off target is said first and loudly: the mode ran, but not the load it
// was calibrated to.
void append_gpu_targets(std::string& out, const LatencyRun& run) {
  auto it = std::back_inserter(out);
  for (const LatencyModeResult& m : run.modes) {
    if (!m.gpu_target) continue;
    const GpuTargetCheck& c = *m.gpu_target;
    if (c.warmup_check)
      fmt::format_to(it, "  {}: re-checked: {}\n", m.name, c.warmup_check->outcome);
    if (!c.measured_ms) {
      fmt::format_to(it, "  {}: GPU time target {:.3f} ms not checked: no measured gpu_execution\n",
                     m.name, c.target.target_ms);
      continue;
    }
    fmt::format_to(it,
                   "  {}{}: gpu_execution p50 {:.3f} ms is {:+.1f}% from its {:.3f} ms target{}\n",
                   off_target(m) ? "* OFF TARGET " : "", m.name, *c.measured_ms,
                   *c.error_fraction * 100.0, c.target.target_ms,
                   off_target(m) ? fmt::format(" (tolerance {:.3g}%): not the calibrated load",
                                               c.target.tolerance * 100.0)
                                 : fmt::format(" (within {:.3g}%)", c.target.tolerance * 100.0));
  }
}

// Frames whose signal was already pending when the consumer looked, per mode
// (each mode's own; Loaded's backlog is not Baseline's).
void append_consumer_behind(std::string& out, const LatencyRun& run) {
  bool any = false;
  for (const LatencyModeResult& m : run.modes) any = any || m.consumer_behind > 0;
  if (!any) return;
  auto it = std::back_inserter(out);
  if (run.modes.size() == 1) {
    fmt::format_to(it,
                   "  consumer behind on {} of {} frames (signal already pending when it looked)\n",
                   run.modes[0].consumer_behind, run.modes[0].measured_frames);
    return;
  }
  out += "  consumer behind (signal already pending when it looked):";
  for (size_t i = 0; i < run.modes.size(); ++i) {
    const LatencyModeResult& m = run.modes[i];
    fmt::format_to(it, "{} {} on {} of {} frames", i == 0 ? "" : ",", m.name, m.consumer_behind,
                   m.measured_frames);
  }
  out += '\n';
}

}  // namespace

std::string format_run_table(const LatencyRun& run) {
  std::string out;
  auto it = std::back_inserter(out);
  if (run.modes.size() > 1) {
    std::string names;
    for (const LatencyModeResult& m : run.modes) names += (names.empty() ? "" : " + ") + m.name;
    fmt::format_to(it, "latency path, {}: {} measured frames in {} interleaved blocks per mode{}\n",
                   names, run.modes[0].measured_frames, run.desc.blocks,
                   run.partial ? " (PARTIAL: " + run.partial_reason + ")" : "");
    side_by_side(out, run);
  } else {
    fmt::format_to(it, "latency path, {} measured frames in {} blocks{}\n",
                   run.measured_frames_run(), run.desc.blocks,
                   run.partial ? " (PARTIAL: " + run.partial_reason + ")" : "");
    header(out);
    for (size_t i = 0; i < kStageCount; ++i)
      row(out, to_string(static_cast<Series>(i)), run.total[i]);
    out += "  observers of completion\n";
    row(out, "core_latency", run.total[static_cast<size_t>(Series::core_latency)]);
    row(out, "fence_latency", run.total[static_cast<size_t>(Series::fence_latency)]);
    row(out, "poll_latency", run.total[static_cast<size_t>(Series::poll_latency)]);
    out += "  diagnostics (outside every stage)\n";
    row(out, "timer_lateness", run.total[static_cast<size_t>(Series::timer_lateness)]);
    row(out, "clock_map_error", run.total[static_cast<size_t>(Series::clock_map_error)]);
    row(out, "gpu_end_to_poll_wake", run.total[static_cast<size_t>(Series::gpu_end_to_poll_wake)]);
    row(out, "poll_cpu", run.total[static_cast<size_t>(Series::poll_cpu)]);
  }
  if (run.desc.bare_comparison) {
    row(out, "bare_loop fence latency", run.bare_total);
    row(out, "raw clock_nanosleep lateness", run.raw_total);
  }
  append_gpu_targets(out, run);
  append_present_table(out, run);
  if (run.generator_wall_ns > 0) {
    fmt::format_to(it, "  generator thread CPU: {:.3f}% of a core\n",
                   100.0 * static_cast<double>(run.generator_cpu_ns) /
                       static_cast<double>(run.generator_wall_ns));
  }
  append_consumer_behind(out, run);
  const ClockModelReport& cm = run.clock_model;
  if (cm.available) {
    fmt::format_to(it, "  clock model ({}): drift {:.3f} ppm, error bound {} ns, {} pairs\n",
                   cm.source, cm.drift_ppm, cm.error_bound_ns, cm.pairs_used);
    if (cm.frame_mapping == "interpolated") {
      fmt::format_to(it,
                     "  frames mapped after the run between calibration pairs: {} ({} outside), "
                     "{} pairs at block ends\n",
                     cm.frames_between_pairs, cm.frames_outside_pairs, cm.block_end_pairs);
    }
  }
  for (const MissingCapability& c : run.unavailable) {
    fmt::format_to(it, "  unavailable: {}: {}\n", c.name, c.reason);
  }
  return out;
}

std::string format_performance(const PerformanceReport& r) {
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "performance, {} frames of passes {} complexity {} at {}x{}, offscreen\n",
                 r.frames, r.work.passes, r.work.complexity, r.work.width, r.work.height);
  auto line = [&](std::string_view name, const Distribution& d) {
    if (d.empty()) {
      fmt::format_to(it, "  {:<10} {:>7} {:>7}   (no samples)\n", name, d.count, d.missing);
      return;
    }
    fmt::format_to(it, "  {:<10} {:>7} {:>7} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f}\n", name,
                   d.count, d.missing, d.min, d.p50, d.p99, d.max);
  };
  fmt::format_to(it, "  {:<10} {:>7} {:>7} {:>10} {:>10} {:>10} {:>10}\n", "", "count", "missing",
                 "min", "p50", "p99", "max");
  line("gpu ms", r.gpu_ms);
  line("fps", r.fps);
  if (r.gpu_timeline_fps > 0)
    fmt::format_to(it, "  GPU timeline: {:.1f} frames/s\n", r.gpu_timeline_fps);
  return out;
}

}  // namespace latlab
