// Present markers and the present stages, per frame, beside FrameRecord.
//
// A run with a present path keeps one PresentRecord per FrameRecord (same
// index; the array is empty without --present, so runs without a present
// path pay nothing). Host times are host-clock ns; a marker is present only
// when its bit is set: an absent marker is never read as 0.
//
// Stages (per frame, never from medians):
//   gpu_end_to_present_start  present_start - gpu_end_host (negative when the
//                             present call starts before the GPU finished)
//   present_cpu_span          present_end - present_start
//   present_to_complete       present_complete - present_start
//   signal_to_present         present_start - signal
// and per screen observer o:
//   present_to_screen         screen[o] - present_start
//   signal_to_screen          screen[o] - signal
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "latlab/bench/frame_markers.hpp"
#include "latlab/core/present_path.hpp"
#include "latlab/stats.hpp"

namespace latlab {

struct PresentRecord {
  int64_t present_start_ns = 0;
  int64_t present_end_ns = 0;
  int64_t present_complete_ns = 0;
  std::array<int64_t, kMaxScreenObservers> screen_ns{};
  uint8_t present = 0;  // bits: kPresentStart.. and kScreen0 << observer

  static constexpr uint8_t kStart = 1, kEnd = 2, kComplete = 4, kScreen0 = 8;
  bool has(uint8_t bit) const { return (present & bit) != 0; }
  bool has_screen(size_t o) const { return has(static_cast<uint8_t>(kScreen0 << o)); }
  void set_screen(size_t o, int64_t ns) {
    screen_ns[o] = ns;
    present = static_cast<uint8_t>(present | (kScreen0 << o));
  }
  bool operator==(const PresentRecord&) const = default;
};
static_assert(kMaxScreenObservers <= 5, "screen bits must fit PresentRecord::present");

enum class PresentSeries : uint8_t {
  gpu_end_to_present_start,
  present_cpu_span,
  present_to_complete,
  signal_to_present,
};
inline constexpr size_t kPresentSeriesCount = 4;
std::string_view to_string(PresentSeries s);

enum class ScreenSeries : uint8_t { present_to_screen, signal_to_screen };
inline constexpr size_t kScreenSeriesCount = 2;
std::string_view to_string(ScreenSeries s);

// One frame's value in ns, nullopt when a marker it needs is absent.
std::optional<int64_t> present_value_ns(const FrameRecord& f, const PresentRecord& p,
                                        PresentSeries s);
std::optional<int64_t> screen_value_ns(const FrameRecord& f, const PresentRecord& p,
                                       size_t observer, ScreenSeries s);

// Distributions (us) over frames (frames[i] pairs with present[i]).
struct PresentDistributions {
  std::array<Distribution, kPresentSeriesCount> stages{};
  // per observer index (as PresentInfo::observers)
  std::vector<std::array<Distribution, kScreenSeriesCount>> screen;
  bool operator==(const PresentDistributions&) const = default;
};
PresentDistributions summarize_present(std::span<const FrameRecord> frames,
                                       std::span<const PresentRecord> present,
                                       size_t observer_count);

}  // namespace latlab
