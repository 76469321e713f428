// Calibrator and best-of-N on the caller's thread (the periodic thread is in
// calibrator_threads_test.cpp).
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "latlab/bench/sim.hpp"
#include "latlab/calibrator.hpp"

namespace latlab {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

// A source that plays back scripted deviations (negative: an error).
struct Script {
  std::vector<int64_t> devs;
  size_t next = 0;
  int calls = 0;
  Calibrator::Source source() {
    return [this]() -> Result<CalibrationPair> {
      ++calls;
      const int64_t d = devs[next++ % devs.size()];
      if (d < 0) return make_error("scripted failure");
      const auto t = static_cast<int64_t>(next) * kSecond;
      return CalibrationPair{
          .device_ticks = static_cast<uint64_t>(t), .host_ns = t, .max_deviation_ns = d};
    };
  }
};

TEST(SampleBestOf, KeepsTheLowestDeviation) {
  Script s{.devs = {5000, 300, 9000, 1200}};
  Result<BestOfN> b = sample_best_of(s.source(), 4, 32);
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(b->pair.max_deviation_ns, 300);
  EXPECT_EQ(b->calls, 4u);
  EXPECT_EQ(b->errors, 0u);
}

TEST(SampleBestOf, RetriesFailuresUpToMaxTries) {
  Script s{.devs = {-1, 700, -1, -1, 400}};
  Result<BestOfN> b = sample_best_of(s.source(), 2, 32);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->pair.max_deviation_ns, 400);
  EXPECT_EQ(b->calls, 5u);
  EXPECT_EQ(b->errors, 3u);
}

TEST(SampleBestOf, GivesUpAfterMaxTries) {
  Script s{.devs = {-1}};
  Result<BestOfN> b = sample_best_of(s.source(), 8, 5);
  ASSERT_FALSE(b);
  EXPECT_EQ(s.calls, 5);
  EXPECT_NE(b.error().message.find("scripted failure"), std::string::npos) << b.error().message;
  EXPECT_NE(b.error().message.find("5 tries"), std::string::npos) << b.error().message;
}

TEST(SampleBestOf, NullSourceIsAnError) {
  EXPECT_FALSE(sample_best_of(Calibrator::Source{}, 1, 3));
}

TEST(Calibrator, NoFitBeforeAPair) {
  Script s{.devs = {100}};
  Calibrator cal(s.source(), TickFormat{});
  EXPECT_EQ(cal.fit(), nullptr);
  EXPECT_EQ(cal.stats().refreshes, 0u);
  EXPECT_EQ(s.calls, 0);  // constructing does not sample
}

TEST(Calibrator, GivesUpAfterMaxTriesWhenTheSourceAlwaysFails) {
  SimClock clock(SimClockDesc{});
  clock.set_failing(true);
  Calibrator cal(clock.source(), clock.ticks(),
                 CalibratorDesc{.samples_per_refresh = 8, .max_tries = 12});
  Result<void> r = cal.calibrate_now();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("12 tries"), std::string::npos) << r.error().message;
  EXPECT_EQ(clock.calls(), 12u);
  const CalibratorStats st = cal.stats();
  EXPECT_EQ(st.source_calls, 12u);
  EXPECT_EQ(st.failed_refreshes, 1u);
  EXPECT_EQ(st.refreshes, 0u);
  EXPECT_EQ(cal.fit(), nullptr);
  EXPECT_GT(st.last_refresh_cost_ns, 0);
}

TEST(Calibrator, CalibrateNowPublishesAFit) {
  int64_t now = 10 * kSecond;
  SimClock clock(SimClockDesc{.drift_ppm = 4.0, .host_clock = [&now] { return now; }});
  Calibrator cal(clock.source(), clock.ticks(), CalibratorDesc{.samples_per_refresh = 4});
  for (int i = 0; i < 30; ++i) {
    now += kSecond;
    ASSERT_TRUE(cal.calibrate_now());
  }
  const auto fit = cal.fit();
  ASSERT_NE(fit, nullptr);
  EXPECT_EQ(fit->pairs_used, 30u);
  EXPECT_NEAR(fit->drift_ppm(), 4.0, fit->drift_error * 1e6);
  const CalibratorStats st = cal.stats();
  EXPECT_EQ(st.refreshes, 30u);
  EXPECT_EQ(st.source_calls, 120u);
  EXPECT_EQ(cal.accepted_pairs().size(), 30u);
  EXPECT_GE(st.max_refresh_cost_ns, st.last_refresh_cost_ns);
  const uint64_t tick = clock.device_ticks_at(now);
  const MappedTime m = fit->map(tick);
  EXPECT_LE(std::llabs(m.host_ns - clock.true_host_ns(tick, now)), m.error_ns);
}

