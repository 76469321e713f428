// Text views of the profiler: Unreal's `stat gpu` table and ProfileGPU tree.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string>

#include "latlab/profiler.hpp"

namespace latlab {
namespace {

void appendf(std::string& out, const char* fmt, auto... args) {
  char buf[512];
  const int n = std::snprintf(buf, sizeof buf, fmt, args...);
  if (n > 0) out.append(buf, std::min<size_t>(static_cast<size_t>(n), sizeof buf - 1));
}

void append_zone(std::string& out, const ProfilerFrame& f, uint32_t i) {
  const ProfilerZone& z = f.zones[i];
  out.append(2 + 2 * static_cast<size_t>(z.depth), ' ');
  if (z.ok()) {
    appendf(out, "%9.3f ms  %s", static_cast<double>(z.duration_ns) / 1e6, z.name);
  } else {
    const auto status = to_string(z.status);
    appendf(out, "%12.*s  %s", static_cast<int>(status.size()), status.data(), z.name);
  }
  if (z.orphan) out += "  (enclosing zone not recorded in this frame)";
  appendf(out, "  [%sthread %u]\n", z.cpu ? "CPU " : "", z.thread);
  for (uint32_t c = z.first_child; c != kNoZone; c = f.zones[c].next_sibling) append_zone(out, f, c);
}

void append_stat_rows(std::string& out, std::string_view queue_name,
                      std::span<const ZoneStat> stats, bool cpu) {
  std::vector<const ZoneStat*> rows;
  rows.reserve(stats.size());
  for (const ZoneStat& s : stats) {
    if (s.cpu == cpu) rows.push_back(&s);
  }
  if (cpu && rows.empty()) return;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const ZoneStat* a, const ZoneStat* b) { return a->avg_ms > b->avg_ms; });
  size_t width = 4;
  for (const ZoneStat* s : rows) width = std::max(width, s->name.size());
  appendf(out,
          cpu ? "CPU zones on '%.*s' (per frame, host time, ms)\n"
              : "GPU zones on '%.*s' (per frame, device time, ms)\n",
          static_cast<int>(queue_name.size()), queue_name.data());
  // frames: frames with a sum; fr.miss: frames where a call of the name (or
  // a dropped zone) had no time, so no sum; missing: calls without a time.
  appendf(out, "%-*s %9s %9s %9s %9s %9s %7s %7s %8s\n", static_cast<int>(width), "zone", "avg",
          "min", "max", "p95", "calls/fr", "frames", "fr.miss", "missing");
  for (const ZoneStat* s : rows) {
    if (s->frames == 0) {
      appendf(out, "%-*s %9s %9s %9s %9s %9s %7u %7u %8" PRIu64 "\n", static_cast<int>(width),
              s->name.c_str(), "-", "-", "-", "-", "-", 0u, s->frames_missing, s->missing);
      continue;
    }
    appendf(out, "%-*s %9.3f %9.3f %9.3f %9.3f %9.2f %7u %7u %8" PRIu64 "\n",
            static_cast<int>(width), s->name.c_str(), s->avg_ms, s->min_ms, s->max_ms, s->p95_ms,
            s->calls_per_frame, s->frames, s->frames_missing, s->missing);
  }
}

}  // namespace

std::string format_stat_table(std::string_view queue_name, std::span<const ZoneStat> stats) {
  std::string out;
  append_stat_rows(out, queue_name, stats, false);
  append_stat_rows(out, queue_name, stats, true);
  return out;
}

std::string format_stat_table(const GpuProfiler& profiler) {
  const uint64_t collected = profiler.counters().frames_collected;
  const uint64_t window = profiler.desc().stat_window_frames;
  std::string out;
  appendf(out, "'%s': the newest %" PRIu64 " of %" PRIu64
          " frames collected (the stat window holds %" PRIu64 ")\n",
          profiler.name().c_str(), std::min(collected, window), collected, window);
  return out + format_stat_table(profiler.name(), profiler.stats());
}

std::string format_frame_tree(std::string_view queue_name, const ProfilerFrame& f) {
  std::string out;
  uint32_t ok = 0;
  for (const ProfilerZone& z : f.zones) ok += z.ok() ? 1 : 0;
  appendf(out, "frame %" PRIu64 " on '%.*s': %zu zones (%u with a time), %u dropped%s\n", f.frame_id,
          static_cast<int>(queue_name.size()), queue_name.data(), f.zones.size(), ok,
          f.zones_dropped, f.retired ? ", retired" : "");
  if (f.cpu_zones_dropped > 0) {
    // Before the zones: the header line ends with the newline above.
    out.pop_back();
    appendf(out, ", %u CPU zones dropped\n", f.cpu_zones_dropped);
  }
  for (uint32_t r = f.first_root; r != kNoZone; r = f.zones[r].next_sibling) append_zone(out, f, r);
  return out;
}

}  // namespace latlab
