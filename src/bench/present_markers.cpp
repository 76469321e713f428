#include "latlab/bench/present_markers.hpp"

#include <algorithm>

namespace latlab {

std::string_view to_string(PresentSeries s) {
  switch (s) {
    case PresentSeries::gpu_end_to_present_start:
      return "gpu_end_to_present_start";
    case PresentSeries::present_cpu_span:
      return "present_cpu_span";
    case PresentSeries::present_to_complete:
      return "present_to_complete";
    case PresentSeries::signal_to_present:
      return "signal_to_present";
  }
  return "unknown";
}

std::string_view to_string(ScreenSeries s) {
  switch (s) {
    case ScreenSeries::present_to_screen:
      return "present_to_screen";
    case ScreenSeries::signal_to_screen:
      return "signal_to_screen";
  }
  return "unknown";
}

std::optional<int64_t> present_value_ns(const FrameRecord& f, const PresentRecord& p,
                                        PresentSeries s) {
  if (!p.has(PresentRecord::kStart)) return std::nullopt;
  switch (s) {
    case PresentSeries::gpu_end_to_present_start:
      if (!f.has(Marker::gpu_end_host)) return std::nullopt;
      return p.present_start_ns - f.gpu_end_host_ns;
    case PresentSeries::present_cpu_span:
      if (!p.has(PresentRecord::kEnd)) return std::nullopt;
      return p.present_end_ns - p.present_start_ns;
    case PresentSeries::present_to_complete:
      if (!p.has(PresentRecord::kComplete)) return std::nullopt;
      return p.present_complete_ns - p.present_start_ns;
    case PresentSeries::signal_to_present:
      if (!f.has(Marker::signal)) return std::nullopt;
      return p.present_start_ns - f.signal_ns;
  }
  return std::nullopt;
}

std::optional<int64_t> screen_value_ns(const FrameRecord& f, const PresentRecord& p,
                                       size_t observer, ScreenSeries s) {
  if (observer >= kMaxScreenObservers || !p.has_screen(observer)) return std::nullopt;
  const int64_t screen = p.screen_ns[observer];
  switch (s) {
    case ScreenSeries::present_to_screen:
      if (!p.has(PresentRecord::kStart)) return std::nullopt;
      return screen - p.present_start_ns;
    case ScreenSeries::signal_to_screen:
      if (!f.has(Marker::signal)) return std::nullopt;
      return screen - f.signal_ns;
  }
  return std::nullopt;
}

namespace {

template <class F>
Distribution summarize_values(size_t n, std::vector<double>& scratch, F value) {
  scratch.clear();
  uint64_t missing = 0;
  for (size_t i = 0; i < n; ++i) {
    if (const std::optional<int64_t> v = value(i)) {
      scratch.push_back(static_cast<double>(*v) / 1000.0);
    } else {
      ++missing;
    }
  }
  return summarize_in_place(scratch, missing);
}

}  // namespace

PresentDistributions summarize_present(std::span<const FrameRecord> frames,
                                       std::span<const PresentRecord> present,
                                       size_t observer_count) {
  PresentDistributions out;
  const size_t n = std::min(frames.size(), present.size());
  std::vector<double> scratch;
  scratch.reserve(n);
  for (size_t s = 0; s < kPresentSeriesCount; ++s) {
    out.stages[s] = summarize_values(n, scratch, [&](size_t i) {
      return present_value_ns(frames[i], present[i], static_cast<PresentSeries>(s));
    });
  }
  out.screen.resize(std::min(observer_count, kMaxScreenObservers));
  for (size_t o = 0; o < out.screen.size(); ++o) {
    for (size_t s = 0; s < kScreenSeriesCount; ++s) {
      out.screen[o][s] = summarize_values(n, scratch, [&](size_t i) {
        return screen_value_ns(frames[i], present[i], o, static_cast<ScreenSeries>(s));
      });
    }
  }
  return out;
}

}  // namespace latlab
