#include <fmt/format.h>

#include <iterator>
#include <string>

#include "latlab/latency_report.hpp"

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

}  // namespace

std::string format_run_table(const LatencyRun& run) {
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "latency path, {} measured frames in {} blocks{}\n", run.measured_frames_run(),
                 run.desc.blocks, run.partial ? " (PARTIAL: " + run.partial_reason + ")" : "");
  header(out);
  for (size_t i = 0; i < kStageCount; ++i)
    row(out, to_string(static_cast<Series>(i)), run.total[i]);
  out += "  observers of completion\n";
  row(out, "core_latency", run.total[static_cast<size_t>(Series::core_latency)]);
  row(out, "fence_latency", run.total[static_cast<size_t>(Series::fence_latency)]);
  out += "  diagnostics (outside every stage)\n";
  row(out, "timer_lateness", run.total[static_cast<size_t>(Series::timer_lateness)]);
  row(out, "clock_map_error", run.total[static_cast<size_t>(Series::clock_map_error)]);
  if (run.desc.bare_comparison) {
    row(out, "bare_loop fence latency", run.bare_total);
    row(out, "raw clock_nanosleep lateness", run.raw_total);
  }
  if (run.generator_wall_ns > 0) {
    fmt::format_to(it, "  generator thread CPU: {:.3f}% of a core\n",
                   100.0 * static_cast<double>(run.generator_cpu_ns) /
                       static_cast<double>(run.generator_wall_ns));
  }
  if (run.consumer_behind > 0) {
    fmt::format_to(it, "  consumer behind on {} frames (signal already pending when it looked)\n",
                   run.consumer_behind);
  }
  const ClockModelReport& cm = run.clock_model;
  if (cm.available) {
    fmt::format_to(it, "  clock model ({}): drift {:.3f} ppm, error bound {} ns, {} pairs\n",
                   cm.source, cm.drift_ppm, cm.error_bound_ns, cm.pairs_used);
  }
  for (const MissingCapability& c : run.unavailable) {
    fmt::format_to(it, "  unavailable: {}: {}\n", c.name, c.reason);
  }
  return out;
}

}  // namespace latlab
