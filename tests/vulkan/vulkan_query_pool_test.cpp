// The timestamp query pool on VulkanTimestampSlots with real compute dispatches (lavapipe on CI),
// validation layer on.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

// Vulkan-specific pool behaviour on lavapipe (the contract itself: tests/conformance,
// run by timestamp_contract_vulkan_test.cpp), validation layer on.
#include "latlab/bench/vulkan_rig.hpp"
#include "latlab/host_clock.hpp"
#include "one_mesa_worker.hpp"
#include "vulkan/vulkan_fixture.hpp"

namespace latlab::test {
namespace {

class VulkanPoolTest : public VulkanTest {
 protected:
  void make(uint32_t max_queries = 256, ComputeWorkloadDesc size = {256, 256}) {
    auto w = VulkanComputeWorkload::create(*ctx_, size);
    ASSERT_TRUE(w) << w.error().message;
    work_ = std::move(w.value());
    auto slots = VulkanTimestampSlots::create(*ctx_, {.count = max_queries});
    ASSERT_TRUE(slots) << slots.error().message;
    slots_ = slots.value();
    auto p = TimestampQueryPool::create(
        slots_, QueryPoolDesc{.max_queries = max_queries, .kind = QueryKind::compute});
    ASSERT_TRUE(p) << p.error().message;
    pool_ = std::move(p.value());
  }
  void TearDown() override {
    pool_.reset();
    slots_.reset();
    work_.reset();
    VulkanTest::TearDown();
  }
  std::unique_ptr<VulkanComputeWorkload> work_;
  std::shared_ptr<VulkanTimestampSlots> slots_;
  std::unique_ptr<TimestampQueryPool> pool_;
};

// Documents the driver behaviour the contract suite's reads-never-wait skip
// relies on: lavapipe's vkGetQueryPoolResults waits for unrelated work in flight.
TEST_F(VulkanPoolTest, LavapipeReadsWaitForIdleIsDetected) {
  if (ctx_->device_name().find("llvmpipe") == std::string::npos) GTEST_SKIP() << "not lavapipe";
  EXPECT_TRUE(ctx_->capabilities().query_reads_wait_idle);
  ASSERT_NO_FATAL_FAILURE(make(8, {256, 256}));
  auto ring = VulkanFrameRing::create(*ctx_, 1);
  ASSERT_TRUE(ring) << ring.error().message;
  auto cmd = (*ring)->begin(0);
  ASSERT_TRUE(cmd);
  const std::vector<ComputePass> timed{{pass_uid(0, 1), 1}};
  ASSERT_TRUE(work_->record(*cmd, timed, 1, pool_.get())[0]);
  ASSERT_TRUE((*ring)->submit(0));
  ASSERT_TRUE((*ring)->wait(0));
  // Unrelated, untimed work in flight; then read the completed frame 1.
  cmd = (*ring)->begin(0);
  ASSERT_TRUE(cmd);
  for (uint32_t i = 0; i < 4; ++i) work_->record_pass(*cmd, 256, i);
  ASSERT_TRUE((*ring)->submit(0));
  (void)pool_->resolve_queries_async();
  EXPECT_TRUE(pool_->timestamp(pass_uid(0, 1)).ok());
  // The read returned only once the device was idle: the fence is signalled.
  EXPECT_EQ(vkGetFenceStatus(ctx_->device(), (*ring)->fence(0)), VK_SUCCESS);
  ASSERT_TRUE((*ring)->wait(0));
}

}  // namespace
}  // namespace latlab::test
