// ChromeTraceWriter: ChromeTrace's lanes, computed as spans stream in.
//
// Each track keeps a min-heap of waiting spans ordered as ChromeTrace sorts
// them (begin, longer first, arrival) and writes the earliest once more than
// window_spans wait. Writing a span is ChromeTrace's lane rule, one span at
// a time: close the spans of every lane that ended by its begin, then put it
// in the first lane where it nests inside the innermost open span (or the
// lane is idle). For spans written in sorted order this gives exactly
// ChromeTrace's lanes. A lane also remembers the time of its last event, and
// a span starting before that does not fit there: that is what keeps a late
// span (one that sorts before a span already written) from breaking a
// lane's order; it finds a later lane or opens a new one.
#include <algorithm>
#include <climits>
#include <optional>

#include "core/output_file.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/profiler_trace.hpp"
#include "trace_events.hpp"

namespace latlab {
namespace {

// Text gathered before it goes to the file (OutputFile buffers as much again).
constexpr size_t kFlushBytes = size_t{1} << 16;

struct Span {
  std::string name;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  int64_t frame_id = -1;
  const ZoneSite* site = nullptr;
  uint64_t seq = 0;  // arrival order within its track
};

// ChromeTrace's order: begin, then longer first, then arrival.
bool sorts_before(const Span& a, const Span& b) {
  if (a.begin_ns != b.begin_ns) return a.begin_ns < b.begin_ns;
  if (a.end_ns != b.end_ns) return a.end_ns > b.end_ns;
  return a.seq < b.seq;
}

struct Lane {
  int tid = 0;
  std::vector<Span> open;  // a stack: each nests inside the one below
  int64_t last_ts = INT64_MIN;
};

struct Track {
  std::string name;
  bool gpu = false;
  uint32_t group = 0;
  int pid = trace_events::kCpuPid;
  uint32_t index = 0;
  std::vector<Span> waiting;  // a heap, earliest (sorts_before) on top
  std::vector<Lane> lanes;
  size_t open = 0;  // over all lanes
  uint64_t next_seq = 0;
  std::optional<Span> last_written;  // key only (name cleared)
};

}  // namespace

struct ChromeTraceWriter::Impl {
  ChromeTraceWriterDesc desc;
  OutputFile file;
  bool open = false;
  std::optional<std::string> error;  // the first failed write
  std::string buf;
  std::vector<Track> tracks;
  std::vector<std::string> gpu_groups{"GPU"};
  uint32_t gpu_group = 0;
  int next_tid = 1;
  size_t spans = 0;
  size_t buffered = 0;
  size_t peak = 0;
  uint64_t unmapped = 0;
  uint64_t without_time = 0;
  uint64_t refused = 0;
  uint64_t late = 0;

  void flush_buf(bool force) {
    if (buf.size() < kFlushBytes && !force) return;
    if (!error) {
      if (Result<void> w = file.write(buf); !w) error = w.error().message;
    }
    buf.clear();
  }

  Track& track(std::string_view name, bool gpu) {
    const uint32_t group = gpu ? gpu_group : 0;
    for (Track& t : tracks) {
      if (t.gpu == gpu && t.group == group && t.name == name) return t;
    }
    Track t;
    t.name = std::string(name);
    t.gpu = gpu;
    t.group = group;
    t.pid = gpu ? trace_events::kGpuPid + static_cast<int>(group) : trace_events::kCpuPid;
    t.index = static_cast<uint32_t>(tracks.size());
    tracks.push_back(std::move(t));
    return tracks.back();
  }

  void emit(const Track& t, const Lane& l, char ph, const Span& s) {
    trace_events::append_span_event(buf, ph, t.pid, l.tid, t.gpu, s.name, s.begin_ns, s.end_ns,
                                    s.frame_id, s.site);
  }

