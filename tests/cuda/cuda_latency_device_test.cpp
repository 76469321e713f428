// CudaLatencyDevice on a real CUDA device (skips without one).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cuda/cuda_test_util.hpp"
#include "latlab/bench/cuda_rig.hpp"
#include "latlab/bench/latency_run.hpp"
#include "latlab/cuda.hpp"
#include "latlab/host_clock.hpp"

namespace latlab {
namespace {

class CudaLatencyDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LATLAB_REQUIRE_CUDA_DEVICE();
    auto d = create_cuda_latency_device("0");
    ASSERT_TRUE(d.ok()) << d.error().message;
    dev_ = std::move(*d);
  }
  CalibrationPair sample() {
    auto p = dev_->sample_calibration();
    EXPECT_TRUE(p.ok()) << p.error().message;
    return p.ok() ? *p : CalibrationPair{};
  }
  int64_t gpu_ns(const FrameWorkload& work, uint64_t frame) {
    EXPECT_TRUE(dev_->submit_frame(frame, work).ok());
    auto t = dev_->wait_frame(frame);
    EXPECT_TRUE(t.ok()) << t.error().message;
    if (!t.ok() || t->gpu_status != QueryStatus::ok) return -1;
    return static_cast<int64_t>(t->gpu_end_ticks - t->gpu_begin_ticks);
  }
  std::unique_ptr<LatencyDevice> dev_;
};

// The poll observer on CUDA: cudaEventQuery on the poller's thread while the
// consumer sleeps in cudaEventSynchronize on the same blocking-sync event;
// the reference path's event is polled too. Fastest of the frames: the poll
// sees completion no later than the blocking wait.
TEST_F(CudaLatencyDeviceTest, PollObserverSeesEveryFrameAfterTheGpuEnd) {
  LatencyRunDesc desc;
  desc.schedule = ScheduleDesc{5, 1'000'000, 2'000'000};
  desc.frames = 60;
  desc.blocks = 2;
  desc.warmup_frames = 5;
  desc.cpu_step_iterations = 100;
  desc.block_lead_ns = 2'000'000;
  desc.bare_comparison = true;
  LatencyRunEnv env;
  env.device = dev_.get();
  const Result<LatencyRun> r = run_latency(desc, env);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const LatencyRun& run = r.value();
  EXPECT_FALSE(run.partial) << run.partial_reason;
  EXPECT_TRUE(run.polled);
  const auto at = [](const SeriesDistributions& d, Series s) { return d[static_cast<size_t>(s)]; };
  // Not asserted: that polling sees completion first. On the H200 a thread
  // spinning on cudaEventQuery beside a blocking-sync waiter wakes after it
  // (fastest frame 44 vs 35 us; lean.sh: p50 92 vs 19 us after GPU end),
  // unlike Vulkan's vkGetFenceStatus (36 vs 84 us). Asserted: the poller
  // sees every frame, within its limit, and never before the GPU's end
  // (beyond the clock mapping's bound, under 2 us on CUDA).
  EXPECT_GT(at(run.reference_total, Series::poll_latency).count, 0u);
  EXPECT_EQ(at(run.total, Series::poll_latency).count, at(run.total, Series::fence_latency).count);
  EXPECT_EQ(run.total_missing.poll_limit, 0u);
  EXPECT_GE(at(run.total, Series::gpu_end_to_poll_wake).min, -2.0);
}

TEST_F(CudaLatencyDeviceTest, InfoDescribesTheDevice) {
  const DeviceInfo& info = dev_->info();
  EXPECT_EQ(info.backend, "cuda");
  EXPECT_FALSE(info.name.empty());
  EXPECT_NE(info.driver.find("CUDA"), std::string::npos);
  EXPECT_TRUE(info.can_time);
  EXPECT_EQ(info.ticks.period_num, 1u);
  EXPECT_EQ(info.ticks.period_den, 1u);
  EXPECT_EQ(info.ticks.valid_bits, 64u);
  EXPECT_EQ(info.calibration_domain, "CLOCK_MONOTONIC (bracketed %globaltimer)");
  EXPECT_TRUE(info.calibration_estimated);
  // CUDA cannot report a disjoint span: it says so.
  EXPECT_TRUE(std::any_of(info.missing.begin(), info.missing.end(), [](const MissingCapability& m) {
    return m.name == "disjoint_detection" && !m.reason.empty();
  }));
}

TEST_F(CudaLatencyDeviceTest, FramesHaveOrderedGpuStamps) {
  const FrameWorkload work{.passes = 4, .complexity = 64, .width = 256, .height = 256};
  for (uint64_t frame = 1; frame <= 8; ++frame) {
    ASSERT_TRUE(dev_->submit_frame(frame, work).ok());
    auto t = dev_->wait_frame(frame);
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t->gpu_status, QueryStatus::ok) << frame;
    EXPECT_EQ(t->fence_status, QueryStatus::ok) << frame;
    EXPECT_LT(t->gpu_begin_ticks, t->gpu_end_ticks) << frame;
  }
}

TEST_F(CudaLatencyDeviceTest, FramesInFlightCompleteInAnyWaitOrder) {
  const FrameWorkload work{.passes = 1, .complexity = 16, .width = 128, .height = 128};
  for (uint64_t frame = 10; frame < 14; ++frame) ASSERT_TRUE(dev_->submit_frame(frame, work).ok());
  for (uint64_t frame : {12u, 10u, 13u, 11u}) {
    auto t = dev_->wait_frame(frame);
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t->gpu_status, QueryStatus::ok) << frame;
  }
}

