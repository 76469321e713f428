#include <gtest/gtest.h>

#include <memory>

#include "latlab/bench/sim.hpp"

namespace latlab {
namespace {

TEST(LatencySimDevice, FollowsItsScriptOnAVirtualClock) {
  SimDesc d;
  d.time = SimTime::virtual_time;
  d.virtual_start_ns = 1'000'000;
  d.frame = SimFrameScript{
      .submit_cost_ns = 10, .queue_delay_ns = 20, .gpu_duration_ns = 30, .fence_wake_delay_ns = 40};
  auto dev = std::make_unique<SimDevice>(d);
  HostTime* time = &dev->time();
  ASSERT_TRUE(dev->submit_frame(0, {}).ok());
  EXPECT_EQ(time->now_ns(), 1'000'010);
  const Result<GpuFrameTiming> t = dev->wait_frame(0);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->gpu_status, QueryStatus::ok);
  EXPECT_EQ(t->fence_status, QueryStatus::ok);
  EXPECT_EQ(dev->host_at(t->gpu_begin_ticks), 1'000'030);
  EXPECT_EQ(dev->host_at(t->gpu_end_ticks), 1'000'060);
  EXPECT_EQ(t->fence_wake_ns, 1'000'100);
  EXPECT_EQ(time->now_ns(), 1'000'100);
}

TEST(LatencySimDevice, GpuWorkQueuesBehindEarlierWork) {
  SimDesc d;
  d.time = SimTime::virtual_time;
  d.virtual_start_ns = 0;
  d.frame = SimFrameScript{
      .submit_cost_ns = 0, .queue_delay_ns = 0, .gpu_duration_ns = 100, .fence_wake_delay_ns = 0};
  auto dev = std::make_unique<SimDevice>(d);
  ASSERT_TRUE(dev->submit_frame(0, {}).ok());
  ASSERT_TRUE(dev->submit_frame(1, {}).ok());
  const auto a = dev->wait_frame(0);
  const auto b = dev->wait_frame(1);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(dev->host_at(b->gpu_begin_ticks), dev->host_at(a->gpu_end_ticks));
  EXPECT_FALSE(dev->wait_frame(7).ok());  // never submitted
}

TEST(LatencySimDevice, TicksRoundTripWithDriftPeriodAndWrap) {
  SimDesc d;
  d.time = SimTime::virtual_time;
  d.virtual_start_ns = 5'000'000'000;
  d.clock.ticks = TickFormat{125, 3, 36};
  d.clock.drift_ppm = 7.0;                    // the device runs 7 ppm slow
  d.clock.start_ticks = (1ull << 36) - 1000;  // wraps soon after the epoch
  auto dev = std::make_unique<SimDevice>(d);
  for (int64_t dt : {int64_t{0}, int64_t{41}, int64_t{1'000'000}, int64_t{3'000'000'000}}) {
    const int64_t h = dev->epoch_ns() + dt;
    EXPECT_NEAR(static_cast<double>(dev->host_at(dev->ticks_at(h))), static_cast<double>(h), 42.0)
        << dt;
  }
  EXPECT_LT(dev->ticks_at(dev->epoch_ns() + 1'000'000), 1ull << 36);
}

TEST(LatencySimDevice, FaultsAreReportedNotHidden) {
  SimDesc d;
  d.time = SimTime::virtual_time;
  d.virtual_start_ns = 0;
  d.script = [](uint64_t f) {
    SimFrameScript s;
    if (f == 1) s.gpu_status = QueryStatus::not_ready;
    if (f == 2) s.drop_fence = true;
    if (f == 3) s.fail_submit = true;
    return s;
  };
  auto dev = std::make_unique<SimDevice>(d);
  ASSERT_TRUE(dev->submit_frame(1, {}).ok());
  auto t1 = dev->wait_frame(1);
  ASSERT_TRUE(t1.ok());
  EXPECT_EQ(t1->gpu_status, QueryStatus::not_ready);
  EXPECT_EQ(t1->fence_status, QueryStatus::ok);
  ASSERT_TRUE(dev->submit_frame(2, {}).ok());
  auto t2 = dev->wait_frame(2);
  ASSERT_TRUE(t2.ok());
  EXPECT_EQ(t2->gpu_status, QueryStatus::ok);
  EXPECT_EQ(t2->fence_status, QueryStatus::missing);
  EXPECT_FALSE(dev->submit_frame(3, {}).ok());
}

TEST(LatencySimDevice, CalibrationPairsAreOnTheDeviceClock) {
  SimDesc d;
  d.time = SimTime::virtual_time;
  d.virtual_start_ns = 123'456'789;
  d.clock.deviation_ns = 250;  // exact pairs that report 250 ns
  d.clock.deviation_spread_ns = 0;
  d.clock.error_fraction = 0.0;
  auto dev = std::make_unique<SimDevice>(d);
  dev->time().sleep_until(dev->time().now_ns() + 1'000);
  const Result<CalibrationPair> p = dev->sample_calibration();
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->host_ns, 123'457'789);
  EXPECT_EQ(p->device_ticks, dev->ticks_at(p->host_ns));
  EXPECT_EQ(p->max_deviation_ns, 250);
  EXPECT_EQ(dev->info().calibration_domain, "CLOCK_MONOTONIC");

  SimDesc none;
  none.time = SimTime::virtual_time;
  none.calibration_domain.clear();
  auto dev2 = std::make_unique<SimDevice>(none);
  EXPECT_FALSE(dev2->sample_calibration().ok());
  ASSERT_EQ(dev2->info().missing.size(), 1u);
  EXPECT_EQ(dev2->info().missing[0].name, "calibrated_timestamps");
}

}  // namespace
}  // namespace latlab
