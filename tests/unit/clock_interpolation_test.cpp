// ClockInterpolation on simulated clocks (virtual host time): a time between
// two pairs is mapped within a bound set by the pairs' deviations, whatever
// the drift, far below what a fit extrapolating from its newest pair can
// promise; wraps; times outside the pairs; a clock that bends between pairs.
#include "latlab/clock_interpolation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "latlab/bench/sim.hpp"

namespace latlab {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kSecond = 1'000 * kMs;

struct VirtualClock {
  int64_t now = 0;
  std::function<int64_t()> fn() {
    return [this] { return now; };
  }
};

// Pairs from `clock` at host times start, start + step, ... (count of them).
std::vector<CalibrationPair> sample_pairs(SimClock& clock, VirtualClock& vc, int64_t start,
                                          int64_t step, int count) {
  std::vector<CalibrationPair> pairs;
  for (int i = 0; i < count; ++i) {
    vc.now = start + i * step;
    Result<CalibrationPair> p = clock.sample();
    EXPECT_TRUE(p.ok());
    if (p) pairs.push_back(*p);
  }
  return pairs;
}

struct Scan {
  int64_t max_err = 0;
  int64_t max_bound = 0;
  bool all_within = true;
  bool all_between = true;
  std::string first_miss;
};

// Maps the device ticks at host times from..to (step) and compares them with
// the truth. (A pair's ticks are read up to its deviation off its host time:
// keep from..to a little inside the pairs.)
Scan scan(const SimClock& clock, const ClockInterpolation& interp, int64_t from, int64_t to,
          int64_t step) {
  Scan s;
  for (int64_t h = from; h <= to; h += step) {
    const uint64_t tick = clock.device_ticks_at(h);
    const std::optional<InterpolatedTime> m = interp.map(tick, h + 3 * kMs);  // a nearby host time
    if (!m) {
      s.all_within = false;
      s.first_miss = "not mapped at host " + std::to_string(h);
      return s;
    }
    const int64_t err = std::llabs(m->time.host_ns - clock.true_host_ns(tick, h));
    s.max_err = std::max(s.max_err, err);
    s.max_bound = std::max(s.max_bound, m->time.error_ns);
    s.all_between = s.all_between && m->between_pairs;
    if (err > m->time.error_ns && s.all_within) {
      s.all_within = false;
      s.first_miss = "at host " + std::to_string(h) + ": error " + std::to_string(err) +
                     " ns > bound " + std::to_string(m->time.error_ns) + " ns";
    }
  }
  return s;
}

// 100 ppm of drift, pairs 1 s apart with errors up to their deviations
// (2-3 us): between the pairs every time is within the bound and the bound is
// the pairs' own, ~3 us; the one-pair fit the run starts with promises
// 500 us a second from its pair, and a fit of all pairs still grows with the
// distance from its anchor.
TEST(ClockInterpolation, BetweenPairsTheBoundIsThePairsNotTheDrift) {
  VirtualClock vc;
  SimClock clock(SimClockDesc{.offset_ns = -kSecond,
                              .drift_ppm = 100.0,
                              .deviation_ns = 2'000,
                              .deviation_spread_ns = 1'000,
                              .error_fraction = 1.0,
                              .seed = 7,
                              .host_clock = vc.fn()});
  const std::vector<CalibrationPair> pairs = sample_pairs(clock, vc, 10 * kSecond, kSecond, 4);
  ClockModel model(clock.ticks());
  for (const CalibrationPair& p : pairs) ASSERT_TRUE(model.add_pair(p));
  const ClockInterpolation interp(clock.ticks(), pairs, model.fit());
  EXPECT_EQ(interp.pair_count(), 4u);
  EXPECT_EQ(interp.dropped_pairs(), 0u);
  EXPECT_EQ(interp.misfit_ns(), 0);

  const Scan s = scan(clock, interp, 10 * kSecond + kMs, 13 * kSecond - kMs, 7 * kMs);
  EXPECT_TRUE(s.all_within) << s.first_miss;
  EXPECT_TRUE(s.all_between);
  EXPECT_LE(s.max_bound, 3'000 + 1 + 1 + 2);  // the largest pair bound + rounding
  EXPECT_GT(s.max_err, 0);                    // the pairs' errors show

  // The fit of the first pair alone, half a second on: 500 ppm of unknown drift.
  ClockModel first(clock.ticks());
  ASSERT_TRUE(first.add_pair(pairs[0]));
  const MappedTime online = first.fit()->map(clock.device_ticks_at(10 * kSecond + kSecond / 2));
  EXPECT_GT(online.error_ns, 50 * s.max_bound);
  // The fit of all four at the first second: its drift bound over 3 s.
  const MappedTime fitted = model.fit()->map(clock.device_ticks_at(10 * kSecond + kSecond / 2));
  EXPECT_GT(fitted.error_ns, s.max_bound);
}

// A 32-bit counter of 1 ns ticks wraps every 4.3 s: 12 s of pairs 1 s apart
// unwrap into one sequence, and every time maps between them.
TEST(ClockInterpolation, UnwrapsACounterThatWraps) {
  VirtualClock vc;
  const TickFormat f{1, 1, 32};
  SimClock clock(SimClockDesc{.ticks = f,
                              .offset_ns = 0,
                              .drift_ppm = -40.0,
                              .deviation_ns = 500,
                              .deviation_spread_ns = 500,
                              .seed = 3,
                              .host_clock = vc.fn()});
  const std::vector<CalibrationPair> pairs = sample_pairs(clock, vc, kSecond, kSecond, 13);
  const ClockInterpolation interp(f, pairs, nullptr);
  EXPECT_EQ(interp.pair_count(), 13u);
  EXPECT_EQ(interp.dropped_pairs(), 0u);
  const Scan s = scan(clock, interp, kSecond + kMs, 13 * kSecond - kMs, 13 * kMs);
  EXPECT_TRUE(s.all_within) << s.first_miss;
  EXPECT_TRUE(s.all_between);
  EXPECT_LE(s.max_bound, 1'000 + 1 + 1 + 2);
}

// Outside the pairs the newest fit maps (not between pairs); without one
// nothing does.
TEST(ClockInterpolation, OutsideThePairsTheFitMaps) {
  VirtualClock vc;
  SimClock clock(SimClockDesc{.offset_ns = -kSecond, .drift_ppm = 20.0, .host_clock = vc.fn()});
  const std::vector<CalibrationPair> pairs = sample_pairs(clock, vc, 5 * kSecond, kSecond, 3);
  ClockModel model(clock.ticks());
  for (const CalibrationPair& p : pairs) ASSERT_TRUE(model.add_pair(p));
  const ClockInterpolation with_fit(clock.ticks(), pairs, model.fit());
  const int64_t after = 8 * kSecond;
  const uint64_t tick = clock.device_ticks_at(after);
  const std::optional<InterpolatedTime> m = with_fit.map(tick, after);
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->between_pairs);
  const MappedTime by_fit = model.fit()->map(tick);
  EXPECT_EQ(m->time.host_ns, by_fit.host_ns);
  EXPECT_EQ(m->time.error_ns, by_fit.error_ns);
  EXPECT_LE(std::llabs(m->time.host_ns - clock.true_host_ns(tick, after)), m->time.error_ns);

  const ClockInterpolation no_fit(clock.ticks(), pairs, nullptr);
  EXPECT_FALSE(no_fit.map(tick, after).has_value());
  EXPECT_FALSE(no_fit.map(clock.device_ticks_at(4 * kSecond), 4 * kSecond).has_value());
  const ClockInterpolation empty(clock.ticks(), {}, nullptr);
  EXPECT_FALSE(empty.map(tick, after).has_value());
}

// Pairs 1 s apart (100 ns deviations) on a clock whose rate changes by
// 50 ppm halfway between two of them: interpolated across the bend, a time is
// off by up to 12.5 us; the neighbours' check sees the bend and its misfit
// widens every bound to cover it.
TEST(ClockInterpolation, AClockThatBendsWidensEveryBound) {
  const TickFormat f{};
  const int64_t bend = 3 * kSecond / 2;
  auto host_of = [&](int64_t ticks) {
    return ticks <= bend ? ticks : ticks + (ticks - bend) / 20'000;
  };
  std::vector<CalibrationPair> pairs;
  for (int64_t t = 0; t <= 3 * kSecond; t += kSecond) {
    pairs.push_back({static_cast<uint64_t>(t), host_of(t), 100, false});
  }
  const ClockInterpolation interp(f, pairs, nullptr);
  EXPECT_GE(interp.misfit_ns(), 12'000);
  int64_t max_err = 0;
  for (int64_t t = 0; t <= 3 * kSecond; t += 10 * kMs) {
    const std::optional<InterpolatedTime> m = interp.map(static_cast<uint64_t>(t), host_of(t));
    ASSERT_TRUE(m.has_value());
    const int64_t err = std::llabs(m->time.host_ns - host_of(t));
    max_err = std::max(max_err, err);
    EXPECT_LE(err, m->time.error_ns) << "at tick " << t;
  }
  EXPECT_GE(max_err, 12'000);  // the bend did show
}

// Pairs whose ticks do not rise with their host time are dropped, as are
// negative deviations; order of the input does not matter.
TEST(ClockInterpolation, DropsPairsThatDoNotRise) {
  const TickFormat f{};
  std::vector<CalibrationPair> pairs = {
      {3'000'000, 3'000'000, 100, false},
      {1'000'000, 1'000'000, 100, false},
      {1'500'000, 2'500'000, 100, false},  // ticks behind the pair before it
      {2'000'000, 2'000'000, 100, false},
      {2'700'000, 2'700'000, -1, false},  // a negative deviation
  };
  const ClockInterpolation interp(f, pairs, nullptr);
  EXPECT_EQ(interp.pair_count(), 3u);
  EXPECT_EQ(interp.dropped_pairs(), 2u);
  const std::optional<InterpolatedTime> m = interp.map(2'500'000, 2'500'000);
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(m->between_pairs);
  EXPECT_EQ(m->time.host_ns, 2'500'000);
}

}  // namespace
}  // namespace latlab
