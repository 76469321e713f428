#include "report/compare_stats.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

// Reference values: mpmath 1.3 at 30 digits, the two-sided p as the
// regularized incomplete beta I_{df/(df+t^2)}(df/2, 1/2) and the quantile by
// root finding on it; df 1 and 2 also have closed forms (1 - 2 atan(t) / pi,
// 1 - t / sqrt(2 + t^2)).
TEST(StudentT, TwoSidedPMatchesReferenceValues) {
  struct Case {
    double t, df, p;
  };
  const Case cases[] = {
      {2.0, 10, 0.073388034770740366}, {3.6742346141747673, 4, 0.021311641128756724},
      {1.5, 2.5, 0.24783645308629626}, {3.0, 3, 0.057668885622437309},
      {3.0, 1, 0.20483276469913345},   {3.0, 2, 0.095465966266709132},
      {0.5, 30, 0.62072300488512729},  {40, 2.2, 0.00034231547656460566},
      {8, 100, 2.2728648077280806e-12}};
  for (const Case& c : cases) {
    EXPECT_NEAR(student_t_two_sided_p(c.t, c.df), c.p, c.p * 1e-9) << c.t << " " << c.df;
    EXPECT_NEAR(student_t_two_sided_p(-c.t, c.df), c.p, c.p * 1e-9);
  }
  EXPECT_DOUBLE_EQ(student_t_two_sided_p(0, 5), 1.0);
}

TEST(StudentT, QuantileMatchesReferenceValues) {
  struct Case {
    double p, df, t;
  };
  const Case cases[] = {{0.05, 1, 12.706204736174704}, {0.05, 2, 4.3026527297494637},
                        {0.05, 4, 2.7764451051977943}, {0.05, 10, 2.2281388519862747},
                        {0.001, 4, 8.610301581379275}, {0.0025, 2.7, 11.089118238330989},
                        {1e-6, 3, 130.15458955835795}};
  for (const Case& c : cases) {
    EXPECT_NEAR(student_t_two_sided_quantile(c.p, c.df), c.t, c.t * 1e-9) << c.p << " " << c.df;
  }
}

TEST(WelchTest, UnequalSpreadsMatchTheReference) {
  // mpmath reference (see above), Welch-Satterthwaite degrees of freedom.
  const std::vector<double> a{10, 12, 11, 14}, b{20, 15, 25};
  const MeanShiftTest t = welch_test(a, b, 0.05);
  EXPECT_DOUBLE_EQ(t.shift, 8.25);
  EXPECT_NEAR(t.se, 3.0103986446980739, 1e-12);
  EXPECT_NEAR(t.df, 2.3533008601927661, 1e-12);
  EXPECT_NEAR(t.t, 2.740500835173419, 1e-12);
  EXPECT_NEAR(t.p_value, 0.093278351303353082, 1e-10);
  ASSERT_TRUE(t.ci_low && t.ci_high);
  EXPECT_NEAR(*t.ci_low, -3.0065982025599046, 1e-8);
  EXPECT_NEAR(*t.ci_high, 19.506598202559905, 1e-8);
}

TEST(WelchTest, ThreeAgainstThree) {
  // Equal spreads: t = 3.674, df = 4, p = 0.0213 (scipy's ttest_ind gives the same).
  const std::vector<double> a{1, 2, 3}, b{4, 5, 6};
  const MeanShiftTest t = welch_test(a, b, 0.05);
  EXPECT_NEAR(t.df, 4.0, 1e-12);
  EXPECT_NEAR(t.p_value, 0.021311641128756724, 1e-10);
}

TEST(WelchTest, NoSpreadIsAnExactDifference) {
  const std::vector<double> a{5, 5, 5}, b{7, 7, 7};
  const MeanShiftTest t = welch_test(a, b, 0.05);
  EXPECT_DOUBLE_EQ(t.p_value, 0.0);
  EXPECT_DOUBLE_EQ(*t.ci_low, 2.0);
  EXPECT_DOUBLE_EQ(*t.ci_high, 2.0);
  const MeanShiftTest same = welch_test(a, a, 0.05);
  EXPECT_DOUBLE_EQ(same.p_value, 1.0);
  EXPECT_DOUBLE_EQ(same.shift, 0.0);
}

TEST(WelchTest, OneSampleASideIsNoTest) {
  const std::vector<double> a{5}, b{7, 8, 9};
  const MeanShiftTest t = welch_test(a, b, 0.05);
  EXPECT_DOUBLE_EQ(t.p_value, 1.0);
  EXPECT_DOUBLE_EQ(t.shift, 3.0);
  EXPECT_FALSE(t.ci_low.has_value());
}

// Size and coverage over many 3-against-3 draws of normal run values with
// unequal spreads: what the test over runs relies on.
TEST(WelchTest, FalsePositiveRateAndCoverageMatchTheLevelForThreeRunsASide) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> da(100.0, 3.0), db(100.0, 6.0);
  const int trials = 4000;
  int false_pos = 0, covered = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> a(3), b(3);
    for (double& x : a) x = da(rng);
    for (double& x : b) x = db(rng);
    const MeanShiftTest w = welch_test(a, b, 0.05);
    if (w.p_value < 0.05) ++false_pos;
    if (*w.ci_low <= 0 && 0 <= *w.ci_high) ++covered;
  }
  // Welch is near its level (slightly conservative at these sizes); 4000
  // trials give a standard error of 0.34 %.
  const double sd = std::sqrt(trials * 0.05 * 0.95);
  EXPECT_LE(false_pos, trials * 0.05 + 3 * sd) << false_pos;
  EXPECT_GE(covered, trials * 0.95 - 3 * sd) << covered;
  EXPECT_EQ(false_pos + covered, trials);  // the interval excludes 0 exactly when p < alpha
}

TEST(HolmAdjust, StepDownWithMonotoneAdjustedValues) {
  // Sorted: 0.005 x4 = 0.02, 0.01 x3 = 0.03, 0.03 x2 = 0.06, 0.04 x1 = 0.04 -> 0.06.
  const std::vector<double> p{0.01, 0.04, 0.03, 0.005};
  const std::vector<double> adj = holm_adjust(p);
  ASSERT_EQ(adj.size(), 4u);
  EXPECT_NEAR(adj[0], 0.03, 1e-15);
  EXPECT_NEAR(adj[1], 0.06, 1e-15);
  EXPECT_NEAR(adj[2], 0.06, 1e-15);
  EXPECT_NEAR(adj[3], 0.02, 1e-15);
  EXPECT_DOUBLE_EQ(holm_adjust(std::vector<double>{0.5, 0.9})[1], 1.0);  // capped at 1
  EXPECT_TRUE(holm_adjust(std::vector<double>{}).empty());
}

// The family-wise rate: 20 independent null rows, Holm at 0.05, calls any
// row in at most 5 % of the comparisons.
TEST(HolmAdjust, FamilyWiseRateOfIndependentNullRowsIsAtMostAlpha) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const int trials = 4000;
  int any = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> p(20);
    for (double& x : p) x = u(rng);
    const std::vector<double> adj = holm_adjust(p);
    if (*std::min_element(adj.begin(), adj.end()) < 0.05) ++any;
  }
  EXPECT_LE(any, trials * 0.05 + 3 * std::sqrt(trials * 0.05 * 0.95)) << any;
  EXPECT_GE(any, trials * 0.03) << any;  // Bonferroni-like: about 1 - 0.9975^20 = 4.9 %
}

}  // namespace
}  // namespace latlab
