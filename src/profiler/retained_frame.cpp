#include "profiler/retained_frame.hpp"

namespace latlab::profiler_detail {

namespace {

// Links zone `i` into the frame's tree under `parent` (kNoZone: a root),
// children in recording order (a parent precedes its children).
inline void link_zone(ProfilerFrame& out, uint32_t i, uint32_t parent, uint32_t& last_root,
                      std::vector<uint32_t>& last_child) {
  ProfilerZone* zones = out.zones.data();
  ProfilerZone& z = zones[i];
  z.first_child = kNoZone;
  z.next_sibling = kNoZone;
  if (parent != kNoZone) {
    ProfilerZone& p = zones[parent];
    z.parent = parent;
    z.depth = p.depth + 1;
    if (p.first_child == kNoZone) p.first_child = i;
    else zones[last_child[parent]].next_sibling = i;
    last_child[parent] = i;
  } else {
    z.parent = kNoZone;
    z.depth = 0;
    if (last_root == kNoZone) out.first_root = i;
    else zones[last_root].next_sibling = i;
    last_root = i;
  }
}

// A GPU zone's fields: its device span, and its host span through the
// frame's mapping; CPU times where the profiler recorded them (`cpu`).
inline void expand_gpu_zone(const RetainedFrame& in, uint32_t i, const TickFormat& ticks, bool cpu,
                            ProfilerZone& z) {
  const CompactZone& c = in.zones[i];
  const FrameMapping& map = in.mapping;
  z.name = c.name();
  z.site = c.site();
  z.thread = c.thread;
  z.status = c.status;
  z.orphan = c.orphan;
  z.cpu = false;
  z.begin_ticks = in.durations_only ? 0 : c.begin_ticks;
  z.end_ticks = in.durations_only ? 0 : c.end_ticks;
  z.duration_ns = 0;
  z.host_mapped = false;
  z.gpu_begin_host_ns = 0;
  z.gpu_end_host_ns = 0;
  if (c.status == QueryStatus::ok) {
    const uint64_t el = ticks.elapsed_ticks(c.begin_ticks, c.end_ticks);
    z.duration_ns = ticks.ticks_to_ns(el);
    if (map.mapped) {
      const int64_t ob = ticks.signed_delta(map.anchor, c.begin_ticks);
      z.host_mapped = true;
      z.gpu_begin_host_ns = map.h0 + map.slope.at(ob);
      z.gpu_end_host_ns = map.h0 + map.slope.at(ob + static_cast<int64_t>(el));
    }
  }
  z.cpu_recorded = cpu;
  z.cpu_begin_ns = cpu ? in.cpu_times[2 * i] : 0;
  z.cpu_end_ns = cpu ? in.cpu_times[2 * i + 1] : 0;
}

// A CPU zone's fields: host times as recorded, no device span.
inline void expand_cpu_zone(const CompactCpuZone& c, ProfilerZone& z) {
  z.name = c.name();
  z.site = c.site();
  z.thread = c.thread;
  z.status = QueryStatus::ok;
  z.orphan = c.orphan;
  z.cpu = true;
  z.begin_ticks = 0;
  z.end_ticks = 0;
  z.duration_ns = c.end_ns - c.begin_ns;
  z.host_mapped = false;
  z.gpu_begin_host_ns = 0;
  z.gpu_end_host_ns = 0;
  z.cpu_recorded = true;
  z.cpu_begin_ns = c.begin_ns;
  z.cpu_end_ns = c.end_ns;
}

}  // namespace

void expand_frame(const RetainedFrame& in, const TickFormat& ticks, ProfilerFrame& out,
                  std::vector<uint32_t>& last_child) {
  const auto n = static_cast<uint32_t>(in.zones.size());
  const auto nc = static_cast<uint32_t>(in.cpu_zones.size());
  out.frame_id = in.frame_id;
  out.zones.resize(n + nc);
  out.first_root = kNoZone;
  out.zones_dropped = in.zones_dropped;
  out.cpu_zones_dropped = in.cpu_zones_dropped;
  out.retired = in.retired;
  out.durations_only = in.durations_only;
  out.cpu_begin_ns = in.cpu_begin_ns;
  out.cpu_end_ns = in.cpu_end_ns;
  out.host_mapped = in.mapping.mapped;
  out.map_error_ns = in.mapping.mapped ? in.mapping.error_ns : 0;
  out.ticks = ticks;
  if (last_child.size() < n + nc) last_child.resize(n + nc);

  const bool cpu = in.cpu_times.size() >= 2 * static_cast<size_t>(n);
  uint32_t last_root = kNoZone;
  for (uint32_t i = 0; i < n; ++i) {
    expand_gpu_zone(in, i, ticks, cpu, out.zones[i]);
    const uint32_t parent = in.zones[i].parent;
    link_zone(out, i, parent != kNoZone && parent < i ? parent : kNoZone, last_root, last_child);
  }
  // CPU zones after the GPU zones; their parents are CPU zones.
  for (uint32_t j = 0; j < nc; ++j) {
    const CompactCpuZone& c = in.cpu_zones[j];
    expand_cpu_zone(c, out.zones[n + j]);
    const uint32_t parent = c.parent != kNoZone && c.parent < j ? n + c.parent : kNoZone;
    link_zone(out, n + j, parent, last_root, last_child);
  }
}

}  // namespace latlab::profiler_detail
