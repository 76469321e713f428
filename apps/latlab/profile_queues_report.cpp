// `latlab profile --queues all`: its JSON and text (profile_queues_rig.hpp).
#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "latlab/profiler_queues.hpp"
#include "profile_queues_rig.hpp"
#include "report/profile_report.hpp"

namespace latlab::cli::queues {

namespace {

size_t role_index(const QueuesRig& rig, Role role) {
  for (size_t i = 0; i < rig.roles.size(); ++i) {
    if (rig.roles[i].role == role) return i;
  }
  return rig.roles.size();
}

// The semaphore on the host clock: frames where async compute began before
// the upload ended (by more than the clock model's bound, `error_ns`).
nlohmann::json semaphore_order_json(const QueuesRig& rig, int64_t error_ns) {
  const auto& up = rig.cmdbuf_spans.spans[role_index(rig, Role::upload)];
  const auto& as = rig.cmdbuf_spans.spans[role_index(rig, Role::async_compute)];
  uint64_t frames = 0, out_of_order = 0;
  for (size_t f = 0; f < up.size() && f < as.size(); ++f) {
    if (!up[f].mapped || !as[f].mapped) continue;
    ++frames;
    if (as[f].begin_ns + error_ns < up[f].end_ns) ++out_of_order;
  }
  return {{"frames", frames},
          {"async_began_before_upload_ended", out_of_order},
          {"tolerance_ns", error_ns}};
}

}  // namespace

// Per frame, how long `a`'s command buffer overlapped `b`'s on the host
// clock: frames with both mapped, how many overlapped, the mean overlap
// (null without frames).
nlohmann::json overlap_json(const QueuesRig& rig, Role a, Role b) {
  const size_t ia = role_index(rig, a), ib = role_index(rig, b);
  const auto& sa = rig.cmdbuf_spans.spans[ia];
  const auto& sb = rig.cmdbuf_spans.spans[ib];
  uint64_t frames = 0, overlapping = 0;
  double sum_ns = 0;
  for (size_t f = 0; f < sa.size() && f < sb.size(); ++f) {
    if (!sa[f].mapped || !sb[f].mapped) continue;
    ++frames;
    const int64_t o =
        std::min(sa[f].end_ns, sb[f].end_ns) - std::max(sa[f].begin_ns, sb[f].begin_ns);
    if (o > 0) {
      ++overlapping;
      sum_ns += static_cast<double>(o);
    }
  }
  return {{"role", rig.roles[ia].label},
          {"with", rig.roles[ib].label},
          {"same_queue", rig.roles[ia].family == rig.roles[ib].family},
          {"frames", frames},
          {"frames_overlapping", overlapping},
          {"avg_overlap_ms", frames > 0 ? nlohmann::json(sum_ns / static_cast<double>(frames) / 1e6)
                                        : nlohmann::json()}};
}

uint64_t expected_zones(const QueuesRig& rig, uint32_t frames) {
  uint64_t per_frame = 0;
  for (const auto& r : rig.roles) {
    switch (r.role) {
      case Role::upload:
        per_frame += kUploadZones;
        break;
      case Role::async_compute:
        per_frame += kAsyncZones;
        break;
      case Role::graphics:
        per_frame += kGraphicsZones;
        break;
      case Role::marker:
        per_frame += kMarkerZones;
        break;
    }
  }
  return per_frame * frames;
}

ProfilerCounters sum_counters(const QueuesRig& rig) {
  ProfilerCounters t;
  for (const auto& q : rig.queues) {
    const ProfilerCounters c = q->prof->counters();
    t.frames_collected += c.frames_collected;
    t.frames_without_queries += c.frames_without_queries;
    t.zones_ok += c.zones_ok;
    t.zones_dropped += c.zones_dropped;
    t.zones_invalid += c.zones_invalid;
  }
  return t;
}

nlohmann::json json_output(const QueuesProfileRequest& req, const VulkanContext& ctx,
                           const QueuesRig& rig, const std::string& mapping,
                           const std::shared_ptr<const ClockFit>& fit) {
  nlohmann::json queues = nlohmann::json::array();
  nlohmann::json zones = nlohmann::json::array();
  for (const auto& q : rig.queues) {
    queues.push_back({{"family", q->info->family},
                      {"flags", q->info->flags_text},
                      {"valid_bits", q->info->ticks.valid_bits},
                      {"track", q->name},
                      {"roles", q->roles},
                      {"counters", profile_counters_json(q->prof->counters())}});
    const auto stats = q->prof->stats();
    nlohmann::json table = profile_stats_json(stats);
    for (size_t i = 0; i < stats.size(); ++i) {
      table[i]["queue"] = q->name;
      table[i]["queue_family"] = q->info->family;
      table[i]["command_buffer"] = is_command_buffer_zone(stats[i].name.c_str());
      zones.push_back(table[i]);
    }
  }
  nlohmann::json roles = nlohmann::json::array();
  for (const auto& r : rig.roles) {
    roles.push_back({{"role", r.label},
                     {"queue_family", r.family},
                     {"command_buffer_zone", std::string(kCommandBufferZonePrefix) + r.label},
                     {"note", r.note.empty() ? nlohmann::json() : nlohmann::json(r.note)}});
  }
  nlohmann::json unavailable = nlohmann::json::array();
  for (const auto& m : ctx.unopened_queue_families())
    unavailable.push_back({{"name", m.name}, {"reason", m.reason}});
  for (const auto& m : rig.idle) unavailable.push_back({{"name", m.name}, {"reason", m.reason}});
  nlohmann::json out = {
      {"device", ctx.device_name()},
      {"host_clock", kHostClockName},
      {"settings",
       {{"frames", req.frames},
        {"complexity", req.complexity},
        {"size", fmt::format("{}x{}", req.width, req.height)},
        {"frames_in_flight", req.frames_in_flight},
        {"queues", req.all_queues ? "all" : "one"},
        {"validation", req.validation}}},
      {"host_mapping", mapping},
      {"clock_fit", profile_clock_fit_json(fit)},
      {"queues", queues},
      {"queue_families_unavailable", unavailable},
      {"roles", roles},
      {"zones", zones},
      {"overlap",
       {overlap_json(rig, Role::upload, Role::graphics),
        overlap_json(rig, Role::async_compute, Role::graphics)}},
      {"semaphore_order", semaphore_order_json(rig, fit ? 2 * fit->base_error_ns : 0)},
      {"counters", profile_counters_json(sum_counters(rig))},
      {"validation_errors", ctx.validation_error_count()},
  };
  return out;
}

void print_queues(const VulkanContext& ctx, const QueuesRig& rig) {
  fmt::print("  queues used:\n");
  for (const auto& q : rig.queues) {
    std::string roles;
    for (const auto& r : q->roles) roles += (roles.empty() ? "" : ", ") + r;
    fmt::print("    family {} ({}), {} valid bits: {}\n", q->info->family, q->info->flags_text,
               q->info->ticks.valid_bits, roles);
  }
  for (const auto& r : rig.roles) {
    if (!r.note.empty()) fmt::print("    {} on family {}: {}\n", r.label, r.family, r.note);
  }
  if (ctx.unopened_queue_families().empty() && rig.idle.empty()) {
    fmt::print("  queue families unavailable: none\n");
  } else {
    fmt::print("  queue families unavailable:\n");
    for (const auto& m : ctx.unopened_queue_families())
      fmt::print("    {}: {}\n", m.name, m.reason);
    for (const auto& m : rig.idle) fmt::print("    {}: {}\n", m.name, m.reason);
  }
}

}  // namespace latlab::cli::queues
