#include <algorithm>

#include "core/output_file.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/profiler_trace.hpp"
#include "trace_events.hpp"

namespace latlab {

using trace_events::append_escaped;
using trace_events::kCpuPid;
using trace_events::kGpuPid;

uint32_t ChromeTrace::track_index(std::string_view name, bool gpu) {
  const uint32_t group = gpu ? gpu_group_ : 0;
  for (uint32_t i = 0; i < tracks_.size(); ++i) {
    if (tracks_[i].gpu == gpu && tracks_[i].group == group && tracks_[i].name == name) return i;
  }
  tracks_.push_back(Track{std::string(name), gpu, group});
  return static_cast<uint32_t>(tracks_.size() - 1);
}

void ChromeTrace::set_gpu_group(std::string_view name) {
  const std::string process = name.empty() ? std::string("GPU") : "GPU " + std::string(name);
  for (uint32_t i = 0; i < gpu_groups_.size(); ++i) {
    if (gpu_groups_[i] == process) {
      gpu_group_ = i;
      return;
    }
  }
  gpu_groups_.push_back(process);
  gpu_group_ = static_cast<uint32_t>(gpu_groups_.size() - 1);
}

bool ChromeTrace::add_span(std::string_view track, std::string_view name, int64_t begin_ns,
                           int64_t end_ns, bool gpu, int64_t frame_id) {
  return add_span_at(track, name, begin_ns, end_ns, gpu, frame_id, nullptr);
}

bool ChromeTrace::add_span_at(std::string_view track, std::string_view name, int64_t begin_ns,
                              int64_t end_ns, bool gpu, int64_t frame_id, const ZoneSite* site) {
  if (end_ns < begin_ns) {
    ++refused_;
    return false;
  }
  spans_.push_back(
      Span{track_index(track, gpu), std::string(name), begin_ns, end_ns, frame_id, site});
  return true;
}

void ChromeTrace::add_frame(std::string_view queue_name, const ProfilerFrame& f) {
  trace_events::frame_spans(
      queue_name, f,
      [this](std::string_view track, std::string_view name, int64_t b, int64_t e, bool gpu,
             int64_t id, const ZoneSite* site) { add_span_at(track, name, b, e, gpu, id, site); },
      without_time_, unmapped_);
}

int ChromeTrace::append_track(std::string& out, uint32_t t, std::vector<uint32_t>& idx,
                              int first_tid) const {
  std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
    const Span& x = spans_[a];
    const Span& y = spans_[b];
    if (x.begin_ns != y.begin_ns) return x.begin_ns < y.begin_ns;
    return x.end_ns > y.end_ns;
  });
  // Lanes: each a stack of open spans; a span goes to the first lane where
  // it nests inside the innermost open span (or the lane is idle).
  struct Lane {
    std::vector<uint32_t> open;
    std::string events;
  };
  std::vector<Lane> lanes;
  const int pid = tracks_[t].gpu ? kGpuPid + static_cast<int>(tracks_[t].group) : kCpuPid;
  auto emit = [&](std::string& ev, int tid, char ph, const Span& s) {
    trace_events::append_span_event(ev, ph, pid, tid, tracks_[t].gpu, s.name, s.begin_ns, s.end_ns,
                                    s.frame_id, s.site);
  };
  for (uint32_t i : idx) {
    const Span& s = spans_[i];
    size_t l = 0;
    for (;; ++l) {
      if (l == lanes.size()) lanes.emplace_back();
      Lane& lane = lanes[l];
      while (!lane.open.empty() && spans_[lane.open.back()].end_ns <= s.begin_ns) {
        emit(lane.events, first_tid + static_cast<int>(l), 'E', spans_[lane.open.back()]);
        lane.open.pop_back();
      }
      if (lane.open.empty() || spans_[lane.open.back()].end_ns >= s.end_ns) break;
    }
    emit(lanes[l].events, first_tid + static_cast<int>(l), 'B', s);
    lanes[l].open.push_back(i);
  }
  for (size_t l = 0; l < lanes.size(); ++l) {
    Lane& lane = lanes[l];
    while (!lane.open.empty()) {
      emit(lane.events, first_tid + static_cast<int>(l), 'E', spans_[lane.open.back()]);
      lane.open.pop_back();
    }
    const int tid = first_tid + static_cast<int>(l);
    std::string lane_name = tracks_[t].name;
    if (l > 0) lane_name += " #" + std::to_string(l + 1);
    trace_events::append_lane_meta(out, pid, tid, lane_name, tid);
    out += lane.events;
  }
  return static_cast<int>(std::max<size_t>(lanes.size(), 1));
}

std::string ChromeTrace::to_json() const {
  // Spans per track, sorted by (begin, longer first, insertion): a parent
  // precedes the children that start with it.
  std::vector<std::vector<uint32_t>> by_track(tracks_.size());
  for (uint32_t i = 0; i < spans_.size(); ++i) by_track[spans_[i].track].push_back(i);

  std::string out;
  out.reserve(spans_.size() * 160 + 1024);
  out += "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"clock\":";
  append_escaped(out, kHostClockName);
  out += ",\"time_unit\":\"us, host clock\",\"gpu_zones_unmapped\":" + std::to_string(unmapped_) +
         ",\"gpu_zones_without_time\":" + std::to_string(without_time_) +
         ",\"spans_refused\":" + std::to_string(refused_) + "},\"traceEvents\":[\n";
  trace_events::append_cpu_process_meta(out);
  // GPU groups: pid 2 ("GPU"), then one per set_gpu_group name.
  for (uint32_t g = 0; g < gpu_groups_.size(); ++g)
    trace_events::append_gpu_process_meta(out, g, gpu_groups_[g]);

  int next_tid = 1;
  for (uint32_t t = 0; t < tracks_.size(); ++t)
    next_tid += append_track(out, t, by_track[t], next_tid);
  out += "\n]}\n";
  return out;
}

Result<void> ChromeTrace::write_file(const std::string& path) const {
  return write_output_file(path, to_json());
}

}  // namespace latlab
