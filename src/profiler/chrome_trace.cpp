#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <numeric>

#include "core/output_file.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/profiler_trace.hpp"

namespace latlab {
namespace {

constexpr int kCpuPid = 1;
constexpr int kGpuPid = 2;

void append_escaped(std::string& out, std::string_view s) {
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

// ns -> "us.nnn", exact.
void append_us(std::string& out, int64_t ns) {
  char buf[40];
  const bool neg = ns < 0;
  const uint64_t a = neg ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%03" PRIu64, neg ? "-" : "", a / 1000, a % 1000);
  out += buf;
}

}  // namespace

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
  if (end_ns < begin_ns) {
    ++refused_;
    return false;
  }
  spans_.push_back(Span{track_index(track, gpu), std::string(name), begin_ns, end_ns, frame_id});
  return true;
}

void ChromeTrace::add_frame(std::string_view queue_name, const ProfilerFrame& f) {
  const auto id = static_cast<int64_t>(f.frame_id);
  std::string track;
  track.append("CPU ").append(queue_name).append(" frames");
  add_span(track, "frame " + std::to_string(f.frame_id), f.cpu_begin_ns, f.cpu_end_ns, false, id);
  for (const ProfilerZone& z : f.zones) {
    const char* name = z.name != nullptr ? z.name : "?";
    if (z.cpu_recorded) {
      if (add_span("CPU thread " + std::to_string(z.thread), name, z.cpu_begin_ns, z.cpu_end_ns,
                   false, id)) {
        spans_.back().site = z.site;
      }
    }
    if (z.cpu) continue;  // a CPU zone: its span above is all of it
    if (!z.ok()) {
      ++without_time_;
      continue;
    }
    if (!z.host_mapped) {
      ++unmapped_;
      continue;
    }
    track.assign("GPU ").append(queue_name).append(" (thread ").append(std::to_string(z.thread)).append(")");
    if (add_span(track, name, z.gpu_begin_host_ns, z.gpu_end_host_ns, true, id)) {
      spans_.back().site = z.site;
    }
  }
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
  out += "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"CPU\"}},\n";
  out += "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":1}}";
  // GPU groups: pid 2 ("GPU"), then one per set_gpu_group name.
  for (uint32_t g = 0; g < gpu_groups_.size(); ++g) {
    const std::string pid = std::to_string(kGpuPid + static_cast<int>(g));
    out += ",\n{\"ph\":\"M\",\"pid\":" + pid + ",\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":";
    append_escaped(out, gpu_groups_[g]);
    out += "}},\n{\"ph\":\"M\",\"pid\":" + pid +
           ",\"tid\":0,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":" + pid + "}}";
  }

  int next_tid = 1;
  for (uint32_t t = 0; t < tracks_.size(); ++t) {
    std::vector<uint32_t>& idx = by_track[t];
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
      ev += ",\n{\"ph\":\"";
      ev += ph;
      ev += "\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"ts\":";
      append_us(ev, ph == 'B' ? s.begin_ns : s.end_ns);
      ev += ",\"name\":";
      append_escaped(ev, s.name);
      if (ph == 'B') {
        ev += ",\"cat\":\"";
        ev += tracks_[t].gpu ? "gpu" : "cpu";
        ev += '"';
        if (s.frame_id >= 0) {
          ev += ",\"args\":{\"frame\":" + std::to_string(s.frame_id) +
                ",\"duration_ns\":" + std::to_string(s.end_ns - s.begin_ns);
          if (s.site != nullptr) {
            ev += ",\"function\":";
            append_escaped(ev, s.site->function != nullptr ? s.site->function : "");
            ev += ",\"file\":";
            append_escaped(ev, s.site->file != nullptr ? s.site->file : "");
            ev += ",\"line\":" + std::to_string(s.site->line);
          }
          ev += '}';
        }
      }
      ev += '}';
    };
    const int first_tid = next_tid;
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
      out += ",\n{\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
             ",\"name\":\"thread_name\",\"args\":{\"name\":";
      append_escaped(out, lane_name);
      out += "}},\n{\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":" +
             std::to_string(tid) + ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" +
             std::to_string(tid) + "}}";
      out += lane.events;
    }
    next_tid += static_cast<int>(std::max<size_t>(lanes.size(), 1));
  }
  out += "\n]}\n";
  return out;
}

Result<void> ChromeTrace::write_file(const std::string& path) const {
  return write_output_file(path, to_json());
}

}  // namespace latlab
