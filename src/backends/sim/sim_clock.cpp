#include <algorithm>
#include <cmath>
#include <string>

#include "core/int128.hpp"
#include "core/splitmix64.hpp"
#include "latlab/bench/sim.hpp"
#include "latlab/host_clock.hpp"

namespace latlab {

SimClock::SimClock(SimClockDesc desc) : desc_(std::move(desc)), rng_state_(desc_.seed) {
  if (desc_.ticks.valid_bits == 0 || desc_.ticks.valid_bits > 64) desc_.ticks.valid_bits = 64;
  if (desc_.ticks.period_num == 0 || desc_.ticks.period_den == 0) desc_.ticks = TickFormat{};
  desc_.deviation_ns = std::max<int64_t>(desc_.deviation_ns, 0);
  desc_.deviation_spread_ns = std::max<int64_t>(desc_.deviation_spread_ns, 0);
  desc_.bad_deviation_ns = std::max<int64_t>(desc_.bad_deviation_ns, 0);
  desc_.error_fraction = std::max(desc_.error_fraction, 0.0);
  if (desc_.start_ticks) {
    // offset_ns is the true host ns of tick 0: now minus the start ticks' span.
    desc_.offset_ns = 0;
    desc_.offset_ns = now() - true_host_ns_unwrapped(*desc_.start_ticks);
    desc_.start_ticks.reset();
  }
}

int64_t SimClock::now() const { return desc_.host_clock ? desc_.host_clock() : host_now_ns(); }

double SimClock::next_unit() {
  return static_cast<double>(splitmix64_next(rng_state_) >> 11) * 0x1.0p-53;
}

Result<CalibrationPair> SimClock::sample() {
  const int64_t h = now();
  std::lock_guard lock(mu_);
  const uint64_t n = ++calls_;
  if (failing_ || (desc_.fail_every != 0 && n % desc_.fail_every == 0)) {
    return make_error("sim clock: scripted calibration failure (call " + std::to_string(n) + ")");
  }
  const bool bad = desc_.bad_every != 0 && n % desc_.bad_every == 0;
  const int64_t dev =
      bad ? desc_.bad_deviation_ns
          : desc_.deviation_ns +
                static_cast<int64_t>(
                    std::floor(next_unit() * static_cast<double>(desc_.deviation_spread_ns + 1)));
  const double err_span = desc_.error_fraction * static_cast<double>(dev);
  const auto err = static_cast<int64_t>(std::trunc((next_unit() * 2.0 - 1.0) * err_span));
  CalibrationPair p;
  p.host_ns = h;
  p.device_ticks = device_ticks_at(h + err);
  p.max_deviation_ns = dev;
  p.estimated = desc_.estimated;
  return p;
}

Calibrator::Source SimClock::source() {
  return [this] { return sample(); };
}

void SimClock::set_failing(bool failing) {
  std::lock_guard lock(mu_);
  failing_ = failing;
}

uint64_t SimClock::calls() const {
  std::lock_guard lock(mu_);
  return calls_;
}

uint64_t SimClock::device_ticks_unwrapped_at(int64_t host_ns) const {
  // long double: 64-bit mantissa, sub-ns exact for any realistic span.
  using LD = long double;
  const LD device_ns = static_cast<LD>(host_ns - desc_.offset_ns) /
                       (1.0L + static_cast<LD>(desc_.drift_ppm) * 1e-6L);
  const LD ticks = std::floor(device_ns * static_cast<LD>(desc_.ticks.period_den) /
                              static_cast<LD>(desc_.ticks.period_num));
  return static_cast<uint64_t>(static_cast<int128_t>(ticks));  // modular below 0
}

int64_t SimClock::true_host_ns_unwrapped(uint64_t unwrapped_ticks) const {
  using LD = long double;
  const LD device_ns =
      static_cast<LD>(static_cast<uint128_t>(unwrapped_ticks) * desc_.ticks.period_num) /
      static_cast<LD>(desc_.ticks.period_den);
  return desc_.offset_ns + static_cast<int64_t>(std::llroundl(
                               device_ns * (1.0L + static_cast<LD>(desc_.drift_ppm) * 1e-6L)));
}

int64_t SimClock::true_host_ns(uint64_t raw_ticks, int64_t near_host_ns) const {
  const TickFormat& f = desc_.ticks;
  const uint64_t near = device_ticks_unwrapped_at(near_host_ns);
  // The wrap occurrence nearest `near`: a signed, wrap-aware distance.
  return true_host_ns_unwrapped(near + static_cast<uint64_t>(f.signed_delta(near, raw_ticks)));
}

}  // namespace latlab
