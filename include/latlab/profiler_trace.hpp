// Chrome trace event JSON, the format Perfetto (ui.perfetto.dev) and
// chrome://tracing open: CPU and GPU tracks on one time axis, the host clock
// (CLOCK_MONOTONIC ns, written as microseconds with three decimals).
//
// Every span becomes a matched B/E pair on its track. Spans of one track that
// overlap without nesting (siblings that ran concurrently on the device) are
// moved to extra lanes of that track ("<track> #2", ...) so that every lane's
// B/E events nest; no time is altered.
//
// Two writers of the same format:
//   ChromeTraceWriter streams spans to its file as they come, holding a
//     bounded number of them (ChromeTraceWriterDesc): for captures of any
//     length (latlab profile --trace, the examples).
//   ChromeTrace keeps every span in memory and writes the whole trace at the
//     end (to_json): for short captures and tests.
//
// Not thread-safe: build a trace on one thread (e.g. in a frame sink).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "latlab/profiler.hpp"
#include "latlab/result.hpp"

namespace latlab {

class ChromeTrace {
 public:
  // One collected frame of `queue_name`: its GPU zones mapped to the host
  // clock on "GPU <queue> (thread k)", their recording spans (if recorded) on
  // "CPU thread k" (with the thread's CPU zones, ProfilerZone::cpu), and the
  // frame's CPU span on "CPU <queue> frames". GPU zones
  // with an ok time but no host mapping are counted in gpu_zones_unmapped();
  // zones without an ok time in gpu_zones_without_time(); neither is drawn.
  // A zone's spans carry its source location in their args (function, file,
  // line) when it has one (ProfilerZone::site).
  void add_frame(std::string_view queue_name, const ProfilerFrame& frame);
  // A span on a named track in host ns. `gpu` picks the process group; an
  // end before its begin is refused (false) and counted in spans_refused().
  bool add_span(std::string_view track, std::string_view name, int64_t begin_ns, int64_t end_ns,
                bool gpu = false, int64_t frame_id = -1);
  // GPU tracks added from now on go to their own process group "GPU <name>"
  // (one per device of a several-device profile); "" returns to the
  // default group "GPU". Tracks of one name in two groups are two tracks.
  void set_gpu_group(std::string_view name);

  size_t span_count() const { return spans_.size(); }
  uint64_t gpu_zones_unmapped() const { return unmapped_; }
  uint64_t gpu_zones_without_time() const { return without_time_; }
  uint64_t spans_refused() const { return refused_; }

  std::string to_json() const;
  // Writes to_json() as write_file_atomic does (latency_report.hpp): a file
  // atomically, keeping its mode and owner; a FIFO, character device or "-"
  // (standard output) through.
  Result<void> write_file(const std::string& path) const;

 private:
  struct Track {
    std::string name;
    bool gpu = false;
    uint32_t group = 0;  // index in gpu_groups_ (GPU tracks)
  };
  struct Span {
    uint32_t track = 0;
    std::string name;
    int64_t begin_ns = 0;
    int64_t end_ns = 0;
    int64_t frame_id = -1;
    const ZoneSite* site = nullptr;  // a zone's source location, if any
  };
  uint32_t track_index(std::string_view name, bool gpu);
  bool add_span_at(std::string_view track, std::string_view name, int64_t begin_ns, int64_t end_ns,
                   bool gpu, int64_t frame_id, const ZoneSite* site);
  // Appends track `t`'s lanes, tids from `first_tid` on, to `out`, sorting
  // its spans `idx`; returns the number of tids taken (at least one).
  int append_track(std::string& out, uint32_t t, std::vector<uint32_t>& idx, int first_tid) const;

  std::vector<Track> tracks_;
  std::vector<std::string> gpu_groups_{"GPU"};  // process names; [0] the default
  uint32_t gpu_group_ = 0;                      // the group new GPU tracks join
  std::vector<Span> spans_;
  uint64_t unmapped_ = 0;
  uint64_t without_time_ = 0;
  uint64_t refused_ = 0;
};

struct ChromeTraceWriterDesc {
  // Spans of one track held before the earliest is written (default 4096):
  // spans that arrive out of order by up to this many (GPU zones arrive
  // frames after the CPU spans beside them) are still written in time
  // order, in the lanes ChromeTrace would give them.
  uint32_t window_spans = 4096;
  // Spans of one track open at one time, over all its lanes (default 1024):
  // those that contain the instant being written. A span that would open
  // one more is refused and counted in spans_refused().
  uint32_t max_open_spans = 1024;
};

// Streams a Chrome trace to its file. Memory is bounded whatever the
// capture's length: per track at most window_spans waiting and
// max_open_spans open (buffered_spans() counts both), plus the track and
// lane tables and a 64 KiB write buffer.
//
// The edge of the window: a span that arrives after a later-starting span
// of its track was already written (more than window_spans late) is written
// at once, with its times, in the first lane of its track where it nests
// after what that lane has written, else in a new lane; it is counted in
// spans_late(), never dropped.
//
// The file is written as write_output_file writes (core/output_file.hpp):
// a regular file through a temporary file beside it, renamed over the name
// by close() or close_partial(), so the name never holds a half-written
// trace (the destructor, or a failed write, removes the temporary file and
// leaves the old file); a FIFO, a character device or "-" is written
// through as spans come. close_partial() ends the trace with what was
// captured and marks it "partial" in otherData. otherData (clock, counters,
// partial) follows traceEvents in the file.
//
// Owns its file; not copyable. Not thread-safe: one thread adds spans.
class ChromeTraceWriter {
 public:
  explicit ChromeTraceWriter(ChromeTraceWriterDesc desc = {});
  ~ChromeTraceWriter();  // an unclosed file is abandoned (see above)
  ChromeTraceWriter(const ChromeTraceWriter&) = delete;
  ChromeTraceWriter& operator=(const ChromeTraceWriter&) = delete;

  // Checks and opens `path` (check_output_path's rules); a FIFO's open
  // waits for its reader. Spans are accepted from now until close.
  Result<void> open(const std::string& path);
  bool is_open() const;

  // As ChromeTrace's. While the writer is not open a span is refused
  // (counted in spans_refused()).
  void add_frame(std::string_view queue_name, const ProfilerFrame& frame);
  bool add_span(std::string_view track, std::string_view name, int64_t begin_ns, int64_t end_ns,
                bool gpu = false, int64_t frame_id = -1);
  void set_gpu_group(std::string_view name);

  // Writes what is held, closes every lane and commits the file. The error
  // of an earlier failed write, if any, comes back here.
  Result<void> close();
  // As close(), with "partial": true and `reason` in otherData.
  Result<void> close_partial(std::string_view reason);

  // Spans written (or held to be written).
  size_t span_count() const;
  uint64_t gpu_zones_unmapped() const;
  uint64_t gpu_zones_without_time() const;
  uint64_t spans_refused() const;
  uint64_t spans_late() const;
  // Spans held now (waiting in a window or open), and the most ever held.
  size_t buffered_spans() const;
  size_t peak_buffered_spans() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace latlab
