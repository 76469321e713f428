// GlLatencyDevice: frames through the seam's LatencyDevice on GL (llvmpipe
// on CI), KHR_debug on.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "fastest_apart.hpp"
#include "latlab/bench/gl_rig.hpp"
#include "latlab/bench/latency_run.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/opengl.hpp"
#include "one_mesa_worker.hpp"
#include "opengl/gl_fixture.hpp"

namespace latlab::test {
namespace {

std::unique_ptr<GlLatencyDevice> open_device() {
  auto dev = GlLatencyDevice::create(
      {.context = {.device = gl_test_device(), .api = GlApiKind::automatic, .debug = true},
       .frames_in_flight = 4});
  if (!dev) return nullptr;
  return std::move(dev.value());
}

void expect_no_debug_errors(GlLatencyDevice& dev) {
  std::string all;
  for (const auto& m : dev.context().debug_messages()) all += m + "\n";
  EXPECT_EQ(dev.context().debug_error_count(), 0u) << all;
}

// The poll observer on GL: glClientWaitSync with timeout 0 on the poller's
// own context (sharing the device's syncs) while the consumer blocks in
// glClientWaitSync on the same sync: every frame polled, none past the
// limit, no GL error on either context. Which of the two sees completion
// first is not asserted here: on this 2-CPU machine llvmpipe's threads take
// both CPUs and the poller is mostly descheduled (docs/BENCHMARKS.md: its
// CPU per frame is ~6 us against a ~70 us wait); the Vulkan test compares.
TEST(GlLatencyDevice, PollObserverSeesEveryFrameBesideTheBlockingWait) {
  auto dev = open_device();
  if (!dev) GTEST_SKIP() << "no GL context with timestamps here";
  LatencyRunDesc desc;
  desc.schedule = ScheduleDesc{5, 1'000'000, 2'000'000};
  desc.frames = 40;
  desc.blocks = 2;
  desc.warmup_frames = 4;
  desc.cpu_step_iterations = 100;
  desc.block_lead_ns = 2'000'000;
  desc.workload = FrameWorkload{
      .passes = 1, .complexity = 4, .width = 32, .height = 32, .form = WorkloadForm::compute};
  LatencyRunEnv env;
  env.device = dev.get();
  const Result<LatencyRun> r = run_latency(desc, env);
  ASSERT_TRUE(r) << r.error().message;
  const LatencyRun& run = r.value();
  EXPECT_FALSE(run.partial) << run.partial_reason;
  ASSERT_TRUE(run.polled) << (run.unavailable.empty() ? "" : run.unavailable.back().reason);
  EXPECT_EQ(run.total[static_cast<size_t>(Series::poll_latency)].count, 40u);
  EXPECT_EQ(run.total[static_cast<size_t>(Series::fence_latency)].count, 40u);
  EXPECT_EQ(run.total_missing.poll_limit, 0u);
  for (const FrameRecord& f : run.frames) {
    ASSERT_TRUE(f.has(Marker::poll_wake));
    EXPECT_GT(f.poll_wake_ns, f.submit_end_ns);
  }
  expect_no_debug_errors(*dev);
}

TEST(GlLatencyDevice, FramesCompleteWithOrderedTimestampsAndAFenceWake) {
  auto dev = open_device();
  if (!dev) GTEST_SKIP() << "no GL context with timestamps here";
  const DeviceInfo& info = dev->info();
  EXPECT_EQ(info.backend, "opengl");
  EXPECT_TRUE(info.can_time);
  EXPECT_TRUE(info.calibration_estimated);
  const FrameWorkload work{
      .passes = 4, .complexity = 16, .width = 64, .height = 64, .form = WorkloadForm::compute};
  uint64_t prev_end = 0;
  for (uint64_t id = 0; id < 12; id += 2) {
    const int64_t submit_ns = host_now_ns();
    ASSERT_TRUE(dev->submit_frame(id, work));
    ASSERT_TRUE(dev->submit_frame(id + 1, work));
    for (uint64_t k = id; k < id + 2; ++k) {
      auto t = dev->wait_frame(k);
      ASSERT_TRUE(t) << t.error().message;
      EXPECT_EQ(t->fence_status, QueryStatus::ok);
      EXPECT_GE(t->fence_wake_ns, submit_ns);
      ASSERT_EQ(t->gpu_status, QueryStatus::ok) << to_string(t->gpu_status);
      EXPECT_LT(t->gpu_begin_ticks, t->gpu_end_ticks);
      EXPECT_LE(prev_end, t->gpu_begin_ticks) << "frames run in submission order";
      prev_end = t->gpu_end_ticks;
    }
  }
  expect_no_debug_errors(*dev);
}

TEST(GlLatencyDevice, FragmentFormRunsToo) {
  auto dev = open_device();
  if (!dev) GTEST_SKIP() << "no GL context with timestamps here";
  const FrameWorkload work{
      .passes = 4, .complexity = 8, .width = 64, .height = 64, .form = WorkloadForm::fragment};
  ASSERT_TRUE(dev->submit_frame(1, work));
  auto t = dev->wait_frame(1);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->gpu_status, QueryStatus::ok);
  expect_no_debug_errors(*dev);
}

// The latency engine submits and waits on a consumer thread per block and
// calibrates on another: the device follows the calling thread.
TEST(GlLatencyDevice, FramesFromChangingThreadsAndCalibrationAlongside) {
  auto dev = open_device();
  if (!dev) GTEST_SKIP() << "no GL context with timestamps here";
  const FrameWorkload work{
      .passes = 1, .complexity = 4, .width = 32, .height = 32, .form = WorkloadForm::compute};
  std::atomic<bool> stop{false};
  std::atomic<int> pairs{0};
  std::thread calib([&] {
    while (!stop) {
      if (dev->sample_calibration()) ++pairs;
    }
  });
  for (int block = 0; block < 3; ++block) {
    std::thread consumer([&] {
      for (uint64_t i = 0; i < 5; ++i) {
        const uint64_t id = static_cast<uint64_t>(block) * 100 + i;
        ASSERT_TRUE(dev->submit_frame(id, work));
        auto t = dev->wait_frame(id);
        ASSERT_TRUE(t) << t.error().message;
        EXPECT_EQ(t->gpu_status, QueryStatus::ok);
      }
    });
    consumer.join();
  }
  stop = true;
  calib.join();
  EXPECT_GT(pairs.load(), 0);
  expect_no_debug_errors(*dev);
}

// prepare_thread makes the context current once and leaves the thread as it
// found it: released on a new thread (so another thread's frames run after
// it), still current where it was current before.
TEST(GlLatencyDevice, PrepareThreadLeavesTheContextAsItFoundIt) {
  auto dev = open_device();
  if (!dev) GTEST_SKIP() << "no GL context with timestamps here";
  std::thread fresh([&] {
    const Result<void> p = dev->prepare_thread();
    EXPECT_TRUE(p.ok()) << (p ? std::string() : p.error().message);
    EXPECT_FALSE(dev->context().is_current());
  });
  fresh.join();
  const FrameWorkload work{
      .passes = 1, .complexity = 4, .width = 32, .height = 32, .form = WorkloadForm::compute};
  ASSERT_TRUE(dev->submit_frame(1, work));
  ASSERT_TRUE(dev->wait_frame(1));
  ASSERT_TRUE(dev->context().make_current());
  EXPECT_TRUE(dev->prepare_thread());
  EXPECT_TRUE(dev->context().is_current());
  dev->context().release_current();
  expect_no_debug_errors(*dev);
}

TEST(GlLatencyDevice, FourTimesTheComplexityTakesLongerOnTheFastestFrames) {
  test::use_one_mesa_worker();  // one_mesa_worker.hpp
  auto dev = open_device();
  if (!dev) GTEST_SKIP() << "no GL context with timestamps here";
  // Small and large frames alternate, so both see the same machine (run one
  // after the other, llvmpipe's threads once got both cores for the large
  // frames and one for the small ones), until the fastest of each are apart
  // or 40 pairs ran (fastest_apart.hpp): about 16 ms against 64 ms here.
  // 1.5x, not 2x: llvmpipe's fixed cost per frame is not scaled by the
  // complexity (in the ASan build the fastest frames were 52 ms against
  // 104 ms, 1.99x, and failed 2.0 two runs in five).
  constexpr double kApart = 1.5;
  constexpr uint32_t kSmall = 256;
  uint64_t id = 0;
  const FastestPair f = fastest_until_apart(
      [&](bool large) -> std::optional<int64_t> {
        const uint64_t frame = id++;
        EXPECT_TRUE(dev->submit_frame(frame, {.passes = 4,
                                              .complexity = large ? 4 * kSmall : kSmall,
                                              .width = 128,
                                              .height = 128,
                                              .form = WorkloadForm::compute}));
        auto t = dev->wait_frame(frame);
        if (!t || t->gpu_status != QueryStatus::ok) return std::nullopt;
        return dev->info().ticks.span_ns(t->gpu_begin_ticks, t->gpu_end_ticks);
      },
      kApart, /*min_pairs=*/8, /*max_pairs=*/40);
  ASSERT_TRUE(f.complete()) << "no frame of one size gave a time";
  EXPECT_TRUE(f.apart(kApart)) << "fastest of " << f.pairs << " pairs: " << f.light_ns << " ns vs "
                               << f.heavy_ns << " ns";
  expect_no_debug_errors(*dev);
}

TEST(GlLatencyDevice, BadWorkloadsAndUnknownFramesAreErrors) {
  auto dev = open_device();
  if (!dev) GTEST_SKIP() << "no GL context with timestamps here";
  EXPECT_FALSE(dev->submit_frame(
      1, {.passes = 0, .complexity = 1, .width = 8, .height = 8, .form = WorkloadForm::compute}));
  EXPECT_FALSE(dev->submit_frame(
      1,
      {.passes = 1, .complexity = 5000, .width = 8, .height = 8, .form = WorkloadForm::compute}));
  EXPECT_FALSE(dev->wait_frame(77));
  expect_no_debug_errors(*dev);
}

}  // namespace
}  // namespace latlab::test
