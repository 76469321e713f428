#include "latlab/bench/frame_markers.hpp"

#include <vector>

namespace latlab {

std::string_view to_string(Marker m) {
  switch (m) {
    case Marker::deadline:
      return "deadline";
    case Marker::generator_wake:
      return "generator_wake";
    case Marker::signal:
      return "signal";
    case Marker::consumer_wake:
      return "consumer_wake";
    case Marker::cpu_start:
      return "cpu_start";
    case Marker::cpu_end:
      return "cpu_end";
    case Marker::submit_start:
      return "submit_start";
    case Marker::submit_end:
      return "submit_end";
    case Marker::gpu_begin:
      return "gpu_begin";
    case Marker::gpu_end:
      return "gpu_end";
    case Marker::gpu_begin_host:
      return "gpu_begin_host";
    case Marker::gpu_end_host:
      return "gpu_end_host";
    case Marker::fence_wake:
      return "fence_wake";
    case Marker::poll_wake:
      return "poll_wake";
  }
  return "unknown";
}

std::string_view to_string(Series s) {
  switch (s) {
    case Series::signal_to_consumer_wake:
      return "signal_to_consumer_wake";
    case Series::cpu_processing:
      return "cpu_processing";
    case Series::cpu_end_to_submit_start:
      return "cpu_end_to_submit_start";
    case Series::workload_submit_cpu_span:
      return "workload_submit_cpu_span";
    case Series::submit_start_to_gpu_begin:
      return "submit_start_to_gpu_begin";
    case Series::gpu_execution:
      return "gpu_execution";
    case Series::gpu_end_to_fence_wake:
      return "gpu_end_to_fence_wake";
    case Series::core_latency:
      return "core_latency";
    case Series::fence_latency:
      return "fence_latency";
    case Series::poll_latency:
      return "poll_latency";
    case Series::gpu_end_to_poll_wake:
      return "gpu_end_to_poll_wake";
    case Series::poll_cpu:
      return "poll_cpu";
    case Series::timer_lateness:
      return "timer_lateness";
    case Series::clock_map_error:
      return "clock_map_error";
  }
  return "unknown";
}

int64_t FrameRecord::host_ns(Marker m) const {
  switch (m) {
    case Marker::deadline:
      return deadline_ns;
    case Marker::generator_wake:
      return generator_wake_ns;
    case Marker::signal:
      return signal_ns;
    case Marker::consumer_wake:
      return consumer_wake_ns;
    case Marker::cpu_start:
      return cpu_start_ns;
    case Marker::cpu_end:
      return cpu_end_ns;
    case Marker::submit_start:
      return submit_start_ns;
    case Marker::submit_end:
      return submit_end_ns;
    case Marker::gpu_begin_host:
      return gpu_begin_host_ns;
    case Marker::gpu_end_host:
      return gpu_end_host_ns;
    case Marker::fence_wake:
      return fence_wake_ns;
    case Marker::poll_wake:
      return poll_wake_ns;
    case Marker::gpu_begin:
    case Marker::gpu_end:
      break;  // device ticks, not host ns
  }
  return 0;
}

namespace {

std::optional<int64_t> span(const FrameRecord& f, Marker from, Marker to) {
  if (!f.has(from) || !f.has(to)) return std::nullopt;
  return f.host_ns(to) - f.host_ns(from);
}

}  // namespace

std::optional<int64_t> series_value_ns(const FrameRecord& f, Series s, const TickFormat& ticks) {
  switch (s) {
    case Series::signal_to_consumer_wake:
      return span(f, Marker::signal, Marker::consumer_wake);
    case Series::cpu_processing:
      return span(f, Marker::cpu_start, Marker::cpu_end);
    case Series::cpu_end_to_submit_start:
      return span(f, Marker::cpu_end, Marker::submit_start);
    case Series::workload_submit_cpu_span:
      return span(f, Marker::submit_start, Marker::submit_end);
    case Series::submit_start_to_gpu_begin:
      return span(f, Marker::submit_start, Marker::gpu_begin_host);
    case Series::gpu_execution:
      if (!f.has(Marker::gpu_begin) || !f.has(Marker::gpu_end)) return std::nullopt;
      return ticks.span_ns(f.gpu_begin_ticks, f.gpu_end_ticks);
    case Series::gpu_end_to_fence_wake:
      return span(f, Marker::gpu_end_host, Marker::fence_wake);
    case Series::core_latency:
      return span(f, Marker::signal, Marker::gpu_end_host);
    case Series::fence_latency:
      return span(f, Marker::signal, Marker::fence_wake);
    case Series::poll_latency:
      return span(f, Marker::signal, Marker::poll_wake);
    case Series::gpu_end_to_poll_wake:
      return span(f, Marker::gpu_end_host, Marker::poll_wake);
    case Series::poll_cpu:
      if ((f.flags & kFramePolled) == 0) return std::nullopt;
      return static_cast<int64_t>(f.poll_cpu_ns);
    case Series::timer_lateness:
      return span(f, Marker::deadline, Marker::signal);
    case Series::clock_map_error:
      if (!f.has(Marker::gpu_end_host)) return std::nullopt;
      return static_cast<int64_t>(f.map_error_ns);
  }
  return std::nullopt;
}

SeriesDistributions summarize_frames(std::span<const FrameRecord> frames, const TickFormat& ticks) {
  SeriesDistributions out{};
  std::vector<double> scratch;
  scratch.reserve(frames.size());
  for (size_t i = 0; i < kSeriesCount; ++i) {
    const auto s = static_cast<Series>(i);
    scratch.clear();
    uint64_t missing = 0;
    for (const FrameRecord& f : frames) {
      const auto v = series_value_ns(f, s, ticks);
      if (v) {
        scratch.push_back(static_cast<double>(*v) / 1000.0);
      } else {
        ++missing;
      }
    }
    out[i] = summarize_in_place(scratch, missing);
  }
  return out;
}

MissingBreakdown count_missing(std::span<const FrameRecord> frames) {
  MissingBreakdown m;
  for (const FrameRecord& f : frames) {
    if (f.flags & kFrameDeviceError) ++m.device_error;
    const auto st = static_cast<size_t>(f.gpu_status);
    if (st < m.gpu_status_counts.size()) ++m.gpu_status_counts[st];
    if (f.gpu_status != QueryStatus::ok) {
      ++m.gpu_not_ok;
    } else if (!f.has(Marker::gpu_end_host)) {
      ++m.gpu_unmapped;
    }
    if (f.fence_status != QueryStatus::ok) ++m.fence_not_ok;
    if (f.poll_status == QueryStatus::not_ready) ++m.poll_limit;
    if (f.poll_status != QueryStatus::ok) ++m.poll_not_ok;
  }
  return m;
}

}  // namespace latlab