  // Closes, in every lane of `t`, the open spans that ended by `ns`.
  void close_ended(Track& t, int64_t ns) {
    for (Lane& l : t.lanes) {
      while (!l.open.empty() && l.open.back().end_ns <= ns) {
        emit(t, l, 'E', l.open.back());
        l.last_ts = l.open.back().end_ns;
        l.open.pop_back();
        --t.open;
        --buffered;
      }
    }
  }

  void write_span(Track& t, Span s) {
    if (t.last_written && sorts_before(s, *t.last_written)) {
      ++late;
    } else {
      t.last_written = Span{{}, s.begin_ns, s.end_ns, s.frame_id, nullptr, s.seq};
    }
    close_ended(t, s.begin_ns);
    size_t l = 0;
    for (; l < t.lanes.size(); ++l) {
      const Lane& lane = t.lanes[l];
      if (lane.last_ts <= s.begin_ns && (lane.open.empty() || lane.open.back().end_ns >= s.end_ns))
        break;
    }
    if (l == t.lanes.size()) {
      Lane lane;
      lane.tid = next_tid++;
      std::string lane_name = t.name;
      if (l > 0) lane_name += " #" + std::to_string(l + 1);
      // Lanes of one track sort together, in order, whenever they were made.
      const int64_t sort_index = (int64_t{t.index} + 1) * 1000 + static_cast<int64_t>(l);
      trace_events::append_lane_meta(buf, t.pid, lane.tid, lane_name, sort_index);
      t.lanes.push_back(std::move(lane));
    }
    Lane& lane = t.lanes[l];
    emit(t, lane, 'B', s);
    lane.last_ts = s.begin_ns;
    lane.open.push_back(std::move(s));
    ++t.open;
    flush_buf(false);
  }

  static bool heap_later(const Span& a, const Span& b) { return sorts_before(b, a); }

  // Writes `s` (held, counted in `buffered`): opens it, or refuses it when
  // max_open_spans of its track are open after those that ended.
  void write_or_refuse(Track& t, Span s) {
    close_ended(t, s.begin_ns);
    if (t.open >= desc.max_open_spans) {
      ++refused;
      --spans;
      --buffered;
      return;
    }
    write_span(t, std::move(s));
  }

  bool add(std::string_view track_name, std::string_view name, int64_t begin_ns, int64_t end_ns,
           bool gpu, int64_t frame_id, const ZoneSite* site) {
    if (!open || end_ns < begin_ns) {
      ++refused;
      return false;
    }
    Track& t = track(track_name, gpu);
    Span s{std::string(name), begin_ns, end_ns, frame_id, site, t.next_seq++};
    ++spans;
    ++buffered;
    if (t.waiting.size() < desc.window_spans) {
      t.waiting.push_back(std::move(s));
      std::push_heap(t.waiting.begin(), t.waiting.end(), heap_later);
    } else if (sorts_before(s, t.waiting.front())) {
      // The window is full: the earliest of it and `s` is written.
      write_or_refuse(t, std::move(s));
    } else {
      std::pop_heap(t.waiting.begin(), t.waiting.end(), heap_later);
      std::swap(s, t.waiting.back());
      std::push_heap(t.waiting.begin(), t.waiting.end(), heap_later);
      write_or_refuse(t, std::move(s));
    }
    // Measured once the span is placed: at most window_spans waiting and
    // max_open_spans open per track.
    peak = std::max(peak, buffered);
    return true;
  }

