#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "latlab/bench/frame_markers.hpp"

namespace latlab {
namespace {

FrameRecord full_frame(int64_t base) {
  FrameRecord f;
  f.deadline_ns = base;
  f.generator_wake_ns = base + 100;
  f.signal_ns = base + 150;
  f.consumer_wake_ns = base + 1'150;  // +1000
  f.cpu_start_ns = base + 1'200;
  f.cpu_end_ns = base + 3'200;       // 2000
  f.submit_start_ns = base + 3'500;  // 300
  f.submit_end_ns = base + 23'500;   // 20000
  f.gpu_begin_ticks = 5'000;
  f.gpu_end_ticks = 55'000;             // 50000 ticks of 1 ns
  f.gpu_begin_host_ns = base + 53'500;  // submit_start + 50000
  f.gpu_end_host_ns = base + 103'500;
  f.fence_wake_ns = base + 113'500;  // +10000
  f.poll_wake_ns = base + 104'500;   // +1000 after GPU end
  f.map_error_ns = 250;
  f.poll_cpu_ns = 900;
  f.gpu_status = QueryStatus::ok;
  f.fence_status = QueryStatus::ok;
  f.poll_status = QueryStatus::ok;
  f.flags = kFramePolled;
  for (size_t m = 0; m < kMarkerCount; ++m) f.set(static_cast<Marker>(m));
  return f;
}

TEST(LatencyStages, EachSeriesFromItsOwnPairOfMarkers) {
  const FrameRecord f = full_frame(1'000'000);
  const TickFormat ticks;
  auto v = [&](Series s) { return series_value_ns(f, s, ticks).value(); };
  EXPECT_EQ(v(Series::signal_to_consumer_wake), 1'000);
  EXPECT_EQ(v(Series::cpu_processing), 2'000);
  EXPECT_EQ(v(Series::cpu_end_to_submit_start), 300);
  EXPECT_EQ(v(Series::workload_submit_cpu_span), 20'000);
  EXPECT_EQ(v(Series::submit_start_to_gpu_begin), 50'000);
  EXPECT_EQ(v(Series::gpu_execution), 50'000);
  EXPECT_EQ(v(Series::gpu_end_to_fence_wake), 10'000);
  EXPECT_EQ(v(Series::core_latency), 103'350);
  EXPECT_EQ(v(Series::fence_latency), 113'350);
  EXPECT_EQ(v(Series::poll_latency), 104'350);
  EXPECT_EQ(v(Series::gpu_end_to_poll_wake), 1'000);
  EXPECT_EQ(v(Series::poll_cpu), 900);
  EXPECT_EQ(v(Series::timer_lateness), 150);
  EXPECT_EQ(v(Series::clock_map_error), 250);
}

TEST(LatencyStages, GpuExecutionUsesDeviceTicksAcrossAWrap) {
  FrameRecord f = full_frame(0);
  f.gpu_begin_ticks = 0xFFFF'FF00ull;  // 32 valid bits, wraps
  f.gpu_end_ticks = 0x0000'0100ull;
  const TickFormat ticks{125, 3, 32};  // 41.666... ns
  EXPECT_EQ(series_value_ns(f, Series::gpu_execution, ticks).value(), (512 * 125 + 1) / 3);
}

// Which series lose a sample when each marker is absent.
TEST(LatencyStages, AnAbsentMarkerAffectsOnlyTheSeriesThatNeedIt) {
  const TickFormat ticks;
  struct Case {
    Marker absent;
    std::vector<Series> affected;
  };
  const std::vector<Case> cases{
      {Marker::deadline, {Series::timer_lateness}},
      {Marker::signal,
       {Series::signal_to_consumer_wake, Series::core_latency, Series::fence_latency,
        Series::poll_latency, Series::timer_lateness}},
      {Marker::consumer_wake, {Series::signal_to_consumer_wake}},
      {Marker::cpu_end, {Series::cpu_processing, Series::cpu_end_to_submit_start}},
      {Marker::submit_start,
       {Series::cpu_end_to_submit_start, Series::workload_submit_cpu_span,
        Series::submit_start_to_gpu_begin}},
      {Marker::submit_end, {Series::workload_submit_cpu_span}},
      {Marker::gpu_begin, {Series::gpu_execution}},
      {Marker::gpu_begin_host, {Series::submit_start_to_gpu_begin}},
      {Marker::gpu_end_host,
       {Series::gpu_end_to_fence_wake, Series::core_latency, Series::clock_map_error,
        Series::gpu_end_to_poll_wake}},
      {Marker::fence_wake, {Series::gpu_end_to_fence_wake, Series::fence_latency}},
      {Marker::poll_wake, {Series::poll_latency, Series::gpu_end_to_poll_wake}},
  };
  for (const Case& c : cases) {
    FrameRecord f = full_frame(0);
    f.present = static_cast<uint16_t>(f.present & ~(1u << static_cast<unsigned>(c.absent)));
    for (size_t i = 0; i < kSeriesCount; ++i) {
      const auto s = static_cast<Series>(i);
      const bool should_miss =
          std::find(c.affected.begin(), c.affected.end(), s) != c.affected.end();
      EXPECT_EQ(!series_value_ns(f, s, ticks).has_value(), should_miss)
          << "marker " << to_string(c.absent) << ", series " << to_string(s);
    }
  }
}

// Reference type-7 percentile, written independently of stats.cpp.
double reference_percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double h = (static_cast<double>(v.size()) - 1) * q;
  const double lo = std::floor(h);
  const auto i = static_cast<size_t>(lo);
  const size_t j = std::min(i + 1, v.size() - 1);
  return v[i] + (h - lo) * (v[j] - v[i]);
}

TEST(LatencyStages, DistributionsMatchAReferenceComputation) {
  std::vector<FrameRecord> frames;
  std::vector<double> expect_us;
  uint64_t seed = 12345;
  for (int i = 0; i < 1013; ++i) {
    FrameRecord f = full_frame(int64_t{i} * 10'000'000);
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    const auto jitter = static_cast<int64_t>(seed >> 44);  // 0..1M ns
    f.consumer_wake_ns = f.signal_ns + 500 + jitter;
    expect_us.push_back(static_cast<double>(500 + jitter) / 1000.0);
    if (i % 97 == 5)
      f.present =
          static_cast<uint16_t>(f.present & ~(1u << static_cast<unsigned>(Marker::consumer_wake)));
    frames.push_back(f);
  }
  std::vector<double> kept;
  for (size_t i = 0; i < frames.size(); ++i) {
    if (frames[i].has(Marker::consumer_wake)) kept.push_back(expect_us[i]);
  }
  const SeriesDistributions d = summarize_frames(frames, TickFormat{});
  const Distribution& s = d[static_cast<size_t>(Series::signal_to_consumer_wake)];
  EXPECT_EQ(s.count, kept.size());
  EXPECT_EQ(s.missing, frames.size() - kept.size());
  EXPECT_EQ(s.missing, 11u);
  for (double q : {0.5, 0.9, 0.95, 0.99, 0.999}) {
    const double ref = reference_percentile(kept, q);
    const double got = q == 0.5    ? s.p50
                       : q == 0.9  ? s.p90
                       : q == 0.95 ? s.p95
                       : q == 0.99 ? s.p99
                                   : s.p999;
    EXPECT_NEAR(got, ref, 1e-9) << q;
  }
  EXPECT_DOUBLE_EQ(s.min, *std::min_element(kept.begin(), kept.end()));
  EXPECT_DOUBLE_EQ(s.max, *std::max_element(kept.begin(), kept.end()));
  double sum = 0;
  for (double x : kept) sum += x;
  EXPECT_NEAR(s.mean, sum / static_cast<double>(kept.size()), 1e-9);
  // Every other series is complete.
  EXPECT_EQ(d[static_cast<size_t>(Series::cpu_processing)].missing, 0u);
  EXPECT_DOUBLE_EQ(d[static_cast<size_t>(Series::cpu_processing)].p99, 2.0);
}

TEST(LatencyStages, MissingBreakdownCountsReasons) {
  std::vector<FrameRecord> frames(4, full_frame(0));
  frames[1].gpu_status = QueryStatus::not_ready;
  frames[2].fence_status = QueryStatus::missing;
  frames[3].present = static_cast<uint16_t>(frames[3].present &
                                            ~(1u << static_cast<unsigned>(Marker::gpu_end_host)));
  const MissingBreakdown m = count_missing(frames);
  EXPECT_EQ(m.gpu_not_ok, 1u);
  EXPECT_EQ(m.fence_not_ok, 1u);
  EXPECT_EQ(m.gpu_unmapped, 1u);
  EXPECT_EQ(m.gpu_status_counts[static_cast<size_t>(QueryStatus::ok)], 3u);
  EXPECT_EQ(m.gpu_status_counts[static_cast<size_t>(QueryStatus::not_ready)], 1u);
}

}  // namespace
}  // namespace latlab