TEST_F(CudaLatencyDeviceTest, FenceWakeFollowsMappedGpuEnd) {
  const FrameWorkload work{.passes = 4, .complexity = 256, .width = 512, .height = 512};
  ASSERT_TRUE(dev_->submit_frame(1, work).ok());  // warm-up: first launch loads the module
  ASSERT_TRUE(dev_->wait_frame(1).ok());
  const CalibrationPair before = sample();
  const int64_t submit_ns = host_now_ns();
  ASSERT_TRUE(dev_->submit_frame(2, work).ok());
  auto t = dev_->wait_frame(2);
  ASSERT_TRUE(t.ok()) << t.error().message;
  const CalibrationPair after = sample();
  ASSERT_EQ(t->gpu_status, QueryStatus::ok);
  const auto begin = test::map_between(before, after, t->gpu_begin_ticks);
  const auto end = test::map_between(before, after, t->gpu_end_ticks);
  std::printf(
      "submit -> gpu begin %.3f us, gpu %.3f us, gpu end -> fence wake %.3f us (bound +-%.3f us)\n",
      static_cast<double>(begin.host_ns - submit_ns) / 1e3,
      static_cast<double>(t->gpu_end_ticks - t->gpu_begin_ticks) / 1e3,
      static_cast<double>(t->fence_wake_ns - end.host_ns) / 1e3,
      static_cast<double>(end.error_ns) / 1e3);
  EXPECT_GE(begin.host_ns + begin.error_ns, submit_ns);
  EXPECT_GE(t->fence_wake_ns, end.host_ns - end.error_ns);
}

TEST_F(CudaLatencyDeviceTest, MoreComplexityTakesLonger) {
  FrameWorkload light{.passes = 4, .complexity = 1, .width = 512, .height = 512};
  FrameWorkload heavy = light;
  heavy.complexity = 4096;
  (void)gpu_ns(light, 1);  // warm-up
  std::vector<int64_t> l;
  std::vector<int64_t> h;
  for (uint64_t i = 0; i < 5; ++i) {
    l.push_back(gpu_ns(light, 100 + i));
    h.push_back(gpu_ns(heavy, 200 + i));
  }
  std::sort(l.begin(), l.end());
  std::sort(h.begin(), h.end());
  std::printf("4 passes 512x512: complexity 1 -> %.1f us, 4096 -> %.1f us (medians)\n",
              static_cast<double>(l[2]) / 1e3, static_cast<double>(h[2]) / 1e3);
  EXPECT_GT(l[0], 0);
  EXPECT_GT(h[2], 4 * l[2]);
}

TEST_F(CudaLatencyDeviceTest, RefusesBadWorkloads) {
  auto r = dev_->submit_frame(1, FrameWorkload{.complexity = 0});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("complexity"), std::string::npos) << r.error().message;
  EXPECT_FALSE(dev_->submit_frame(1, FrameWorkload{.form = WorkloadForm::fragment}).ok());
}

TEST_F(CudaLatencyDeviceTest, RefusesUnknownAndDuplicateFrames) {
  EXPECT_FALSE(dev_->wait_frame(42).ok());
  ASSERT_TRUE(dev_->submit_frame(7, FrameWorkload{}).ok());
  EXPECT_FALSE(dev_->submit_frame(7, FrameWorkload{}).ok());
  ASSERT_TRUE(dev_->wait_frame(7).ok());
  EXPECT_FALSE(dev_->wait_frame(7).ok());
}

TEST_F(CudaLatencyDeviceTest, RefusesMoreFramesThanInFlight) {
  for (uint64_t frame = 0; frame < 4; ++frame)
    ASSERT_TRUE(dev_->submit_frame(frame, FrameWorkload{}).ok());
  auto r = dev_->submit_frame(4, FrameWorkload{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("in flight"), std::string::npos) << r.error().message;
  for (uint64_t frame = 0; frame < 4; ++frame) ASSERT_TRUE(dev_->wait_frame(frame).ok());
}

TEST(CudaLatencyDeviceSelector, UnknownNameListsTheDevices) {
  LATLAB_REQUIRE_CUDA_DEVICE();
  auto d = create_cuda_latency_device("no-such-gpu-xyz");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("no-such-gpu-xyz"), std::string::npos) << d.error().message;
  EXPECT_NE(d.error().message.find("0: "), std::string::npos) << d.error().message;
}

TEST(CudaDevices, EnumerationReportsDeviceZero) {
  LATLAB_REQUIRE_CUDA_DEVICE();
  auto devices = enumerate_cuda_devices();
  ASSERT_TRUE(devices.ok()) << devices.error().message;
  ASSERT_FALSE(devices->empty());
  const CudaDeviceReport& d = devices->front();
  std::printf("%s cc %d.%d, %d SMs, %.1f GiB, SM clock %d kHz, driver %s, runtime %s\n",
              d.name.c_str(), d.cc_major, d.cc_minor, d.sm_count,
              static_cast<double>(d.total_memory_bytes) / (1024.0 * 1024.0 * 1024.0), d.clock_khz,
              format_cuda_version(d.driver_version).c_str(),
              format_cuda_version(d.runtime_version).c_str());
  EXPECT_FALSE(d.name.empty());
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GT(d.total_memory_bytes, 0u);
  EXPECT_TRUE(d.can_map_host_memory);
  EXPECT_GE(d.driver_version, d.runtime_version);
  EXPECT_TRUE(std::any_of(d.missing.begin(), d.missing.end(), [](const MissingCapability& m) {
    return m.name == "disjoint_detection";
  }));
}

}  // namespace
}  // namespace latlab
