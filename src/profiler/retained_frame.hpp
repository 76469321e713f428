// A collected frame as the profiler keeps it: per zone only what the device
// and the recording gave (40 bytes), and the frame's host mapping. The full
// ProfilerFrame (tree links, depths, durations, host times) is built from it
// on demand, by frame()/latest_frame() and for the frame sink, so that
// collection, which runs inside next_frame on the caller's frame loop, stays
// small (see BM_ProfilerCollectFrame2048).
#pragma once

#include <cstdint>
#include <vector>

#include "latlab/profiler.hpp"
#include "profiler/frame_slope.hpp"

namespace latlab::profiler_detail {

struct CompactZone {
  const void* what = nullptr;  // the name, or with has_site its ZoneSite (as recorded)
  uint64_t begin_ticks = 0;  // masked; 0 when never written
  uint64_t end_ticks = 0;
  uint32_t parent = kNoZone;  // as recorded: an earlier zone of the frame, or kNoZone
  uint32_t thread = 0;
  QueryStatus status = QueryStatus::not_ready;
  bool orphan = false;
  bool has_site = false;
  const char* name() const {
    return has_site ? static_cast<const ZoneSite*>(what)->name : static_cast<const char*>(what);
  }
  const ZoneSite* site() const { return has_site ? static_cast<const ZoneSite*>(what) : nullptr; }
};
static_assert(sizeof(CompactZone) == 40);

// A CPU zone as recorded (host clock).
struct CompactCpuZone {
  const void* what = nullptr;  // the name, or with has_site its ZoneSite
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  uint32_t parent = kNoZone;  // an earlier CPU zone of the frame, or kNoZone
  uint32_t thread = 0;
  bool orphan = false;
  bool has_site = false;
  const char* name() const {
    return has_site ? static_cast<const ZoneSite*>(what)->name : static_cast<const char*>(what);
  }
  const ZoneSite* site() const { return has_site ? static_cast<const ZoneSite*>(what) : nullptr; }
};

// ticks -> host ns for one frame: h0 + slope.at(ticks.signed_delta(anchor, t)).
struct FrameMapping {
  bool mapped = false;
  uint64_t anchor = 0;
  int64_t h0 = 0;
  FixedSlope slope;
  int64_t error_ns = 0;
};

struct RetainedFrame {
  uint64_t frame_id = 0;
  std::vector<CompactZone> zones;  // capacity reserved at create
  std::vector<int64_t> cpu_times;  // begin/end per zone, with cpu_zone_times
  std::vector<CompactCpuZone> cpu_zones;  // capacity reserved at create
  uint32_t zones_dropped = 0;
  uint32_t cpu_zones_dropped = 0;
  bool retired = false;
  bool durations_only = false;  // begin ticks are 0, end ticks the span: none leaves here
  int64_t cpu_begin_ns = 0;
  int64_t cpu_end_ns = 0;
  FrameMapping mapping;
};

// Builds `out` from `in` (reusing out's capacity). `last_child` is scratch of
// at least in.zones.size() entries.
void expand_frame(const RetainedFrame& in, const TickFormat& ticks, ProfilerFrame& out,
                  std::vector<uint32_t>& last_child);

}  // namespace latlab::profiler_detail
