// Bracketed %globaltimer calibration on a real CUDA device (skips without one).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "cuda/cuda_test_util.hpp"
#include "latlab/bench/cuda_rig.hpp"
#include "latlab/cuda.hpp"
#include "latlab/host_clock.hpp"

namespace latlab {
namespace {

// The target for one best-of-N pair on a real GPU (a clock mapping bound of
// 2 us, docs/cuda-timing.md).
constexpr int64_t kMaxBestDeviationNs = 2'000;

class CudaCalibrationTest : public test::CudaStreamTest {
 protected:
  void SetUp() override {
    test::CudaStreamTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    CudaCalibrationDesc desc;
    desc.device = 0;
    auto s = CudaCalibrationSampler::create(desc);
    ASSERT_TRUE(s.ok()) << s.error().message;
    sampler_ = std::move(*s);
  }
  CalibrationPair sample() {
    auto p = sampler_->sample();
    EXPECT_TRUE(p.ok()) << p.error().message;
    return p.ok() ? *p : CalibrationPair{};
  }
  std::unique_ptr<CudaCalibrationSampler> sampler_;
};

TEST_F(CudaCalibrationTest, BestPairIsTight) {
  std::vector<int64_t> deviations;
  for (int i = 0; i < 16; ++i) {
    const CalibrationPair p = sample();
    EXPECT_TRUE(p.estimated);
    EXPECT_GE(p.max_deviation_ns, 0);
    EXPECT_GT(p.device_ticks, 0u);
    deviations.push_back(p.max_deviation_ns);
  }
  std::sort(deviations.begin(), deviations.end());
  std::printf("calibration half-width ns: min %lld median %lld max %lld\n",
              static_cast<long long>(deviations.front()),
              static_cast<long long>(deviations[deviations.size() / 2]),
              static_cast<long long>(deviations.back()));
  EXPECT_LE(deviations.front(), kMaxBestDeviationNs);
}

TEST_F(CudaCalibrationTest, PairsAgreeWithinTheirBounds) {
  // Each pair says |(host - gpu) - true offset| <= deviation at its moment;
  // two pairs' offsets may differ by both deviations plus the drift between
  // them (allow 100 ppm, far above the few ppm seen on real clocks).
  std::vector<CalibrationPair> pairs;
  for (int i = 0; i < 12; ++i) {
    pairs.push_back(sample());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (size_t i = 1; i < pairs.size(); ++i) {
    const auto& a = pairs[i - 1];
    const auto& b = pairs[i];
    const int64_t offset_a = a.host_ns - static_cast<int64_t>(a.device_ticks);
    const int64_t offset_b = b.host_ns - static_cast<int64_t>(b.device_ticks);
    const int64_t drift_allowance = (b.host_ns - a.host_ns) / 10'000;
    EXPECT_LE(std::llabs(offset_b - offset_a),
              a.max_deviation_ns + b.max_deviation_ns + drift_allowance)
        << i;
  }
}

TEST_F(CudaCalibrationTest, MappedStampsFallBetweenHostReads) {
  auto slots = CudaTimestampSlots::create({.count = 4, .device = 0});
  ASSERT_TRUE(slots.ok()) << slots.error().message;
  auto pool = TimestampQueryPool::create(
      slots.value(), QueryPoolDesc{.max_queries = 4, .kind = QueryKind::compute});
  ASSERT_TRUE(pool.ok()) << pool.error().message;
  const std::string u = "c:0:mapped:f1";

  const CalibrationPair before = sample();
  const auto off = (*pool)->allocate_queries_for_context(u, 1);
  ASSERT_TRUE(off.has_value());
  const int64_t host_before_launch = host_now_ns();
  ASSERT_TRUE((*slots)->write_timestamp(stream_, *off).ok());
  ASSERT_TRUE(cuda_launch_spin(stream_, 100'000).ok());
  ASSERT_TRUE((*slots)->write_timestamp(stream_, *off + 1).ok());
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  const int64_t host_after_sync = host_now_ns();
  const CalibrationPair after = sample();

  ASSERT_TRUE((*pool)->resolve_queries_async().is_ready());
  const TimestampResult r = (*pool)->timestamp(u);
  ASSERT_EQ(r.status, QueryStatus::ok);
  const auto begin = test::map_between(before, after, r.begin_ticks);
  const auto end = test::map_between(before, after, r.end_ticks);
  std::printf("launch -> begin %.3f us (+-%.3f), end -> sync return %.3f us (+-%.3f)\n",
              static_cast<double>(begin.host_ns - host_before_launch) / 1e3,
              static_cast<double>(begin.error_ns) / 1e3,
              static_cast<double>(host_after_sync - end.host_ns) / 1e3,
              static_cast<double>(end.error_ns) / 1e3);
  EXPECT_GE(begin.host_ns + begin.error_ns, host_before_launch);
  EXPECT_LE(end.host_ns - end.error_ns, host_after_sync);
  EXPECT_LE(begin.host_ns, end.host_ns);
}

TEST_F(CudaCalibrationTest, ConcurrentSamplesAllSucceed) {
  std::vector<int> failures(2, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([this, t, &failures] {
      for (int i = 0; i < 8; ++i) {
        if (!sampler_->sample().ok()) ++failures[static_cast<size_t>(t)];
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures[0] + failures[1], 0);
}

TEST_F(CudaCalibrationTest, GlobaltimerAdvancesInSteps) {
  auto probe = probe_globaltimer(0, 2000);
  ASSERT_TRUE(probe.ok()) << probe.error().message;
  std::printf("%%globaltimer steps: %u observed, min %llu ns, median %llu ns, max %llu ns\n",
              probe->steps, static_cast<unsigned long long>(probe->min_step_ns),
              static_cast<unsigned long long>(probe->median_step_ns),
              static_cast<unsigned long long>(probe->max_step_ns));
  EXPECT_EQ(probe->steps, 2000u);
  EXPECT_GT(probe->min_step_ns, 0u);
  EXPECT_LE(probe->median_step_ns, 2'000u);  // coarser than 2 us would make every bound here loose
}

}  // namespace
}  // namespace latlab
