// SimClock: a deterministic simulated device clock for tests. It hands out
// calibration pairs (as a Calibrator::Source) and knows the truth: the exact
// host time of any device tick, so tests can check a mapping's error against
// its bound.
//
// The device clock is a straight line against the host clock:
//   true host ns of unwrapped tick u = offset_ns + ns(u) * (1 + drift_ppm * 1e-6)
// where ns(u) = u * tick period (exact). Raw ticks are u masked to valid_bits.
// A pair read at host time h (from the caller's host clock) reports host h,
// a deviation dev, and the device ticks at true host time h + err, with
// err uniform in [-error_fraction * dev, +error_fraction * dev] (seeded).
//
// Thread safety: sample() and source() may be called from any thread (one
// mutex); the truth functions are const and lock-free. The host clock
// function must itself be thread-safe if sample() runs on another thread.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>

#include "latlab/calibrator.hpp"
#include "latlab/clock_model.hpp"
#include "latlab/result.hpp"
#include "latlab/tick_format.hpp"

namespace latlab {

struct SimClockDesc {
  TickFormat ticks{};            // device tick period and valid bits; default 1 ns, 64 bits
  int64_t offset_ns = 0;         // true host ns at unwrapped device tick 0
  double drift_ppm = 0.0;        // host ns per device ns minus one, in ppm, as
                                 // ClockFit::drift_ppm() reports it (+: device runs slow);
                                 // real clocks: within +-100
  int64_t deviation_ns = 1'000;  // smallest deviation a good pair reports, ns
  // A good pair's deviation: deviation_ns + uniform [0, deviation_spread_ns].
  int64_t deviation_spread_ns = 1'000;
  double error_fraction = 1.0;            // actual host error within +-fraction * deviation
                                          // (> 1: a device that understates its deviation)
  uint32_t bad_every = 0;                 // every n-th pair is bad (0: none)
  int64_t bad_deviation_ns = 1'000'000;   // a bad pair's deviation (its error is as large)
  uint32_t fail_every = 0;                // every n-th sample() call fails with an Error (0: never)
  bool estimated = false;                 // mark pairs as bracketed estimates
  uint64_t seed = 1;                      // jitter and deviation randomness
  std::function<int64_t()> host_clock{};  // host time source; null = host_now_ns()
};

class SimClock {
 public:
  explicit SimClock(SimClockDesc desc = {});
  SimClock(const SimClock&) = delete;
  SimClock& operator=(const SimClock&) = delete;

  // One pair now (host time from the desc's host clock). Error on scripted
  // failures (fail_every, set_failing).
  Result<CalibrationPair> sample();
  // sample() as a Calibrator source; this SimClock must outlive it.
  Calibrator::Source source();
  // Every later sample() fails (true) or behaves as scripted (false).
  void set_failing(bool failing);
  uint64_t calls() const;  // sample() calls so far

  // --- truth -------------------------------------------------------------
  // Unwrapped device ticks at true host time `host_ns` (floored to the tick).
  uint64_t device_ticks_unwrapped_at(int64_t host_ns) const;
  // Raw (masked) device ticks at true host time `host_ns`.
  uint64_t device_ticks_at(int64_t host_ns) const {
    return device_ticks_unwrapped_at(host_ns) & desc_.ticks.mask();
  }
  // True host ns (rounded) of an unwrapped device tick.
  int64_t true_host_ns_unwrapped(uint64_t unwrapped_ticks) const;
  // True host ns of a raw tick, taking the wrap occurrence nearest `near_host_ns`.
  int64_t true_host_ns(uint64_t raw_ticks, int64_t near_host_ns) const;

  const SimClockDesc& desc() const { return desc_; }
  const TickFormat& ticks() const { return desc_.ticks; }
  int64_t now() const;  // the desc's host clock

 private:
  double next_unit();  // uniform [0, 1), under mu_

  SimClockDesc desc_;
  mutable std::mutex mu_;
  uint64_t rng_state_ = 0;
  uint64_t calls_ = 0;
  bool failing_ = false;
};

}  // namespace latlab
