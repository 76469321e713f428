// The one tick module: device ticks -> nanoseconds, integer-exact, and
// wrap-aware tick arithmetic. Every layer (pools, clock model, profiler,
// backends) does its tick arithmetic here.
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
  uint64_t period_num = 1;  // tick period = period_num / period_den ns
  uint64_t period_den = 1;
  uint32_t valid_bits = 64;  // 1..64

  // Best rational for a float period (den <= 1e6), as Vulkan reports it.
  static TickFormat from_period_ns(double period_ns, uint32_t valid_bits);

  // 2^valid_bits - 1, branch-free (0 valid bits reads as 64, as from_period_ns does).
  uint64_t mask() const { return ~0ull >> ((64u - valid_bits) & 63u); }
  double period_ns() const {
    return static_cast<double>(period_num) / static_cast<double>(period_den);
  }

  // Ticks elapsed from `begin` to `end`, modulo 2^valid_bits (one wrap at most).
  uint64_t elapsed_ticks(uint64_t begin, uint64_t end) const { return (end - begin) & mask(); }

  // Signed distance from `from` to `to`: the value nearest zero modulo
  // 2^valid_bits, in [-2^(valid_bits-1), 2^(valid_bits-1)).
  int64_t signed_delta(uint64_t from, uint64_t to) const {
    const uint64_t fwd = (to - from) & mask();
    // Beyond half a wrap the distance is fwd - 2^valid_bits, in unsigned
    // arithmetic: negating (from - to) overflowed at exactly -2^63.
    return fwd <= (mask() >> 1) ? static_cast<int64_t>(fwd)
                                : static_cast<int64_t>(fwd - mask() - 1);
  }
  // True when `a` lies strictly before `b` on the counter (within half a wrap).
  bool before(uint64_t a, uint64_t b) const { return signed_delta(a, b) > 0; }
  // True when `end` lies before `begin`: a span that runs backwards.
  bool backwards(uint64_t begin, uint64_t end) const {
    return elapsed_ticks(begin, end) > (mask() >> 1);
  }

  // Tick count -> ns, rounded to nearest (halves up), exact for counts below
  // 2^64. Inline fast paths for the common periods; 128 bits otherwise.
  int64_t ticks_to_ns(uint64_t ticks) const {
    if (period_num == 1 && period_den == 1) return static_cast<int64_t>(ticks);
    uint64_t product = 0;
    if (!__builtin_mul_overflow(ticks, period_num, &product) && product <= ~0ull - period_den / 2) {
      return static_cast<int64_t>((product + period_den / 2) / period_den);
    }
    return ticks_to_ns_wide(ticks);
  }

  // ns spanned from `begin` to `end` ticks (wrap-aware).
  int64_t span_ns(uint64_t begin, uint64_t end) const {
    return ticks_to_ns(elapsed_ticks(begin, end));
  }

  bool operator==(const TickFormat&) const = default;

 private:
  int64_t ticks_to_ns_wide(uint64_t ticks) const;  // the 128-bit path of ticks_to_ns
};

}  // namespace latlab
