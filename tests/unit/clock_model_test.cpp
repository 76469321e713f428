// ClockModel on simulated clocks (virtual host time: fast, deterministic):
// the mapping stays within its bound, the bound is not wildly loose, wraps
// at 32 and 36 bits, bad pairs are rejected, the window is bounded.
#include "latlab/clock_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "latlab/bench/sim.hpp"

namespace latlab {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

// The host clock the sim reads: moved by the test.
struct VirtualClock {
  int64_t now = 0;
  std::function<int64_t()> fn() {
    return [this] { return now; };
  }
};

// Offset that puts the device `lead_ns` before its first wrap at host time 0
// (64 bits: simply positive ticks).
int64_t offset_near_wrap(const TickFormat& f, int64_t lead_ns) {
  if (f.valid_bits >= 64) return -kSecond;
  const double wrap_ns = static_cast<double>(f.mask()) * f.period_ns();
  return -static_cast<int64_t>(wrap_ns) + lead_ns;
}

struct Scan {
  int64_t max_err = 0;
  double max_ratio = 0;  // err / bound
  int64_t max_bound = 0;
  bool all_within = true;
  std::string first_miss;
};

// Maps ticks at host times `t + d` for each d through `fit` and compares with
// the truth.
void scan(const SimClock& clock, const ClockFit& fit, int64_t t,
          const std::vector<int64_t>& offsets, Scan& s) {
  for (int64_t d : offsets) {
    const int64_t h = t + d;
    const uint64_t tick = clock.device_ticks_at(h);
    const MappedTime m = fit.map(tick);
    const int64_t truth = clock.true_host_ns(tick, h);
    const int64_t err = std::llabs(m.host_ns - truth);
    s.max_err = std::max(s.max_err, err);
    s.max_bound = std::max(s.max_bound, m.error_ns);
    s.max_ratio = std::max(s.max_ratio, static_cast<double>(err) / static_cast<double>(m.error_ns));
    if (err > m.error_ns && s.all_within) {
      s.all_within = false;
      s.first_miss = "at host " + std::to_string(h) + ": error " + std::to_string(err) +
                     " ns > bound " + std::to_string(m.error_ns) + " ns";
    }
  }
}

TEST(ClockModel, NotReadyBeforeAPair) {
  ClockModel model(TickFormat{});
  EXPECT_FALSE(model.ready());
  EXPECT_EQ(model.fit(), nullptr);
  EXPECT_TRUE(model.residuals().empty());
}

TEST(ClockModel, OnePairKnowsNoDrift) {
  VirtualClock vc;
  SimClock clock(SimClockDesc{.offset_ns = -kSecond, .drift_ppm = 80.0, .host_clock = vc.fn()});
  ClockModel model(clock.ticks());
  vc.now = 5 * kSecond;
  ASSERT_TRUE(model.add_pair(*clock.sample()));
  const auto fit = model.fit();
  ASSERT_NE(fit, nullptr);
  EXPECT_EQ(fit->pairs_used, 1u);
  EXPECT_EQ(fit->drift, 0.0);
  EXPECT_DOUBLE_EQ(fit->drift_error, 500e-6);  // max_drift_ppm: unknown, not zero
  Scan s;
  scan(clock, *fit, vc.now, {-kSecond / 10, 0, kSecond / 1000, kSecond}, s);
  EXPECT_TRUE(s.all_within) << s.first_miss;
  // 80 ppm over 1 s is 80 us of real error; the bound (500 ppm) must cover it.
  EXPECT_GT(s.max_err, 70'000);
}

// drift ppm, valid bits, tick period ns, seed
using FitCase = std::tuple<double, uint32_t, double, uint64_t>;
class ClockModelFit : public ::testing::TestWithParam<FitCase> {};

TEST_P(ClockModelFit, MapsWithinBoundAndBoundIsTight) {
  const auto [drift_ppm, bits, period, seed] = GetParam();
  VirtualClock vc;
  SimClockDesc d;
  d.ticks = TickFormat::from_period_ns(period, bits);
  d.offset_ns = offset_near_wrap(d.ticks, 3 * kSecond / 2);  // wraps 1.5 s in
  d.drift_ppm = drift_ppm;
  d.deviation_ns = 1'000;
  d.deviation_spread_ns = 1'000;
  d.seed = seed;
  d.host_clock = vc.fn();
  SimClock clock(d);
  ClockModel model(clock.ticks());
  const int64_t jitter_scale = d.deviation_ns + d.deviation_spread_ns;

  Scan s;
  bool crossed_wrap = false;
  for (int i = 0; i < 150; ++i) {
    vc.now = i * kSecond + 123'457 * (i % 7);  // uneven spacing
    ASSERT_TRUE(model.add_pair(*clock.sample())) << "pair " << i;
    const auto fit = model.fit();
    ASSERT_NE(fit, nullptr);
    if (fit->anchor_device_ticks > d.ticks.mask()) crossed_wrap = true;
    if (i < 2) continue;  // fitted from here on
    // Within half a wrap of the anchor for every case (32 bits at 1 ns:
    // +-2.1 s): the past frame, now, the next refresh.
    scan(clock, *fit, vc.now, {-2 * kSecond + kSecond / 10, -kSecond / 2, 0, kSecond / 3, kSecond},
         s);
    // The bound at the anchor is on the scale of the pair deviations, not
    // wildly above it (worst case: ~1.7x for a window fit).
    EXPECT_LE(fit->base_error_ns, 3 * (jitter_scale + static_cast<int64_t>(std::ceil(period)) + 1))
        << "pair " << i;
    if (i >= 10) {
      EXPECT_NEAR(fit->drift_ppm(), drift_ppm, fit->drift_error * 1e6) << "pair " << i;
    }
  }
  EXPECT_TRUE(s.all_within) << s.first_miss;
  // Not wildly loose: the largest bound stays within 10x (largest actual
  // error + jitter scale).
  EXPECT_LT(s.max_bound, 10 * (s.max_err + jitter_scale));
  if (bits < 64) {
    EXPECT_TRUE(crossed_wrap) << "the test meant to cross a wrap";
  }
  const auto fit = model.fit();
  EXPECT_EQ(fit->pairs_used, 64u);         // default window
  EXPECT_LT(fit->drift_error * 1e6, 0.5);  // 64 s window, 1-2 us deviations
}

INSTANTIATE_TEST_SUITE_P(
    Clocks, ClockModelFit,
    ::testing::Values(FitCase{0.0, 64, 1.0, 1}, FitCase{4.0, 64, 1.0, 2}, FitCase{-4.0, 64, 1.0, 3},
                      FitCase{100.0, 64, 1.0, 4}, FitCase{-100.0, 64, 1.0, 5},
                      FitCase{4.0, 64, 41.666668, 6}, FitCase{4.0, 32, 1.0, 7},
                      FitCase{-100.0, 32, 1.0, 8}, FitCase{100.0, 32, 41.666668, 9},
                      FitCase{4.0, 36, 1.0, 10}, FitCase{-37.5, 36, 41.666668, 11},
                      FitCase{100.0, 36, 52.08, 12}));

TEST(ClockModel, UnwrapsAcrossManyWrapsBetweenPairs) {
  // 32 bits at 1 ns wrap every 4.29 s; pairs 10 s apart skip two wraps each.
  VirtualClock vc;
  SimClockDesc d;
  d.ticks = TickFormat{.valid_bits = 32};
  d.offset_ns = -kSecond;
  d.drift_ppm = 50.0;
  d.host_clock = vc.fn();
  SimClock clock(d);
  ClockModel model(clock.ticks());
  for (int i = 0; i < 20; ++i) {
    vc.now = i * 10 * kSecond;
    ASSERT_TRUE(model.add_pair(*clock.sample()));
  }
  const auto fit = model.fit();
  // The anchor is the unwrapped device time (within the pair's jitter),
  // dozens of wraps above 2^32.
  const auto expected = static_cast<double>(clock.device_ticks_unwrapped_at(vc.now));
  EXPECT_NEAR(static_cast<double>(fit->anchor_device_ticks), expected, 3'000.0);
  EXPECT_GT(fit->anchor_device_ticks, 40ull << 32);
  EXPECT_NEAR(fit->drift_ppm(), 50.0, fit->drift_error * 1e6);
  Scan s;
  scan(clock, *fit, vc.now, {-kSecond, 0, kSecond}, s);
  EXPECT_TRUE(s.all_within) << s.first_miss;
}

TEST(ClockModel, RejectsBadDeviationPairs) {
  VirtualClock vc;
  SimClockDesc d;
  d.offset_ns = -kSecond;
  d.drift_ppm = 4.0;
  d.bad_every = 4;
  d.bad_deviation_ns = 2'000'000;  // 2 ms, and errors as large
  d.host_clock = vc.fn();
  SimClock clock(d);
  ClockModel model(clock.ticks());
  int refused = 0;
  for (int i = 0; i < 100; ++i) {
    vc.now = i * kSecond;
    const CalibrationPair p = *clock.sample();
    const bool ok = model.add_pair(p);
    EXPECT_EQ(ok, p.max_deviation_ns < 100'000)
        << "pair " << i << " deviation " << p.max_deviation_ns;
    refused += ok ? 0 : 1;
  }
  EXPECT_EQ(refused, 25);
  EXPECT_EQ(model.rejected_count(), 25u);
  EXPECT_EQ(model.accepted_count(), 75u);
  const auto fit = model.fit();
  EXPECT_LT(fit->base_error_ns, 10'000);
  Scan s;
  scan(clock, *fit, vc.now, {-kSecond, 0, kSecond}, s);
  EXPECT_TRUE(s.all_within) << s.first_miss;
}

TEST(ClockModel, BadFirstPairIsDroppedOnceABetterBestArrives) {
  VirtualClock vc;
  SimClockDesc d;
  d.offset_ns = -kSecond;
  d.host_clock = vc.fn();
  SimClock clock(d);
  ClockModel model(clock.ticks());
  // A first pair with a huge deviation is all there is: accepted.
  ASSERT_TRUE(model.add_pair(CalibrationPair{.device_ticks = clock.device_ticks_at(0) + 400'000,
                                             .host_ns = 0,
                                             .max_deviation_ns = 500'000}));
  for (int i = 1; i <= 10; ++i) {
    vc.now = i * kSecond;
    ASSERT_TRUE(model.add_pair(*clock.sample()));
  }
  EXPECT_EQ(model.rejected_count(), 1u);  // the first, dropped from the window
  EXPECT_EQ(model.fit()->pairs_used, 10u);
  EXPECT_LT(model.fit()->base_error_ns, 10'000);
  for (int64_t r : model.residuals()) EXPECT_LT(std::llabs(r), 5'000);
}

TEST(ClockModel, AFreakLowDeviationAgesOutInsteadOfStarvingTheFit) {
  ClockModel model(TickFormat{}, ClockModelDesc{.window = 8});
  int64_t t = kSecond;
  ASSERT_TRUE(model.add_pair(
      {.device_ticks = static_cast<uint64_t>(t), .host_ns = t, .max_deviation_ns = 0}));
  int accepted = 0;
  for (int i = 0; i < 20; ++i) {
    t += kSecond;
    accepted +=
        model.add_pair(
            {.device_ticks = static_cast<uint64_t>(t), .host_ns = t, .max_deviation_ns = 50'000})
            ? 1
            : 0;
  }
  EXPECT_EQ(model.best_deviation_ns(), 50'000);
  EXPECT_EQ(accepted, 13);  // the first 7 fall within the freak's window of 8 offers
}

TEST(ClockModel, WindowIsBounded) {
  VirtualClock vc;
  SimClock clock(SimClockDesc{.offset_ns = -kSecond, .drift_ppm = -20.0, .host_clock = vc.fn()});
  ClockModel model(clock.ticks(), ClockModelDesc{.window = 16});
  for (int i = 0; i < 500; ++i) {
    vc.now = i * kSecond / 10;
    ASSERT_TRUE(model.add_pair(*clock.sample()));
  }
  EXPECT_EQ(model.fit()->pairs_used, 16u);
  EXPECT_EQ(model.residuals().size(), 16u);
  EXPECT_EQ(model.accepted_count(), 500u);
}

TEST(ClockModel, NegativeDeviationIsRejected) {
  ClockModel model(TickFormat{});
  EXPECT_FALSE(model.add_pair({.device_ticks = 1, .host_ns = 1, .max_deviation_ns = -1}));
  EXPECT_FALSE(model.ready());
  EXPECT_EQ(model.rejected_count(), 1u);
}

TEST(ClockModel, PairsAtOneInstantGiveNoDrift) {
  ClockModel model(TickFormat{});
  ASSERT_TRUE(model.add_pair({.device_ticks = 1000, .host_ns = 5000, .max_deviation_ns = 100}));
  ASSERT_TRUE(model.add_pair({.device_ticks = 1000, .host_ns = 5040, .max_deviation_ns = 100}));
  const auto fit = model.fit();
  EXPECT_EQ(fit->drift, 0.0);
  EXPECT_DOUBLE_EQ(fit->drift_error, 500e-6);
}

TEST(ClockModel, ADriftBeyondBeliefFallsBackToOffsetOnly) {
  VirtualClock vc;
  SimClock clock(SimClockDesc{.offset_ns = -kSecond, .drift_ppm = 900.0, .host_clock = vc.fn()});
  ClockModel model(clock.ticks());  // max_drift_ppm 500
  for (int i = 0; i < 10; ++i) {
    vc.now = i * kSecond;
    ASSERT_TRUE(model.add_pair(*clock.sample()));
  }
  EXPECT_EQ(model.fit()->drift, 0.0);
  EXPECT_DOUBLE_EQ(model.fit()->drift_error, 500e-6);
}

TEST(ClockModel, UnderstatedDeviationsWidenTheBound) {
  // The device's errors reach 3x its stated deviation: the residuals show it
  // and the bound grows to cover it.
  VirtualClock vc;
  SimClockDesc d;
  d.offset_ns = -kSecond;
  d.drift_ppm = 10.0;
  d.error_fraction = 3.0;
  d.seed = 99;
  d.host_clock = vc.fn();
  SimClock clock(d);
  ClockModel model(clock.ticks());
  Scan s;
  for (int i = 0; i < 100; ++i) {
    vc.now = i * kSecond;
    ASSERT_TRUE(model.add_pair(*clock.sample()));
    if (i >= 20) scan(clock, *model.fit(), vc.now, {-kSecond, 0, kSecond}, s);
  }
  EXPECT_TRUE(s.all_within) << s.first_miss;
  EXPECT_GT(model.fit()->base_error_ns, 5'000);  // honest 1-2 us deviations give ~2.5 us
}

TEST(ClockModel, GarbageTicksFarFromTheAnchorAreUnbounded) {
  ClockModel model(TickFormat{});
  ASSERT_TRUE(
      model.add_pair({.device_ticks = 1'000'000, .host_ns = 2'000'000, .max_deviation_ns = 100}));
  const MappedTime m = model.fit()->map(1'000'000 + (1ull << 62));
  EXPECT_EQ(m.error_ns, std::numeric_limits<int64_t>::max());
}

TEST(ClockModel, ExactTickConversionOverLongSpans) {
  // 125/3 ns ticks, no drift, exact pairs: after a day the mapping is still
  // exact to the ns (no float accumulation).
  const TickFormat f = TickFormat::from_period_ns(41.666668, 64);
  ASSERT_EQ(f.period_num, 125u);
  ASSERT_EQ(f.period_den, 3u);
  ClockModel model(f);
  const int64_t base = 7 * kSecond;
  for (int i = 0; i < 5; ++i) {
    const uint64_t ticks = 3ull * 1'000'000'000ull * static_cast<uint64_t>(i);  // i * 125 s
    ASSERT_TRUE(model.add_pair(
        {.device_ticks = ticks, .host_ns = base + i * 125 * kSecond, .max_deviation_ns = 0}));
  }
  const uint64_t day_ticks = 3ull * 86'400ull * 1'000'000'000ull / 125ull;  // 86400 s
  const MappedTime m = model.fit()->map(day_ticks);
  EXPECT_EQ(m.host_ns, base + 86'400 * kSecond);
}

}  // namespace
}  // namespace latlab