  Result<void> finish(bool partial, std::string_view reason) {
    if (!open) return make_error("the trace is not open");
    for (Track& t : tracks) {
      while (!t.waiting.empty()) {
        std::pop_heap(t.waiting.begin(), t.waiting.end(), heap_later);
        Span s = std::move(t.waiting.back());
        t.waiting.pop_back();
        write_or_refuse(t, std::move(s));
      }
      close_ended(t, INT64_MAX);
    }
    buf += "\n],\"otherData\":{\"clock\":";
    trace_events::append_escaped(buf, kHostClockName);
    buf += ",\"time_unit\":\"us, host clock\",\"gpu_zones_unmapped\":" + std::to_string(unmapped) +
           ",\"gpu_zones_without_time\":" + std::to_string(without_time) +
           ",\"spans_refused\":" + std::to_string(refused) +
           ",\"spans_late\":" + std::to_string(late) +
           ",\"window_spans\":" + std::to_string(desc.window_spans) +
           ",\"partial\":" + (partial ? "true" : "false");
    if (partial) {
      buf += ",\"partial_reason\":";
      trace_events::append_escaped(buf, reason);
    }
    buf += "}}\n";
    flush_buf(true);
    open = false;
    if (error) {
      file.abandon();
      return make_error(*error);
    }
    return file.commit();
  }
};

ChromeTraceWriter::ChromeTraceWriter(ChromeTraceWriterDesc desc) : impl_(std::make_unique<Impl>()) {
  impl_->desc = desc;
  impl_->desc.window_spans = std::max<uint32_t>(desc.window_spans, 1);
  impl_->desc.max_open_spans = std::max<uint32_t>(desc.max_open_spans, 1);
}

ChromeTraceWriter::~ChromeTraceWriter() = default;  // OutputFile abandons an uncommitted file

Result<void> ChromeTraceWriter::open(const std::string& path) {
  Impl& m = *impl_;
  if (m.open) return make_error("the trace is already open");
  if (Result<void> r = m.file.open(path); !r) return r;
  m.open = true;
  m.error.reset();
  m.buf = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  trace_events::append_cpu_process_meta(m.buf);
  for (uint32_t g = 0; g < m.gpu_groups.size(); ++g)
    trace_events::append_gpu_process_meta(m.buf, g, m.gpu_groups[g]);
  m.flush_buf(false);
  return {};
}

bool ChromeTraceWriter::is_open() const { return impl_->open; }

void ChromeTraceWriter::add_frame(std::string_view queue_name, const ProfilerFrame& f) {
  Impl& m = *impl_;
  trace_events::frame_spans(
      queue_name, f,
      [&m](std::string_view track, std::string_view name, int64_t b, int64_t e, bool gpu,
           int64_t id, const ZoneSite* site) { m.add(track, name, b, e, gpu, id, site); },
      m.without_time, m.unmapped);
}

bool ChromeTraceWriter::add_span(std::string_view track, std::string_view name, int64_t begin_ns,
                                 int64_t end_ns, bool gpu, int64_t frame_id) {
  return impl_->add(track, name, begin_ns, end_ns, gpu, frame_id, nullptr);
}

void ChromeTraceWriter::set_gpu_group(std::string_view name) {
  Impl& m = *impl_;
  const std::string process = name.empty() ? std::string("GPU") : "GPU " + std::string(name);
  for (uint32_t i = 0; i < m.gpu_groups.size(); ++i) {
    if (m.gpu_groups[i] == process) {
      m.gpu_group = i;
      return;
    }
  }
  m.gpu_groups.push_back(process);
  m.gpu_group = static_cast<uint32_t>(m.gpu_groups.size() - 1);
  if (m.open) trace_events::append_gpu_process_meta(m.buf, m.gpu_group, process);
}

Result<void> ChromeTraceWriter::close() { return impl_->finish(false, {}); }

Result<void> ChromeTraceWriter::close_partial(std::string_view reason) {
  return impl_->finish(true, reason);
}

size_t ChromeTraceWriter::span_count() const { return impl_->spans; }
uint64_t ChromeTraceWriter::gpu_zones_unmapped() const { return impl_->unmapped; }
uint64_t ChromeTraceWriter::gpu_zones_without_time() const { return impl_->without_time; }
uint64_t ChromeTraceWriter::spans_refused() const { return impl_->refused; }
uint64_t ChromeTraceWriter::spans_late() const { return impl_->late; }
size_t ChromeTraceWriter::buffered_spans() const { return impl_->buffered; }
size_t ChromeTraceWriter::peak_buffered_spans() const { return impl_->peak; }

}  // namespace latlab
