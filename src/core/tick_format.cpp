#include "latlab/tick_format.hpp"

#include <cmath>

#include "core/int128.hpp"

namespace latlab {

TickFormat TickFormat::from_period_ns(double period_ns, uint32_t valid_bits) {
  TickFormat f;
  f.valid_bits = valid_bits == 0 || valid_bits > 64 ? 64 : valid_bits;
  if (!(period_ns > 0.0) || !std::isfinite(period_ns)) return f;  // caller reports the bad period
  // Continued fraction expansion; stop once within float precision of the
  // reported value (Vulkan's period is a float, ~7 significant digits).
  constexpr uint64_t kMaxDen = 1'000'000;
  uint64_t h0 = 0, h1 = 1, k0 = 1, k1 = 0;  // convergents h/k
  double x = period_ns;
  for (int i = 0; i < 32; ++i) {
    const double a_f = std::floor(x);
    const auto a = static_cast<uint64_t>(a_f);
    const uint64_t h2 = a * h1 + h0, k2 = a * k1 + k0;
    if (k2 > kMaxDen) break;
    h0 = h1; h1 = h2; k0 = k1; k1 = k2;
    const double approx = static_cast<double>(h1) / static_cast<double>(k1);
    if (std::fabs(approx - period_ns) <= period_ns * 1e-7) break;
    const double frac = x - a_f;
    if (frac < 1e-12) break;
    x = 1.0 / frac;
  }
  f.period_num = h1 == 0 ? 1 : h1;
  f.period_den = k1 == 0 ? 1 : k1;
  return f;
}

int64_t TickFormat::ticks_to_ns_wide(uint64_t ticks) const {
  const uint128_t n = static_cast<uint128_t>(ticks) * period_num + period_den / 2;
  return static_cast<int64_t>(n / period_den);
}

}  // namespace latlab
