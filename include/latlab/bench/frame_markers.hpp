// Frame markers and the stages computed from them.
//
// One FrameRecord per scheduled frame, joined by its frame id (its index in
// the run). Every host time is host-clock ns (latlab/host_clock.hpp); GPU
// begin/end are raw device ticks plus their mapping onto the host clock by the
// clock model. A marker is present only when its bit is set in `present`: an
// absent marker is never read as 0.
//
// A stage is the span between two markers of the same frame, computed per
// frame; a frame lacking either marker counts as `missing` for that stage and
// for nothing else. No value is ever substituted.
//
// FrameRecord is 128 bytes: a 60 000-frame run holds 7.7 MB of markers.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "latlab/query_status.hpp"
#include "latlab/stats.hpp"
#include "latlab/tick_format.hpp"

namespace latlab {

enum class Marker : uint8_t {
  deadline,        // scheduled deadline
  generator_wake,  // generator thread returned from its sleep
  signal,          // generator published the signal
  consumer_wake,   // consumer thread returned from its wait
  cpu_start,       // CPU simulation step begins
  cpu_end,
  submit_start,    // host time before LatencyDevice::submit_frame
  submit_end,      // and after it
  gpu_begin,       // device ticks before the first pass (status ok)
  gpu_end,         // device ticks after the last pass (status ok)
  gpu_begin_host,  // gpu_begin mapped onto the host clock
  gpu_end_host,    // gpu_end mapped onto the host clock
  fence_wake,      // host time right after the CPU saw completion
  poll_wake,       // host time right after the polling thread saw completion
};
inline constexpr size_t kMarkerCount = 14;
std::string_view to_string(Marker m);

// Frame flags (FrameRecord::flags).
inline constexpr uint8_t kFrameConsumerBehind =
    1;  // the signal was already pending when the consumer looked
inline constexpr uint8_t kFrameDeviceError = 2;  // submit_frame or wait_frame failed
inline constexpr uint8_t kFramePolled = 4;  // the poller spun for this frame: poll_cpu_ns is set

struct FrameRecord {
  int64_t deadline_ns = 0;
  int64_t generator_wake_ns = 0;
  int64_t signal_ns = 0;
  int64_t consumer_wake_ns = 0;
  int64_t cpu_start_ns = 0;
  int64_t cpu_end_ns = 0;
  int64_t submit_start_ns = 0;
  int64_t submit_end_ns = 0;
  uint64_t gpu_begin_ticks = 0;
  uint64_t gpu_end_ticks = 0;
  int64_t gpu_begin_host_ns = 0;
  int64_t gpu_end_host_ns = 0;
  int64_t fence_wake_ns = 0;
  int64_t poll_wake_ns = 0;
  uint32_t map_error_ns = 0;  // clock-model bound of the mapped GPU times (saturates)
  uint32_t poll_cpu_ns = 0;   // CPU time the poller spent on the frame (kFramePolled; saturates)
  uint16_t present = 0;       // bit (1 << Marker) per marker present
  QueryStatus gpu_status = QueryStatus::missing;    // of gpu_begin/gpu_end
  QueryStatus fence_status = QueryStatus::missing;  // of fence_wake
  // of poll_wake: ok, not_ready (the spin limit came first), invalid (the
  // driver could not tell), missing (not polled)
  QueryStatus poll_status = QueryStatus::missing;
  uint8_t flags = 0;

  bool has(Marker m) const { return (present >> static_cast<unsigned>(m)) & 1u; }
  void set(Marker m) {
    present = static_cast<uint16_t>(present | (1u << static_cast<unsigned>(m)));
  }
  // The host-ns value of a host marker (not gpu_begin/gpu_end, which are ticks).
  int64_t host_ns(Marker m) const;
  bool operator==(const FrameRecord&) const = default;
};
static_assert(sizeof(FrameRecord) <= 128, "keep FrameRecord compact (RSS budget)");

// What the result reports per frame set. The first seven are the stages of
// the latency path, then the three observers of completion, then diagnostics
// kept outside every stage and total.
enum class Series : uint8_t {
  signal_to_consumer_wake,    // consumer_wake - signal
  cpu_processing,             // cpu_end - cpu_start
  cpu_end_to_submit_start,    // submit_start - cpu_end
  workload_submit_cpu_span,   // submit_end - submit_start
  submit_start_to_gpu_begin,  // gpu_begin_host - submit_start
  gpu_execution,              // gpu_end - gpu_begin, in device ticks -> ns (no mapping)
  gpu_end_to_fence_wake,      // fence_wake - gpu_end_host
  core_latency,               // gpu_end_host - signal (observer: GPU timestamps + clock model)
  fence_latency,              // fence_wake - signal (observer: fence wake on the CPU)
  poll_latency,               // poll_wake - signal (observer: a CPU thread polling the fence)
  timer_lateness,             // signal - deadline (diagnostic, not in any stage or total)
  clock_map_error,            // the clock model's error bound on gpu_end_host (diagnostic)
  gpu_end_to_poll_wake,       // poll_wake - gpu_end_host (diagnostic: beside gpu_end_to_fence_wake)
  poll_cpu,                   // CPU time of the polling thread for the frame (diagnostic)
};
inline constexpr size_t kSeriesCount = 14;
inline constexpr size_t kStageCount = 7;  // Series 0..6 are the stages
std::string_view to_string(Series s);

// The value of series `s` for one frame in ns, or nullopt when a marker it
// needs is absent or unreliable. `ticks` converts gpu_execution.
std::optional<int64_t> series_value_ns(const FrameRecord& f, Series s, const TickFormat& ticks);

// Distributions (microseconds) of every series over `frames`. `scratch` is
// reused between series so summarising allocates one buffer.
using SeriesDistributions = std::array<Distribution, kSeriesCount>;
SeriesDistributions summarize_frames(std::span<const FrameRecord> frames, const TickFormat& ticks);

// Why frames lacked markers, counted (a frame may count in several).
struct MissingBreakdown {
  uint64_t gpu_not_ok = 0;    // gpu_status != ok (not_ready, invalid, missing, ...)
  uint64_t gpu_unmapped = 0;  // GPU ticks ok but the clock model could not map them
  uint64_t fence_not_ok = 0;  // fence_status != ok
  uint64_t poll_limit = 0;    // the poll spin's limit came before completion (not_ready)
  uint64_t poll_not_ok = 0;   // poll_status != ok (limit, failed, or not polled)
  uint64_t device_error = 0;  // submit/wait failed
  std::array<uint64_t, kQueryStatusCount> gpu_status_counts{};  // by QueryStatus value
  bool operator==(const MissingBreakdown&) const = default;
};
MissingBreakdown count_missing(std::span<const FrameRecord> frames);

}  // namespace latlab
