// Distributions in bounded memory (core/streaming_distribution.hpp): exact
// (summarize's numbers) up to their limit, then a log-linear histogram whose
// percentiles stay within its stated resolution, in memory that does not
// grow with the samples.
#include "core/streaming_distribution.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/log_linear_histogram.hpp"
#include "latlab/stats.hpp"

namespace latlab {
namespace {

// Frame-time-like samples (ns): 16.6 ms with spread, spikes and a few
// negative values (a GPU end before a present).
std::vector<int64_t> samples(size_t n) {
  std::vector<int64_t> out;
  uint64_t x = 12345;
  for (size_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto r = static_cast<int64_t>(x >> 40);  // 0 .. 2^24
    int64_t v = 16'600'000 + (r % 4'000'000) - 2'000'000;
    if (i % 97 == 0) v *= 3;
    if (i % 101 == 0) v = -(r % 3'000'000);
    if (i % 103 == 0) v = r % 1500;  // below 2048: exact buckets
    out.push_back(v);
  }
  return out;
}

Distribution exact_of(const std::vector<int64_t>& ns, uint64_t missing) {
  std::vector<double> us;
  for (const int64_t v : ns) us.push_back(static_cast<double>(v) / 1000.0);
  return summarize(us, missing);
}

TEST(StreamingDistribution, UpToItsLimitItIsSummarizeExactly) {
  const auto ns = samples(1000);
  StreamingDistribution d(1000);
  for (const int64_t v : ns) d.add(v);
  d.add_missing(3);
  EXPECT_TRUE(d.exact());
  EXPECT_EQ(d.summary(), exact_of(ns, 3));
  EXPECT_FALSE(d.summary().percentile_resolution);
}

TEST(StreamingDistribution, PastItsLimitPercentilesAreWithinTheResolution) {
  const auto ns = samples(200'000);
  StreamingDistribution d(1000);
  for (const int64_t v : ns) d.add(v);
  ASSERT_FALSE(d.exact());
  const Distribution got = d.summary();
  const Distribution want = exact_of(ns, 0);
  ASSERT_TRUE(got.percentile_resolution);
  const double r = *got.percentile_resolution;
  EXPECT_EQ(r, LogLinearHistogram::kRelativeResolution);
  EXPECT_EQ(got.count, want.count);
  EXPECT_EQ(got.min, want.min);
  EXPECT_EQ(got.max, want.max);
  EXPECT_NEAR(got.mean, want.mean, 1e-9 * std::fabs(want.mean));
  EXPECT_NEAR(*got.stddev, *want.stddev, 1e-9 * *want.stddev);
  const std::pair<double, double> p[] = {{got.p50, want.p50},
                                         {got.p90, want.p90},
                                         {got.p95, want.p95},
                                         {got.p99, want.p99},
                                         {got.p999, want.p999}};
  for (const auto& [g, w] : p) EXPECT_LE(std::fabs(g - w), r * std::fabs(w)) << g << " vs " << w;
}

TEST(StreamingDistribution, MemoryStopsGrowingAtTheLimit) {
  const auto ns = samples(400'000);
  StreamingDistribution d(16384);
  size_t at_100k = 0;
  for (size_t i = 0; i < ns.size(); ++i) {
    d.add(ns[i]);
    if (i == 100'000) at_100k = d.bytes();
  }
  EXPECT_LE(d.bytes(), at_100k + 3 * 8 * 1024) << "a few more bucket chunks at most";
  EXPECT_LT(d.bytes(), 400'000 * sizeof(int64_t) / 8);
}

TEST(LogLinearHistogram, SmallValuesAreExactAndLargeOnesWithinTheResolution) {
  LogLinearHistogram h;
  const int64_t values[] = {-5'000'000'000, -3, 0, 7, 2047, 2048, 123'456'789, INT64_MAX};
  for (const int64_t v : values) h.add(v);
  ASSERT_EQ(h.count(), std::size(values));
  for (size_t k = 0; k < std::size(values); ++k) {
    const auto want = static_cast<double>(values[k]);
    EXPECT_LE(std::fabs(h.value_at(k) - want),
              LogLinearHistogram::kRelativeResolution * std::fabs(want))
        << values[k];
  }
  EXPECT_EQ(h.value_at(1), -3.0);
  EXPECT_EQ(h.value_at(4), 2047.0);
}

}  // namespace
}  // namespace latlab
