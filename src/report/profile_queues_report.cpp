// `latlab profile --queues all` and device lists: JSON, text and the
// findings on stderr (profile_report.hpp).
#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "latlab/host_clock.hpp"
#include "latlab/profiler_queues.hpp"
#include "report/profile_json.hpp"
#include "report/profile_report.hpp"

namespace latlab {
namespace {

nlohmann::json overlap_json(const QueuesOverlap& o) {
  return {
      {"role", o.role},
      {"with", o.with},
      {"same_queue", o.same_queue},
      {"frames", o.frames},
      {"frames_overlapping", o.frames_overlapping},
      {"avg_overlap_ms", o.avg_overlap_ms ? nlohmann::json(*o.avg_overlap_ms) : nlohmann::json()}};
}

nlohmann::json queues_json(const QueuesDeviceResult& d, nlohmann::json& zones) {
  nlohmann::json queues = nlohmann::json::array();
  for (const auto& q : d.queues) {
    queues.push_back({{"family", q.info.family},
                      {"flags", q.info.flags_text},
                      {"valid_bits", q.info.ticks.valid_bits},
                      {"track", q.info.track},
                      {"roles", q.info.roles},
                      {"counters", profile_counters_json(q.counters)}});
    nlohmann::json table = profile_stats_json(q.stats);
    for (size_t i = 0; i < q.stats.size(); ++i) {
      table[i]["queue"] = q.info.track;
      table[i]["queue_family"] = q.info.family;
      table[i]["command_buffer"] = is_command_buffer_zone(q.stats[i].name.c_str());
      zones.push_back(table[i]);
    }
  }
  return queues;
}

nlohmann::json roles_json(const QueuesDeviceResult& d) {
  nlohmann::json roles = nlohmann::json::array();
  for (const auto& r : d.roles) {
    roles.push_back({{"role", r.label},
                     {"queue_family", r.family},
                     {"command_buffer_zone", std::string(kCommandBufferZonePrefix) + r.label},
                     {"note", r.note.empty() ? nlohmann::json() : nlohmann::json(r.note)}});
  }
  return roles;
}

nlohmann::json settings_json(const QueuesProfilePlan& plan, const ProfileRigDesc& rig) {
  return {{"frames", plan.frames},
          {"complexity", plan.complexity},
          {"size", fmt::format("{}x{}", rig.width, rig.height)},
          {"frames_in_flight", plan.frames_in_flight},
          {"queues", plan.all_queues ? "all" : "one"},
          {"validation", rig.validation}};
}

nlohmann::json device_json(const QueuesProfilePlan& plan, const ProfileRigDesc& rig,
                           const QueuesDeviceResult& d) {
  if (d.failure) {
    nlohmann::json out = {{"device_selector", d.selector}};
    if (!d.failure->device.empty()) out["device"] = d.failure->device;
    out["error"] = d.failure->message;
    return out;
  }
  nlohmann::json zones = nlohmann::json::array();
  const nlohmann::json queues = queues_json(d, zones);
  nlohmann::json unavailable = nlohmann::json::array();
  for (const auto& m : d.unavailable)
    unavailable.push_back({{"name", m.name}, {"reason", m.reason}});
  const QueuesSemaphoreOrder& s = d.semaphore_order;
  return {
      {"device", d.device},
      {"host_clock", kHostClockName},
      {"settings", settings_json(plan, rig)},
      {"host_mapping", d.mapping},
      {"clock_fit", profile_clock_fit_json(d.fit)},
      {"queues", queues},
      {"queue_families_unavailable", unavailable},
      {"roles", roles_json(d)},
      {"zones", zones},
      {"overlap", {overlap_json(d.overlap[0]), overlap_json(d.overlap[1])}},
      {"semaphore_order",
       {{"frames", s.frames},
        {"async_began_before_upload_ended", s.async_began_before_upload_ended},
        {"tolerance_ns", s.tolerance_ns}}},
      {"counters", profile_counters_json(d.counters)},
      {"validation_errors", d.rig.validation_errors.value.value_or(0)},
  };
}

}  // namespace

void print_queues_used(const QueuesDeviceResult& d) {
  fmt::print("  queues used:\n");
  for (const auto& q : d.queues) {
    std::string roles;
    for (const auto& r : q.info.roles) roles += (roles.empty() ? "" : ", ") + r;
    fmt::print("    family {} ({}), {} valid bits: {}\n", q.info.family, q.info.flags_text,
               q.info.ticks.valid_bits, roles);
  }
  for (const auto& r : d.roles) {
    if (!r.note.empty()) fmt::print("    {} on family {}: {}\n", r.label, r.family, r.note);
  }
  if (d.unavailable.empty()) {
    fmt::print("  queue families unavailable: none\n");
  } else {
    fmt::print("  queue families unavailable:\n");
    for (const auto& m : d.unavailable) fmt::print("    {}: {}\n", m.name, m.reason);
  }
}

void print_queues_device_text(const QueuesDeviceResult& d) {
  print_host_mapping_line(d.mapping, d.fit);
  for (const auto& q : d.queues) {
    fmt::print("{}\n", format_stat_table(q.info.track, q.stats));
    print_counters_line(q.counters);
    fmt::print("\n");
  }
  fmt::print("zones named \"cmdbuf <role>\" time a whole command buffer\n");
  for (const QueuesOverlap& o : d.overlap) {
    fmt::print("overlap of {} with graphics{}: {} of {} frames, avg {} ms\n", o.role,
               o.same_queue ? " (same queue)" : "", o.frames_overlapping, o.frames,
               o.avg_overlap_ms ? fmt::format("{:.3f}", *o.avg_overlap_ms) : std::string("-"));
  }
  for (const auto& line : d.rig.footer) fmt::print("{}\n", line);
}

void print_queues_device_findings(const QueuesDeviceResult& d) {
  warn_untimed_zones(d.counters, d.zones_expected);
  for (const auto& m : d.rig.errors) std::fprintf(stderr, "  %s\n", m.c_str());
}

void print_profile_queues_json(const QueuesProfilePlan& plan, const ProfileRigDesc& rig,
                               const QueuesProfileResult& result, bool several) {
  nlohmann::json out;
  if (several) {
    nlohmann::json sections = nlohmann::json::array();
    for (const auto& d : result.devices) sections.push_back(device_json(plan, rig, d));
    out = {{"host_clock", kHostClockName}, {"devices", sections}};
  } else if (!result.devices.empty()) {
    out = device_json(plan, rig, result.devices.front());
  }
  if (result.trace) {
    out["trace"] = profile_trace_json(plan.trace, *result.trace, result.trace_written,
                                      !result.partial.empty());
  }
  fmt::print("{}\n", out.dump(2));
}

}  // namespace latlab