TEST(Calibrator, KeepsOnlyTheNewestAcceptedPairs) {
  int64_t now = kSecond;
  SimClock clock(SimClockDesc{.host_clock = [&now] { return now; }});
  Calibrator cal([&]() { return clock.sample(); }, TickFormat{},
                 CalibratorDesc{.samples_per_refresh = 1, .kept_pairs = 5});
  for (int i = 0; i < 12; ++i) {
    now += kSecond;
    ASSERT_TRUE(cal.calibrate_now());
  }
  const auto kept = cal.accepted_pairs();
  ASSERT_EQ(kept.size(), 5u);
  EXPECT_EQ(cal.stats().accepted_pairs, 12u);
  for (size_t i = 1; i < kept.size(); ++i) EXPECT_GT(kept[i].host_ns, kept[i - 1].host_ns);
  EXPECT_GE(kept.front().host_ns, 8 * kSecond);  // the last five of 2..13 s
}

TEST(Calibrator, ARejectedBestPairFailsTheRefresh) {
  // Good pairs first; then every sample is bad, so even the best is refused.
  int64_t now = kSecond;
  SimClock good(SimClockDesc{.host_clock = [&now] { return now; }});
  SimClock bad(SimClockDesc{.deviation_ns = 5'000'000, .host_clock = [&now] { return now; }});
  bool use_bad = false;
  Calibrator cal([&]() { return use_bad ? bad.sample() : good.sample(); }, TickFormat{});
  ASSERT_TRUE(cal.calibrate_now());
  use_bad = true;
  now += kSecond;
  Result<void> r = cal.calibrate_now();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("rejected"), std::string::npos) << r.error().message;
  const CalibratorStats st = cal.stats();
  EXPECT_EQ(st.refreshes, 1u);
  EXPECT_EQ(st.failed_refreshes, 1u);
  EXPECT_EQ(st.rejected_pairs, 1u);
  EXPECT_EQ(cal.accepted_pairs().size(), 1u);
  EXPECT_EQ(cal.fit()->pairs_used, 1u);  // the published fit is unchanged
}

TEST(SimClock, FailEveryAndBadEveryAreScripted) {
  SimClock clock(SimClockDesc{.bad_every = 3, .bad_deviation_ns = 777'000, .fail_every = 5});
  std::vector<int> kinds;  // 0 good, 1 bad, 2 failed
  for (int i = 0; i < 15; ++i) {
    Result<CalibrationPair> p = clock.sample();
    kinds.push_back(!p ? 2 : p->max_deviation_ns == 777'000 ? 1 : 0);
  }
  EXPECT_EQ(kinds, (std::vector<int>{0, 0, 1, 0, 2, 1, 0, 0, 1, 2, 0, 1, 0, 0, 2}));
}

TEST(SimClock, SameSeedSameRun) {
  int64_t now = 0;
  SimClockDesc d{.drift_ppm = 7.0, .seed = 42, .host_clock = [&now] { return now; }};
  SimClock a(d), b(d);
  for (int i = 0; i < 50; ++i) {
    now = i * 1000;
    const CalibrationPair pa = *a.sample(), pb = *b.sample();
    EXPECT_EQ(pa.device_ticks, pb.device_ticks);
    EXPECT_EQ(pa.max_deviation_ns, pb.max_deviation_ns);
  }
}

TEST(SimClock, PairErrorsStayWithinTheirDeviation) {
  int64_t now = 0;
  SimClock clock(SimClockDesc{.ticks = TickFormat{.valid_bits = 32},
                              .offset_ns = -5 * kSecond,
                              .drift_ppm = -60.0,
                              .host_clock = [&now] { return now; }});
  for (int64_t i = 0; i < 1000; ++i) {
    now = i * 10'000'000;
    const CalibrationPair p = *clock.sample();
    const int64_t truth = clock.true_host_ns(p.device_ticks, p.host_ns);
    EXPECT_LE(std::llabs(truth - p.host_ns), p.max_deviation_ns + 1) << i;
  }
}

}  // namespace
}  // namespace latlab
