#include "latlab/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "report/compare_stats.hpp"

namespace latlab {
namespace {

TEST(Stats, PercentilesMatchNumpyType7) {
  // numpy.percentile([1..10], [50, 90, 95, 99]) = 5.5, 9.1, 9.55, 9.91
  std::vector<double> v{10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
  const Distribution d = summarize(v, 3);
  EXPECT_EQ(d.count, 10u);
  EXPECT_EQ(d.missing, 3u);
  EXPECT_DOUBLE_EQ(d.p50, 5.5);
  EXPECT_NEAR(d.p90, 9.1, 1e-12);
  EXPECT_NEAR(d.p95, 9.55, 1e-12);
  EXPECT_NEAR(d.p99, 9.91, 1e-12);
  EXPECT_DOUBLE_EQ(d.min, 1);
  EXPECT_DOUBLE_EQ(d.max, 10);
  EXPECT_DOUBLE_EQ(d.mean, 5.5);
  ASSERT_TRUE(d.stddev.has_value());
  EXPECT_NEAR(*d.stddev, 3.0276503540974917, 1e-12);  // sample stddev
}

TEST(Stats, EmptyStaysEmpty) {
  const Distribution d = summarize(std::vector<double>{}, 7);
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(d.missing, 7u);
}

TEST(Stats, SingleSampleHasNoStandardDeviation) {
  const Distribution d = summarize(std::vector<double>{42.0});
  EXPECT_DOUBLE_EQ(d.p999, 42.0);
  EXPECT_FALSE(d.stddev.has_value()) << "one sample has no sample stddev; 0 would claim one";
  const Distribution two = summarize(std::vector<double>{1.0, 3.0});
  ASSERT_TRUE(two.stddev.has_value());
  EXPECT_NEAR(*two.stddev, std::sqrt(2.0), 1e-12);
}

TEST(Stats, PercentileOfNothingIsNoValue) {
  EXPECT_FALSE(percentile_sorted(std::vector<double>{}, 0.5).has_value());
  const std::vector<double> one{7.0};
  ASSERT_TRUE(percentile_sorted(one, 0.5).has_value());
  EXPECT_DOUBLE_EQ(*percentile_sorted(one, 0.5), 7.0);
}

TEST(Stats, MedianOfNothingIsNoValue) {
  EXPECT_FALSE(median_of(std::vector<double>{}).has_value());
  const std::optional<double> m = median_of(std::vector<double>{3.0, 1.0, 2.0});
  ASSERT_TRUE(m.has_value());
  EXPECT_DOUBLE_EQ(*m, 2.0);
}

TEST(Stats, MedianStandardErrorComesFromTheMedianAbsoluteDeviation) {
  const std::vector<double> v = {5, 1, 4, 2, 3};  // |v - 3| has median 1
  EXPECT_NEAR(*median_standard_error(v, 3.0), 1.2533 * 1.4826 / std::sqrt(5.0), 1e-12);
  const std::vector<double> outlier = {5, 1, 4, 2, 3000};  // |v - 4| has median 2
  EXPECT_NEAR(*median_standard_error(outlier, 4.0), 1.2533 * 1.4826 * 2.0 / std::sqrt(5.0), 1e-12);
  EXPECT_FALSE(median_standard_error(std::vector<double>{}, 0.0));
}

}  // namespace
}  // namespace latlab
