#include <gtest/gtest.h>

#include <vector>

#include "latlab/bench/schedule.hpp"

namespace latlab {
namespace {

TEST(LatencySchedule, SplitMix64MatchesReferenceVector) {
  // Published splitmix64 outputs for seed 1234567 (Vigna's reference code).
  SplitMix64 rng(1234567);
  EXPECT_EQ(rng.next(), 6457827717110365317ull);
  EXPECT_EQ(rng.next(), 3203168211198807973ull);
  EXPECT_EQ(rng.next(), 9817491932198370423ull);
  EXPECT_EQ(rng.next(), 4593380528125082431ull);
  EXPECT_EQ(rng.next(), 16408922859458223821ull);
}

TEST(LatencySchedule, PinnedIntervalsForSeed1) {
  // Computed by an independent Python implementation of the documented
  // algorithm (splitmix64 + Lemire). A change here changes every schedule.
  Schedule s(ScheduleDesc{1, 8'000'000, 12'000'000});
  const std::vector<int64_t> expect{10266246, 10983127, 11884011, 9777437, 9777059, 11051578};
  for (int64_t e : expect) EXPECT_EQ(s.next_interval_ns(), e);
  Schedule t(ScheduleDesc{42, 1'000'000, 2'000'000});
  const std::vector<int64_t> expect42{1741565, 1159910, 1278601, 1344191, 1038030, 1868228};
  for (int64_t e : expect42) EXPECT_EQ(t.next_interval_ns(), e);
}

TEST(LatencySchedule, SameSeedSameDeadlines) {
  Schedule a(ScheduleDesc{77, 8'000'000, 12'000'000});
  Schedule b(ScheduleDesc{77, 8'000'000, 12'000'000});
  for (int i = 0; i < 10'000; ++i) ASSERT_EQ(a.next_interval_ns(), b.next_interval_ns()) << i;
}

TEST(LatencySchedule, DifferentSeedDifferentSchedule) {
  Schedule a(ScheduleDesc{1, 8'000'000, 12'000'000});
  Schedule b(ScheduleDesc{2, 8'000'000, 12'000'000});
  int same = 0;
  for (int i = 0; i < 1000; ++i) same += a.next_interval_ns() == b.next_interval_ns() ? 1 : 0;
  EXPECT_LT(same, 5);
}

TEST(LatencySchedule, IntervalsStayInRangeAndCoverIt) {
  Schedule s(ScheduleDesc{9, 8'000'000, 12'000'000});
  int64_t lo = INT64_MAX;
  int64_t hi = INT64_MIN;
  double sum = 0;
  const int n = 200'000;
  for (int i = 0; i < n; ++i) {
    const int64_t v = s.next_interval_ns();
    ASSERT_GE(v, 8'000'000);
    ASSERT_LE(v, 12'000'000);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += static_cast<double>(v);
  }
  EXPECT_LT(lo, 8'001'000);  // reaches both ends of the range
  EXPECT_GT(hi, 11'999'000);
  EXPECT_NEAR(sum / n, 10'000'000.0, 10'000.0);  // uniform: mean in the middle
}

TEST(LatencySchedule, DegenerateRangeIsFixed) {
  Schedule s(ScheduleDesc{3, 5'000'000, 5'000'000});
  for (int i = 0; i < 100; ++i) EXPECT_EQ(s.next_interval_ns(), 5'000'000);
}

TEST(LatencySchedule, BelowHandlesTinyAndHugeRanges) {
  SplitMix64 rng(5);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(rng.below(1), 0u);
  const uint64_t big = (1ull << 63) + 12345;  // rejection is likely here
  for (int i = 0; i < 1000; ++i) EXPECT_LT(rng.below(big), big);
}

TEST(LatencySchedule, SkipStartsTheStreamLater) {
  Schedule a(ScheduleDesc{11, 8'000'000, 12'000'000});
  for (int i = 0; i < 37; ++i) (void)a.next_interval_ns();
  Schedule b(ScheduleDesc{11, 8'000'000, 12'000'000});
  b.skip(37);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next_interval_ns(), b.next_interval_ns());
}

}  // namespace
}  // namespace latlab
