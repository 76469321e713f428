// The run report's axis rules (report/html/chart_axes.hpp) and its outlier
// bins (report_stats.hpp): one linear axis, own axes or a log axis by how far
// the series are apart; tick labels that differ; a histogram whose p99 is an
// outlier keeps the other frames apart and counts the outliers.
#include "report/html/chart_axes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "report/html/report_stats.hpp"

namespace latlab::html {
namespace {

std::vector<double> around(double centre, double spread, int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(centre + spread * ((i * 37 % n) / double(n) - 0.5));
  return v;
}

void expect_distinct_neighbours(const ChartAxis& a, const char* what) {
  ASSERT_EQ(a.ticks.size(), a.labels.size()) << what;
  EXPECT_GE(a.labels.size(), 2u) << what;
  for (size_t i = 1; i < a.labels.size(); ++i)
    EXPECT_NE(a.labels[i - 1], a.labels[i]) << what << " at " << i;
  for (double t : a.ticks) {
    EXPECT_GE(t, a.min) << what;
    EXPECT_LE(t, a.max) << what;
  }
}

TEST(ChartAxes, ModesMoreThanTenfoldApartGetOwnAxesOrALogAxis) {
  const std::vector<double> baseline = around(50, 10, 100), loaded = around(8300, 200, 100);
  EXPECT_EQ(choose_axis(std::vector{baseline, around(60, 10, 100)}), AxisKind::linear);
  EXPECT_EQ(choose_axis(std::vector{baseline, loaded}), AxisKind::own);
  EXPECT_EQ(choose_axis(std::vector{baseline, loaded, around(20, 2, 50)}), AxisKind::log);
  // 10x exactly is not more than 10x; a series without values or all 0 has no size.
  EXPECT_EQ(choose_axis(std::vector<std::vector<double>>{{10}, {100}}), AxisKind::linear);
  EXPECT_EQ(choose_axis(std::vector<std::vector<double>>{{10}, {100.5}}), AxisKind::own);
  EXPECT_EQ(choose_axis(std::vector<std::vector<double>>{baseline, {}, {0, 0, 0}}),
            AxisKind::linear);
  // Negative values count by their magnitude.
  EXPECT_EQ(choose_axis(std::vector<std::vector<double>>{{-5, -6, -7}, {100, 120}}), AxisKind::own);
}

TEST(ChartAxes, TickDecimalsComeFromTheStep) {
  EXPECT_EQ(decimals_for_step(5), 0);
  EXPECT_EQ(decimals_for_step(1), 0);
  EXPECT_EQ(decimals_for_step(0.5), 1);
  EXPECT_EQ(decimals_for_step(0.1), 1);
  EXPECT_EQ(decimals_for_step(0.0002), 4);
  EXPECT_EQ(decimals_for_step(0), 0);
  // clock_map_error's values (us): the labels were "0.008 0.008 ... 0.009".
  const ChartAxis a = linear_axis(0.00801, 0.00897, 5);
  expect_distinct_neighbours(a, "clock_map_error");
  EXPECT_GE(a.labels.size(), 4u);
  EXPECT_EQ(a.labels.front().size(), std::string("0.0080").size()) << a.labels.front();
  expect_distinct_neighbours(linear_axis(-3.5, 1e6, 6, 0.05), "wide");
  expect_distinct_neighbours(linear_axis(7, 7, 5), "one value");
  // Counts and frame ids: whole steps only.
  const ChartAxis counts = linear_axis(0, 3, 4, 0, true);
  EXPECT_EQ(counts.labels, (std::vector<std::string>{"0", "1", "2", "3"}));
}

TEST(ChartAxes, ValuesApartOnlyByRoundingAreOneValue) {
  // Two runs' gpu_execution p50 on the sim: equal but for the last bit.
  const ChartAxis a = linear_axis(50.007999999999996, 50.008000000000003, 5, 0.05);
  expect_distinct_neighbours(a, "rounding apart");
  EXPECT_LE(a.ticks.size(), 11u);
  EXPECT_LT(a.min, 50);
  EXPECT_GT(a.max, 50.01);
}

TEST(ChartAxes, ALogAxisTicksPowersOfTenWithTheirOwnDecimals) {
  const ChartAxis a = log_axis(0, 9000, 40);
  EXPECT_TRUE(a.log);
  EXPECT_DOUBLE_EQ(a.linear_below, 10);
  EXPECT_DOUBLE_EQ(a.min, 0);
  EXPECT_DOUBLE_EQ(a.max, 10000);
  EXPECT_EQ(a.labels, (std::vector<std::string>{"0", "10", "100", "1000", "10000"}));
  const ChartAxis small = log_axis(0.002, 0.03, 0.004);
  expect_distinct_neighbours(small, "small");
  EXPECT_EQ(small.labels.front(), "0.001");
  EXPECT_NE(std::find(small.labels.begin(), small.labels.end(), "0.005"), small.labels.end());
  const ChartAxis both = log_axis(-250, 9000, 5);
  expect_distinct_neighbours(both, "both signs");
  EXPECT_EQ(both.labels.front(), "-1000");
  EXPECT_NE(std::find(both.labels.begin(), both.labels.end(), "0"), both.labels.end());
}

TEST(ChartAxes, ACategoryAxisNamesEachCategoryAndLabelsAtMostMaxLabels) {
  const ChartAxis sides = category_axis({"A", "B"});
  EXPECT_DOUBLE_EQ(sides.min, -0.5);
  EXPECT_DOUBLE_EQ(sides.max, 1.5);
  EXPECT_EQ(sides.ticks, (std::vector<double>{0, 1}));
  EXPECT_EQ(sides.labels, (std::vector<std::string>{"A", "B"}));
  const nlohmann::ordered_json j = axis_json(sides);
  EXPECT_EQ(j["names"], nlohmann::ordered_json({"A", "B"}));
  EXPECT_FALSE(axis_json(linear_axis(0, 1, 4)).contains("names"));
  // 20 run ids, at most 8 labels: every third, each category still named.
  std::vector<std::string> ids;
  for (int i = 1; i <= 20; ++i) ids.push_back(std::to_string(i));
  const ChartAxis runs = category_axis(ids, 8);
  EXPECT_EQ(runs.labels, (std::vector<std::string>{"1", "4", "7", "10", "13", "16", "19"}));
  EXPECT_EQ(runs.ticks.front(), 0);
  EXPECT_EQ(runs.ticks.back(), 18);
  EXPECT_EQ(runs.names, ids);
  EXPECT_DOUBLE_EQ(runs.max, 19.5);
}

TEST(ChartAxes, FixedWritesNoNegativeZero) {
  EXPECT_EQ(fixed(-0.001, 2), "0.00");
  EXPECT_EQ(fixed(-0.005, 1), "0.0");
  EXPECT_EQ(fixed(-1.26, 1), "-1.3");
  EXPECT_EQ(fixed(12.346, 2), "12.35");
}

TEST(ChartAxes, AnOutlierP99DoesNotSqueezeTheOtherFramesIntoOneBin) {
  // 96 frames near 50 us, 4 % at 5 ms: p99 is an outlier.
  std::vector<double> frames = around(50, 10, 96);
  for (int i = 0; i < 4; ++i) frames.push_back(5000 + i);
  const Histogram h = make_histogram(std::vector<std::vector<double>>{frames}, 60, 0.99);
  ASSERT_EQ(h.edges.size(), 61u);
  EXPECT_LT(h.hi, 100);
  EXPECT_EQ(h.above[0], 4u);
  EXPECT_EQ(h.below[0], 0u);
  const auto used =
      std::count_if(h.counts[0].begin(), h.counts[0].end(), [](uint64_t c) { return c > 0; });
  EXPECT_GT(used, 10);
  // Without an outlier the bins still end at p99.
  const Histogram plain =
      make_histogram(std::vector<std::vector<double>>{around(50, 10, 96)}, 60, 0.99);
  EXPECT_GT(plain.hi, 54);
  EXPECT_LE(plain.above[0], 1u);
}

}  // namespace
}  // namespace latlab::html
