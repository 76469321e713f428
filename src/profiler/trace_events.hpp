// The Chrome trace event text shared by ChromeTrace (whole trace in memory)
// and ChromeTraceWriter (streamed): one writer of each event's JSON and one
// walk of a profiler frame's spans. Private to src/profiler.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "latlab/profiler.hpp"

namespace latlab::trace_events {

inline constexpr int kCpuPid = 1;
inline constexpr int kGpuPid = 2;  // the default GPU group; group g is kGpuPid + g

void append_escaped(std::string& out, std::string_view s);
// ns -> "us.nnn", exact.
void append_us(std::string& out, int64_t ns);

// ",\n" and one B (at begin_ns, with cat and, when frame_id >= 0, args:
// frame, duration_ns and the site's function/file/line) or E (at end_ns) event.
void append_span_event(std::string& out, char ph, int pid, int tid, bool gpu, std::string_view name,
                       int64_t begin_ns, int64_t end_ns, int64_t frame_id, const ZoneSite* site);
// ",\n" and the thread_name and thread_sort_index metadata of one lane.
void append_lane_meta(std::string& out, int pid, int tid, std::string_view name,
                      int64_t sort_index);
// The CPU process's metadata (no leading ",\n") and then ",\n" and GPU group
// g's (process_name `name`, pid kGpuPid + g).
void append_cpu_process_meta(std::string& out);
void append_gpu_process_meta(std::string& out, uint32_t g, std::string_view name);

// The spans of one collected frame, as ChromeTrace::add_frame documents:
// add(track, name, begin_ns, end_ns, gpu, frame_id, site) for each; zones
// without a time or without a host mapping are counted instead.
template <class Add>
void frame_spans(std::string_view queue_name, const ProfilerFrame& f, Add&& add,
                 uint64_t& without_time, uint64_t& unmapped) {
  const auto id = static_cast<int64_t>(f.frame_id);
  // GPU spans keep the device's durations (ticks x period) and offsets: the
  // clock model places the frame (its earliest mapped zone), it never
  // stretches a span by its fitted drift, which would make a span's length
  // disagree with the device's own. Children stay inside their parents.
  const ProfilerZone* anchor = nullptr;
  for (const ProfilerZone& z : f.zones) {
    if (z.cpu || !z.ok() || !z.host_mapped) continue;
    if (anchor == nullptr || f.ticks.signed_delta(anchor->begin_ticks, z.begin_ticks) < 0)
      anchor = &z;
  }
  std::string track;
  track.append("CPU ").append(queue_name).append(" frames");
  add(track, "frame " + std::to_string(f.frame_id), f.cpu_begin_ns, f.cpu_end_ns, false, id,
      nullptr);
  for (const ProfilerZone& z : f.zones) {
    const char* name = z.name != nullptr ? z.name : "?";
    if (z.cpu_recorded) {
      add("CPU thread " + std::to_string(z.thread), name, z.cpu_begin_ns, z.cpu_end_ns, false, id,
          z.site);
    }
    if (z.cpu) continue;  // a CPU zone: its span above is all of it
    if (!z.ok()) {
      ++without_time;
      continue;
    }
    if (!z.host_mapped) {
      ++unmapped;
      continue;
    }
    track.assign("GPU ")
        .append(queue_name)
        .append(" (thread ")
        .append(std::to_string(z.thread))
        .append(")");
    const int64_t begin =
        anchor->gpu_begin_host_ns + f.ticks.ticks_to_ns(static_cast<uint64_t>(
                                        f.ticks.signed_delta(anchor->begin_ticks, z.begin_ticks)));
    add(track, name, begin, begin + z.duration_ns, true, id, z.site);
  }
}

}  // namespace latlab::trace_events
