// Performance mode on the sim cost model: fixed workload, back-to-back.
#include "latlab/bench/performance_mode.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "latlab/bench/sim.hpp"
#include "unit/interrupting_device.hpp"

namespace latlab {
namespace {

const FrameWorkload kWork{4, 200, 1280, 720, WorkloadForm::compute};

TEST(PerformanceMode, GpuTimePerFrameMatchesTheModel) {
  SimDevice dev(sim_load_desc());
  auto r = run_performance(dev, kWork, 100);
  ASSERT_TRUE(r) << r.error().message;
  const double want_ms = dev.cost_model()->expected_ns(kWork) / 1e6;
  EXPECT_EQ(r->frames, 100u);
  EXPECT_EQ(r->gpu_ms.count, 100u);
  EXPECT_EQ(r->gpu_ms.missing, 0u);
  EXPECT_NEAR(r->gpu_ms.p50, want_ms, 1e-6);
  EXPECT_NEAR(r->gpu_ms.max, want_ms, 1e-6);
  EXPECT_EQ(dev.frames_submitted(), 105u);  // 5 warm-up frames
  EXPECT_EQ(r->next_frame_id, 105u);
}

// Ctrl-C in Performance mode: no frame is submitted after the
// interrupt; the queued ones finish and count; the report says where.
TEST(PerformanceMode, InterruptStopsSubmittingAndGivesAPartialReport) {
  SimDevice sim_dev(sim_load_desc());
  std::atomic<bool> interrupt{false};
  InterruptAtSubmit dev(sim_dev, 50, interrupt);  // 5 warm-up frames, then measured 45
  PerformanceDesc pd;
  pd.interrupt = &interrupt;
  pd.first_frame_id = 7;
  auto r = run_performance(dev, kWork, 300, pd);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(dev.submitted(), 50u) << "submitted after the interrupt";
  EXPECT_EQ(r->frames, 45u) << "every submitted frame was waited for and counted";
  EXPECT_EQ(r->frames_asked, 300u);
  EXPECT_EQ(r->gpu_ms.count, 45u);
  EXPECT_EQ(r->next_frame_id, 7u + 50u);
  EXPECT_EQ(r->partial_reason, "interrupted in Performance mode after 45 of 300 measured frames");

  // A complete run says nothing.
  SimDevice whole(sim_load_desc());
  std::atomic<bool> never{false};
  pd.interrupt = &never;
  auto full = run_performance(whole, kWork, 20, pd);
  ASSERT_TRUE(full);
  EXPECT_TRUE(full->partial_reason.empty());
  EXPECT_EQ(full->frames, 20u);
}

TEST(PerformanceMode, BackToBackFramesKeepTheGpuBusy) {
  SimDevice busy_dev(sim_load_desc()), idle_dev(sim_load_desc());
  PerformanceDesc two;
  two.in_flight = 2;
  PerformanceDesc one;
  one.in_flight = 1;
  auto busy = run_performance(busy_dev, kWork, 50, two);
  auto idle = run_performance(idle_dev, kWork, 50, one);
  ASSERT_TRUE(busy && idle);
  const double gpu_ms = busy_dev.cost_model()->expected_ns(kWork) / 1e6;
  // Two in flight: the next frame is queued before the GPU finishes, so
  // frames end exactly one GPU time apart.
  EXPECT_NEAR(busy->fps.p50, 1000.0 / gpu_ms, 1e-3 * 1000.0 / gpu_ms);
  EXPECT_NEAR(busy->gpu_timeline_fps, 1000.0 / gpu_ms, 1e-3 * 1000.0 / gpu_ms);
  // One in flight: wake + submit + queue delay (60 us on the sim) between frames.
  const SimFrameScript sim = sim_load_desc().frame;
  const double gap_ms =
      gpu_ms +
      static_cast<double>(sim.fence_wake_delay_ns + sim.submit_cost_ns + sim.queue_delay_ns) / 1e6;
  EXPECT_NEAR(idle->fps.p50, 1000.0 / gap_ms, 1e-3 * 1000.0 / gap_ms);
  EXPECT_LT(idle->fps.p50, busy->fps.p50);
  EXPECT_NEAR(idle->gpu_ms.p50, busy->gpu_ms.p50,
              1e-9);  // GPU time itself does not depend on queueing
}

TEST(PerformanceMode, FramesWithoutTimestampsAreCountedAsMissing) {
  SimDesc sd = sim_load_desc();
  sd.fail_every = 4;  // frames 4, 8, ... (1-based, warm-up included)
  SimDevice dev(sd);
  PerformanceDesc desc;
  desc.warmup_frames = 0;
  auto r = run_performance(dev, kWork, 40, desc);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->gpu_ms.missing, 10u);
  EXPECT_EQ(r->gpu_ms.count + r->gpu_ms.missing, 40u);
  // A rate needs two consecutive ends: the failed frame and the one after it
  // lose theirs, and the very first frame has no predecessor.
  EXPECT_EQ(r->fps.count + r->fps.missing, 40u);
  EXPECT_EQ(r->fps.missing, 1u + 10u + 9u);
  EXPECT_EQ(r->gpu_timeline_fps, 0.0) << "no timeline rate across a gap in the data";
}

TEST(PerformanceMode, BadInputAndMissingCapabilitiesAreErrors) {
  SimDevice dev(sim_load_desc());
  EXPECT_FALSE(run_performance(dev, kWork, 0));
  PerformanceDesc zero;
  zero.in_flight = 0;
  EXPECT_FALSE(run_performance(dev, kWork, 10, zero));
  SimDesc no_ts = sim_load_desc();
  no_ts.can_time = false;
  SimDevice blind(no_ts);
  auto r = run_performance(blind, kWork, 10);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("no usable GPU timestamps"), std::string::npos);
  EXPECT_EQ(blind.frames_submitted(), 0u);
}

TEST(PerformanceMode, DeviceFailuresNameTheFrame) {
  SimDesc sd = sim_load_desc();
  sd.max_in_flight = 1;
  SimDevice dev(sd);
  PerformanceDesc desc;
  desc.in_flight = 2;
  desc.first_frame_id = 7;
  auto r = run_performance(dev, kWork, 10, desc);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("submitting frame 8"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace latlab
