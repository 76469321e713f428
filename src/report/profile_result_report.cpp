// `latlab profile` on one rig: its result as JSON, as text, and the findings
// on stderr (profile_report.hpp).
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "latlab/host_clock.hpp"
#include "report/profile_json.hpp"
#include "report/profile_report.hpp"

namespace latlab {
namespace {

void add_count(nlohmann::json& out, const char* key, const ProfileCount& count) {
  if (!count.present) return;
  // Not measured: null, never 0.
  out[key] = count.value ? nlohmann::json(*count.value) : nlohmann::json();
}

// The keys only the rig knows (and its part of "settings").
void add_rig_json(nlohmann::json& out, const ProfileRigReport& rig, Backend backend) {
  if (rig.names_backend) out["backend"] = std::string(backend_name(backend));
  out["device"] = rig.device;
  if (rig.api) out["api"] = *rig.api;
  if (rig.timer) out["timer"] = *rig.timer;
  if (rig.validation) out["settings"]["validation"] = *rig.validation;
  add_count(out, "validation_errors", rig.validation_errors);
  add_count(out, "timestamp_write_errors", rig.timestamp_write_errors);
  add_count(out, "stamp_write_errors", rig.stamp_write_errors);
}

}  // namespace

void print_profile_json(const ProfilePlan& plan, const ProfileRigDesc& rig, Backend backend,
                        const ProfileResult& result) {
  const GpuProfiler& prof = *result.profiler;
  nlohmann::json out = {
      {"host_clock", kHostClockName},
      {"settings",
       {{"frames", plan.frames},
        {"complexity", plan.complexity},
        {"size", fmt::format("{}x{}", rig.width, rig.height)},
        {"frames_in_flight", plan.frames_in_flight}}},
      {"host_mapping", result.mapping},
      {"clock_fit", profile_clock_fit_json(result.fit)},
      {"zones", profile_stats_json(prof.stats())},
      {"counters", profile_counters_json(prof.counters())},
  };
  add_rig_json(out, result.rig, backend);
  if (result.trace) {
    out["trace"] = profile_trace_json(plan.trace, *result.trace, result.trace_written,
                                      !result.partial.empty());
  }
  fmt::print("{}\n", out.dump(2));
}

void print_profile_text(const ProfilePlan& plan, const ProfileResult& result) {
  const GpuProfiler& prof = *result.profiler;
  print_host_mapping_line(result.mapping, result.fit);
  fmt::print("{}\n", format_stat_table(result.queue_name, prof.stats()));
  print_newest_frame_tree(prof, result.queue_name);
  print_counters_line(prof.counters());
  for (const auto& line : result.rig.notes) fmt::print("{}\n", line);
  if (result.trace) {
    print_trace_line(plan.trace, *result.trace, result.trace_written, !result.partial.empty());
  }
  for (const auto& line : result.rig.footer) fmt::print("{}\n", line);
}

void print_profile_findings(const ProfileResult& result) {
  if (!result.partial.empty()) std::fprintf(stderr, "latlab profile: %s\n", result.partial.c_str());
  warn_untimed_zones(result.profiler->counters(), result.zones_expected);
  if (!result.trace_error.empty())
    std::fprintf(stderr, "latlab profile: %s\n", result.trace_error.c_str());
  for (const auto& m : result.rig.errors) std::fprintf(stderr, "  %s\n", m.c_str());
}

}  // namespace latlab
