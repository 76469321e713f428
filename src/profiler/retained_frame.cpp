#include "profiler/retained_frame.hpp"

namespace latlab::profiler_detail {

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

  const FrameMapping& map = in.mapping;
  const bool cpu = in.cpu_times.size() >= 2 * static_cast<size_t>(n);
  ProfilerZone* zones = out.zones.data();
  uint32_t last_root = kNoZone;
  for (uint32_t i = 0; i < n; ++i) {
    const CompactZone& c = in.zones[i];
    ProfilerZone& z = zones[i];
    z.name = c.name();
    z.site = c.site();
    z.first_child = kNoZone;
    z.next_sibling = kNoZone;
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
    // Tree links, children in recording order (a parent precedes its children).
    if (c.parent != kNoZone && c.parent < i) {
      ProfilerZone& p = zones[c.parent];
      z.parent = c.parent;
      z.depth = p.depth + 1;
      if (p.first_child == kNoZone) p.first_child = i;
      else zones[last_child[c.parent]].next_sibling = i;
      last_child[c.parent] = i;
    } else {
      z.parent = kNoZone;
      z.depth = 0;
      if (last_root == kNoZone) out.first_root = i;
      else zones[last_root].next_sibling = i;
      last_root = i;
    }
  }
  // CPU zones after the GPU zones; their parents are CPU zones.
  for (uint32_t j = 0; j < nc; ++j) {
    const CompactCpuZone& c = in.cpu_zones[j];
    const uint32_t i = n + j;
    ProfilerZone& z = zones[i];
    z.name = c.name();
    z.site = c.site();
    z.first_child = kNoZone;
    z.next_sibling = kNoZone;
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
    if (c.parent != kNoZone && c.parent < j) {
      const uint32_t pi = n + c.parent;
      ProfilerZone& p = zones[pi];
      z.parent = pi;
      z.depth = p.depth + 1;
      if (p.first_child == kNoZone)
        p.first_child = i;
      else
        zones[last_child[pi]].next_sibling = i;
      last_child[pi] = i;
    } else {
      z.parent = kNoZone;
      z.depth = 0;
      if (last_root == kNoZone)
        out.first_root = i;
      else
        zones[last_root].next_sibling = i;
      last_root = i;
    }
  }
}

}  // namespace latlab::profiler_detail
