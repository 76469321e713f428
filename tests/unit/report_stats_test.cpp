// The HTML report's own statistics: shared histogram bins, percentile
// curves (type 7, as the result), and the residual line fit.
#include <gtest/gtest.h>

#include <vector>

#include "report/html/report_stats.hpp"

namespace latlab {
namespace {

TEST(ReportStats, HistogramSharesBinsAndCountsWhatLiesAboveTheClip) {
  std::vector<std::vector<double>> sets(2);
  for (int i = 0; i < 100; ++i) sets[0].push_back(i);  // 0..99
  sets[1] = {10, 10, 10, 1000};
  const Histogram h = make_histogram(sets, 10, 0.99);
  ASSERT_EQ(h.edges.size(), 11u);
  EXPECT_DOUBLE_EQ(h.lo, 0);
  uint64_t in0 = 0;
  for (uint64_t c : h.counts[0]) in0 += c;
  EXPECT_EQ(in0 + h.above[0], 100u);  // every sample counted once
  EXPECT_EQ(h.above[1] + h.counts[1][1] + h.counts[1][0], 4u);
  EXPECT_GE(h.above[1], 0u);
  EXPECT_GT(h.hi, 98.0);  // the higher of the two p99s
}

TEST(ReportStats, HistogramOfNothingHasNoBins) {
  std::vector<std::vector<double>> sets(2);
  const Histogram h = make_histogram(sets, 10, 0.99);
  EXPECT_TRUE(h.edges.empty());
}

TEST(ReportStats, PercentileCurveMatchesTypeSevenAndLeavesEmptySetsEmpty) {
  const std::vector<double> levels = {0, 50, 90, 100};
  const auto c = percentile_curve({4, 1, 3, 2}, levels);
  ASSERT_TRUE(c[1].has_value());
  EXPECT_DOUBLE_EQ(*c[0], 1);
  EXPECT_DOUBLE_EQ(*c[1], 2.5);
  EXPECT_DOUBLE_EQ(*c[2], 3.7);
  EXPECT_DOUBLE_EQ(*c[3], 4);
  for (const auto& v : percentile_curve({}, levels)) EXPECT_FALSE(v.has_value());
  const auto l = percentile_levels();
  EXPECT_DOUBLE_EQ(l.front(), 0);
  EXPECT_DOUBLE_EQ(l.back(), 100);
  for (size_t i = 1; i < l.size(); ++i) EXPECT_LT(l[i - 1], l[i]);
}

TEST(ReportStats, LineFitRecoversSlopeAndResiduals) {
  const std::vector<double> x = {0, 1, 2, 3};
  const std::vector<double> y = {1, 3.1, 4.9, 7};
  const auto f = fit_line(x, y);
  ASSERT_TRUE(f);
  EXPECT_NEAR(f->b, 2.0, 0.05);
  double sum = 0;
  for (double r : f->residuals) sum += r;
  EXPECT_NEAR(sum, 0, 1e-9);
  EXPECT_FALSE(fit_line(std::vector<double>{1, 1}, std::vector<double>{2, 3}));
}

}  // namespace
}  // namespace latlab
