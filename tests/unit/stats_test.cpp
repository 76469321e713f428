#include <gtest/gtest.h>

#include <vector>

#include "latlab/stats.hpp"

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
  EXPECT_NEAR(d.stddev, 3.0276503540974917, 1e-12);  // sample stddev
}

TEST(Stats, EmptyStaysEmpty) {
  const Distribution d = summarize(std::vector<double>{}, 7);
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(d.missing, 7u);
}

TEST(Stats, SingleSample) {
  const Distribution d = summarize(std::vector<double>{42.0});
  EXPECT_DOUBLE_EQ(d.p999, 42.0);
  EXPECT_DOUBLE_EQ(d.stddev, 0.0);
}

}  // namespace
}  // namespace latlab
