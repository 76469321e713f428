#include "report/compare_stats.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace latlab {
namespace {

TEST(ShiftTest, CompleteSeparationOfFiveAndFiveHasTheExactSmallestP) {
  const std::vector<double> a{1, 2, 3, 4, 5}, b{6, 7, 8, 9, 10};
  const ShiftTest t = shift_test(a, b, 0.05);
  EXPECT_TRUE(t.exact);
  EXPECT_EQ(t.u, 25);
  EXPECT_NEAR(t.p_value, 2.0 / 252.0, 1e-12);  // 2 / C(10, 5)
  EXPECT_NEAR(t.min_p_value, 2.0 / 252.0, 1e-12);
  EXPECT_DOUBLE_EQ(t.shift, 5.0);  // median of the 25 differences 1..9
  // n = m = 5 at 95 %: [D(3), D(23)] of the sorted differences (Hollander & Wolfe).
  ASSERT_TRUE(t.ci_low && t.ci_high);
  EXPECT_DOUBLE_EQ(*t.ci_low, 2.0);
  EXPECT_DOUBLE_EQ(*t.ci_high, 8.0);
}

TEST(ShiftTest, KnownExactPValue) {
  // U_B = 14 of 16 for n = m = 4; P(U <= 2) = 4/70 (counts 1, 1, 2), two-sided 8/70.
  const std::vector<double> a{1, 2, 3, 6}, b{4, 5, 7, 8};
  const ShiftTest t = shift_test(a, b, 0.05);
  EXPECT_EQ(t.u, 14);
  EXPECT_NEAR(t.p_value, 8.0 / 70.0, 1e-12);
}

TEST(ShiftTest, ThreeBlocksASideCannotReachFivePercent) {
  const std::vector<double> a{1, 2, 3}, b{10, 11, 12};
  const ShiftTest t = shift_test(a, b, 0.05);
  EXPECT_NEAR(t.min_p_value, 0.1, 1e-12);  // 2 / C(6, 3)
  EXPECT_FALSE(t.ci_low.has_value());
}

TEST(ShiftTest, IdenticalSamplesShowNoShift) {
  const std::vector<double> a{5, 5, 5, 5, 5, 5};
  const ShiftTest t = shift_test(a, a, 0.05);
  EXPECT_DOUBLE_EQ(t.p_value, 1.0);
  EXPECT_DOUBLE_EQ(t.shift, 0.0);
}

TEST(ShiftTest, LargeSamplesUseTheNormalApproximation) {
  std::vector<double> a, b;
  for (int i = 0; i < 60; ++i) {
    a.push_back(i);
    b.push_back(i + 0.5);
  }
  const ShiftTest t = shift_test(a, b, 0.05);
  EXPECT_FALSE(t.exact);
  EXPECT_GT(t.p_value, 0.5);
  ASSERT_TRUE(t.ci_low && t.ci_high);
  EXPECT_LT(*t.ci_low, 0.5);
  EXPECT_GT(*t.ci_high, 0.5);
}

// The test's size and the interval's coverage, over many A/A and A/B draws
// from a skewed distribution: what the call in compare relies on.
TEST(ShiftTest, FalsePositiveRateAndCoverageMatchTheLevel) {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(4.0, 0.3);
  const int trials = 2000;
  int false_pos = 0, covered = 0, detected = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> a(10), b(10), c(10);
    for (double& x : a) x = dist(rng);
    for (double& x : b) x = dist(rng);
    for (double& x : c) x = dist(rng) * 1.5;  // a 50 % slower B (1.35 sd on the log scale)
    const ShiftTest aa = shift_test(a, b, 0.05);
    if (aa.p_value < 0.05) ++false_pos;
    if (*aa.ci_low <= 0 && 0 <= *aa.ci_high) ++covered;
    if (shift_test(a, c, 0.05).p_value < 0.05) ++detected;
  }
  // Exact test: size <= 0.05 (discreteness makes it a little smaller); 2000
  // trials give a standard error of 0.5 %.
  EXPECT_LE(false_pos, trials * 0.05 + 3 * std::sqrt(trials * 0.05 * 0.95)) << false_pos;
  EXPECT_GE(covered, trials * 0.95 - 3 * std::sqrt(trials * 0.05 * 0.95)) << covered;
  EXPECT_GT(detected, trials * 0.6) << detected;  // power against +50 %: about 0.75
}

}  // namespace
}  // namespace latlab
