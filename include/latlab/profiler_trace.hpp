// Chrome trace event JSON, the format Perfetto (ui.perfetto.dev) and
// chrome://tracing open: CPU and GPU tracks on one time axis, the host clock
// (CLOCK_MONOTONIC ns, written as microseconds with three decimals).
//
// Every span becomes a matched B/E pair on its track. Spans of one track that
// overlap without nesting (siblings that ran concurrently on the device) are
// moved to extra lanes of that track ("<track> #2", ...) so that every lane's
// B/E events nest; no time is altered.
//
// Not thread-safe: build a trace on one thread (e.g. in a frame sink).
#pragma once

#include <cstdint>
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

  std::vector<Track> tracks_;
  std::vector<std::string> gpu_groups_{"GPU"};  // process names; [0] the default
  uint32_t gpu_group_ = 0;                      // the group new GPU tracks join
  std::vector<Span> spans_;
  uint64_t unmapped_ = 0;
  uint64_t without_time_ = 0;
  uint64_t refused_ = 0;
};

}  // namespace latlab
