// The fragment form of the reference workload (full-screen passes into
// offscreen targets) on lavapipe with validation on, directly and through
// the latency device.
#include <algorithm>
#include <cstdlib>

#include "latlab/bench/vulkan_rig.hpp"
#include "latlab/host_clock.hpp"
#include "one_mesa_worker.hpp"
#include "vulkan/vulkan_fixture.hpp"

namespace latlab::test {
namespace {

std::string render_uid(uint32_t pass, uint64_t frame) {
  return "r:0:pass" + std::to_string(pass) + ":f" + std::to_string(frame);
}

class VulkanFragmentTest : public VulkanTest {
 protected:
  void make(FragmentWorkloadDesc size) {
    auto w = VulkanFragmentWorkload::create(*ctx_, size);
    ASSERT_TRUE(w) << w.error().message;
    work_ = std::move(w.value());
    auto p = create_vulkan_query_pool(*ctx_,
                                      QueryPoolDesc{.max_queries = 64, .kind = QueryKind::render});
    ASSERT_TRUE(p) << p.error().message;
    pool_ = std::move(p.value());
  }
  void TearDown() override {
    pool_.reset();
    work_.reset();
    VulkanTest::TearDown();
  }
  std::unique_ptr<VulkanFragmentWorkload> work_;
  std::unique_ptr<TimestampQueryPool> pool_;
};

TEST_F(VulkanFragmentTest, FourPassesAreEachTimed) {
  ASSERT_NO_FATAL_FAILURE(make({64, 64}));
  const auto frames = run_frames(*ctx_, *work_, *pool_, 5, [](uint64_t f) {
    std::vector<WorkloadPass> p;
    for (uint32_t i = 0; i < 4; ++i) p.push_back({render_uid(i, f), 16});
    return p;
  });
  ASSERT_EQ(frames.size(), 5u);
  for (const auto& f : frames) {
    ASSERT_EQ(f.passes.size(), 4u);
    for (uint32_t i = 0; i < 4; ++i) {
      const auto& r = f.passes[i].result;
      ASSERT_TRUE(r.ok()) << f.passes[i].uid << " " << to_string(r.status);
      EXPECT_GT(r.duration_ns, 0);
      EXPECT_EQ(r.frame_id, f.frame_id);
      if (i > 0) {
        EXPECT_LE(f.passes[i - 1].result.end_ticks, r.begin_ticks) << "passes overlap";
      }
    }
  }
  EXPECT_EQ(pool_->late_result_count(), 0u);
}

// One Mesa worker thread: see one_mesa_worker.hpp.
class VulkanFragmentTestOneThread : public VulkanFragmentTest {
 protected:
  void SetUp() override {
    test::use_one_mesa_worker();
    VulkanFragmentTest::SetUp();
  }
};

// lavapipe rasterises on the CPU's threads, so other work on the machine
// moves each pass's time: the fastest of nine frames each is compared (medians
// of six once gave 1.90 in CI, where this machine measures 2.4-3.1).
TEST_F(VulkanFragmentTestOneThread, PerPixelCostGrowsWithComplexity) {
  ASSERT_NO_FATAL_FAILURE(make({128, 128}));
  const auto frames = run_frames(*ctx_, *work_, *pool_, 9, [](uint64_t f) {
    return std::vector<WorkloadPass>{{render_uid(0, f), 64}, {render_uid(1, f), 256}};
  });
  ASSERT_EQ(frames.size(), 9u);
  for (const auto& f : frames) ASSERT_TRUE(f.passes[0].result.ok() && f.passes[1].result.ok());
  const double s = static_cast<double>(fastest_ns(frames, 0));
  const double l = static_cast<double>(fastest_ns(frames, 1));
  std::printf("fragment 128x128: complexity 64 %.3f ms, 256 %.3f ms, ratio %.2f\n", s / 1e6,
              l / 1e6, l / s);
  EXPECT_GT(l / s, 2.0);
}

TEST_F(VulkanFragmentTest, TimestampsOutsideRenderPassesWithCommandBufferResets) {
  VulkanContextDesc desc;
  desc.host_query_reset = false;
  ASSERT_NO_FATAL_FAILURE(open(desc));
  ASSERT_NO_FATAL_FAILURE(make({32, 32}));
  const auto frames = run_frames(*ctx_, *work_, *pool_, 6, [](uint64_t f) {
    std::vector<WorkloadPass> p;
    for (uint32_t i = 0; i < 4; ++i) p.push_back({render_uid(i, f), 4});
    return p;
  });
  for (const auto& f : frames) {
    for (const auto& p : f.passes)
      EXPECT_TRUE(p.result.ok()) << p.uid << " " << to_string(p.result.status);
  }
}

TEST_F(VulkanFragmentTest, RejectsSizesBeyondTheDevice) {
  EXPECT_FALSE(VulkanFragmentWorkload::create(*ctx_, {0, 8}));
  auto huge = VulkanFragmentWorkload::create(*ctx_, {1u << 20, 8});
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().message.find("framebuffer limit"), std::string::npos)
      << huge.error().message;
}

TEST_F(VulkanFragmentTest, ComputePoolRefusesRenderUids) {
  ASSERT_NO_FATAL_FAILURE(make({16, 16}));
  auto compute_pool =
      create_vulkan_query_pool(*ctx_, QueryPoolDesc{.max_queries = 8, .kind = QueryKind::compute});
  ASSERT_TRUE(compute_pool);
  const auto frames = run_frames(*ctx_, *work_, **compute_pool, 1, [](uint64_t f) {
    return std::vector<WorkloadPass>{{render_uid(0, f), 1}};
  });
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_FALSE(frames[0].passes[0].got_offset);
}

TEST(VulkanFragmentLatency, FragmentFramesAreTimedAndBracketedByHostReads) {
  VulkanContextDesc desc;
  desc.validation = true;
  desc.device = test_device();
  auto dev_r = VulkanLatencyDevice::create(desc);
  ASSERT_TRUE(dev_r) << dev_r.error().message;
  auto& dev = *dev_r.value();
  const FrameWorkload work{
      .passes = 4, .complexity = 32, .form = WorkloadForm::fragment};  // default 64x64
  for (uint64_t frame = 1; frame <= 4; ++frame) {
    const int64_t before = host_now_ns();
    ASSERT_TRUE(dev.submit_frame(frame, work));
    auto t = dev.wait_frame(frame);
    const int64_t after = host_now_ns();
    ASSERT_TRUE(t) << t.error().message;
    ASSERT_EQ(t->gpu_status, QueryStatus::ok) << to_string(t->gpu_status);
    EXPECT_LT(t->gpu_begin_ticks, t->gpu_end_ticks);
    auto pair = dev.sample_calibration();
    ASSERT_TRUE(pair);
    const auto& ticks = dev.info().ticks;
    const auto to_host = [&](uint64_t x) {
      return x >= pair->device_ticks ? pair->host_ns + ticks.ticks_to_ns(x - pair->device_ticks)
                                     : pair->host_ns - ticks.ticks_to_ns(pair->device_ticks - x);
    };
    EXPECT_GE(to_host(t->gpu_begin_ticks), before - pair->max_deviation_ns);
    EXPECT_LE(to_host(t->gpu_end_ticks), after + pair->max_deviation_ns);
    EXPECT_LE(to_host(t->gpu_end_ticks), t->fence_wake_ns + pair->max_deviation_ns);
  }
  // Compute and fragment frames interleave on one device.
  const FrameWorkload compute{.passes = 2, .complexity = 8};
  ASSERT_TRUE(dev.submit_frame(5, compute));
  ASSERT_TRUE(dev.submit_frame(6, work));
  auto a = dev.wait_frame(5);
  auto b = dev.wait_frame(6);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->gpu_status, QueryStatus::ok);
  EXPECT_EQ(b->gpu_status, QueryStatus::ok);
  EXPECT_LE(a->gpu_end_ticks, b->gpu_begin_ticks);
  std::string all;
  for (const auto& m : dev.context().validation_messages()) all += m + "\n";
  EXPECT_EQ(dev.context().validation_error_count(), 0u) << all;
}

}  // namespace
}  // namespace latlab::test
