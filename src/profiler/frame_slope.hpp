// A frame's host mapping as one fixed-point multiply (the profiler's
// collection and expansion). Tick arithmetic itself is TickFormat's.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

#include "core/int128.hpp"

namespace latlab::profiler_detail {

// Host ns per device tick over one frame, as a signed 32.32 fixed-point
// number: a zone's host time is then one 64x64-bit multiply from its tick
// offset, exact to well below 1 ns over any frame (the error of the slope,
// 2^-33 ns per tick, reaches 0.5 ns only after 2^32 ticks).
struct FixedSlope {
  int64_t q32 = 0;
  int64_t at(int64_t offset_ticks) const {
    // + 2^31, then floor (arithmetic shift): nearest, halves up.
    return static_cast<int64_t>((static_cast<int128_t>(offset_ticks) * q32 + (int128_t{1} << 31)) >>
                                32);
  }
};

// (host_span / tick_span) in 32.32, rounded to nearest; a zero slope for an
// empty span; nullopt when it does not fit (a tick longer than 2^31 ns: no
// real clock).
inline std::optional<FixedSlope> fixed_slope(int64_t host_span, int64_t tick_span) {
  if (tick_span <= 0) return FixedSlope{};
  const int128_t num = static_cast<int128_t>(host_span) * (int128_t{1} << 32);
  const int128_t half = tick_span / 2;
  const int128_t q = (num >= 0 ? num + half : num - half) / tick_span;
  if (q > std::numeric_limits<int64_t>::max() || q < std::numeric_limits<int64_t>::min()) {
    return std::nullopt;
  }
  return FixedSlope{static_cast<int64_t>(q)};
}

}  // namespace latlab::profiler_detail
