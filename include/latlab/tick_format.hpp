// Device ticks -> nanoseconds, integer-exact.
//
// A device reports a tick period (Vulkan: float timestampPeriod in ns) and the
// number of valid bits of its timestamps. The period is held as an exact
// rational num/den (41.666668 ns -> 125/3) so conversions do not accumulate
// float error over long runs, and differences are taken modulo 2^valid_bits
// so a counter that wraps still gives the right span.
#pragma once

#include <cstdint>

namespace latlab {

struct TickFormat {
  uint64_t period_num = 1;   // tick period = period_num / period_den ns
  uint64_t period_den = 1;
  uint32_t valid_bits = 64;  // 1..64

  // Best rational for a float period (den <= 1e6), as Vulkan reports it.
  static TickFormat from_period_ns(double period_ns, uint32_t valid_bits);

  uint64_t mask() const { return valid_bits >= 64 ? ~0ull : ((1ull << valid_bits) - 1); }
  double period_ns() const { return static_cast<double>(period_num) / static_cast<double>(period_den); }

  // Ticks elapsed from `begin` to `end`, modulo 2^valid_bits (one wrap at most).
  uint64_t elapsed_ticks(uint64_t begin, uint64_t end) const { return (end - begin) & mask(); }

  // Tick count -> ns, rounded to nearest, exact for counts below 2^64.
  int64_t ticks_to_ns(uint64_t ticks) const;

  // ns spanned from `begin` to `end` ticks (wrap-aware).
  int64_t span_ns(uint64_t begin, uint64_t end) const { return ticks_to_ns(elapsed_ticks(begin, end)); }
};

}  // namespace latlab
