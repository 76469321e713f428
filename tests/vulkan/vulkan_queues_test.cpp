// Several queues of one Vulkan device (VulkanContextDesc::all_timing_queues):
// which families are opened or listed with a reason, slots and frame rings
// on each opened family, a profiler per queue, a semaphore between two
// submissions. lavapipe has one family: what needs a second one skips.
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/profiler.hpp"
#include "latlab/profiler_queues.hpp"
#include "latlab/profiler_vulkan.hpp"
#include "latlab/vulkan.hpp"
#include "vulkan/vulkan_fixture.hpp"

namespace latlab::test {
namespace {

constexpr uint32_t kNoFamily = 999;

VulkanContextDesc all_queues() {
  VulkanContextDesc d;
  d.all_timing_queues = true;
  return d;
}

bool listed_unopened(const VulkanContext& ctx, uint32_t family, std::string* reason) {
  const std::string prefix = "queue family " + std::to_string(family) + " (";
  for (const auto& m : ctx.unopened_queue_families()) {
    if (m.name.rfind(prefix, 0) == 0) {
      *reason = m.reason;
      return true;
    }
  }
  return false;
}

TEST_F(VulkanTest, DefaultContextOpensOneQueueAndSaysWhyNotTheOthers) {
  ASSERT_EQ(ctx_->queues().size(), 1u);
  const VulkanQueueInfo& q = ctx_->queues()[0];
  EXPECT_TRUE(q.primary);
  EXPECT_EQ(q.family, ctx_->queue_family());
  EXPECT_EQ(q.queue, ctx_->queue());
  EXPECT_EQ(q.ticks.valid_bits, ctx_->tick_format().valid_bits);
  EXPECT_EQ(ctx_->find_queue(q.family), &q);
  EXPECT_EQ(ctx_->find_queue(kNoFamily), nullptr);
  for (const auto& f : ctx_->report().queue_families) {
    if (f.index == q.family) continue;
    std::string reason;
    EXPECT_TRUE(listed_unopened(*ctx_, f.index, &reason)) << "family " << f.index;
    EXPECT_FALSE(reason.empty());
  }
}

TEST_F(VulkanTest, AllTimingQueuesOpensEveryFamilyThatCanTime) {
  open(all_queues());
  ASSERT_FALSE(ctx_->queues().empty());
  EXPECT_TRUE(ctx_->queues()[0].primary);
  EXPECT_EQ(ctx_->queues()[0].family, ctx_->queue_family());
  for (const auto& f : ctx_->report().queue_families) {
    const VulkanQueueInfo* q = ctx_->find_queue(f.index);
    std::string reason;
    if (f.timestamp_valid_bits > 0) {
      ASSERT_NE(q, nullptr) << "family " << f.index << " can time but was not opened";
      EXPECT_EQ(q->ticks.valid_bits, f.timestamp_valid_bits);
      EXPECT_EQ(q->flags, f.flags);
      EXPECT_NE(q->queue, VK_NULL_HANDLE);
      EXPECT_FALSE(listed_unopened(*ctx_, f.index, &reason));
    } else if (f.index != ctx_->queue_family()) {
      EXPECT_EQ(q, nullptr);
      ASSERT_TRUE(listed_unopened(*ctx_, f.index, &reason)) << "family " << f.index;
      EXPECT_NE(reason.find("timestampValidBits = 0"), std::string::npos) << reason;
    }
  }
}

TEST_F(VulkanTest, SlotsAndRingsRefuseAFamilyWithoutAnOpenedQueue) {
  auto slots = VulkanTimestampSlots::create(*ctx_, {.count = 8, .queue_family = kNoFamily});
  ASSERT_FALSE(slots);
  EXPECT_NE(slots.error().message.find("no queue of family 999"), std::string::npos)
      << slots.error().message;
  auto ring = VulkanFrameRing::create(*ctx_, 2, kNoFamily);
  ASSERT_FALSE(ring);
  EXPECT_NE(ring.error().message.find("no queue of family 999"), std::string::npos)
      << ring.error().message;
}

// A profiler on every opened queue: a command buffer zone on each, with the
// queue's valid bits.
TEST_F(VulkanTest, AProfilerOnEveryQueueTimesItsCommandBuffer) {
  open(all_queues());
  for (const auto& q : ctx_->queues()) {
    SCOPED_TRACE("family " + std::to_string(q.family) + " (" + q.flags_text + ")");
    const GpuProfilerDesc pdesc{.name = "q", .max_zones_per_frame = 4, .frames_in_flight = 1};
    auto slots = VulkanTimestampSlots::create(*ctx_, {.count = GpuProfiler::slots_needed(pdesc),
                                                      .require_host_reset = true,
                                                      .queue_family = q.family});
    ASSERT_TRUE(slots) << slots.error().message;
    EXPECT_EQ(slots.value()->tick_format().valid_bits, q.ticks.valid_bits);
    auto prof = VulkanGpuProfiler::create(slots.value(), pdesc);
    ASSERT_TRUE(prof) << prof.error().message;
    auto ring = VulkanFrameRing::create(*ctx_, 1, q.family);
    ASSERT_TRUE(ring) << ring.error().message;
    EXPECT_EQ(ring.value()->queue_family(), q.family);
    auto cmd = ring.value()->begin(0);
    ASSERT_TRUE(cmd) << cmd.error().message;
    { LATLAB_GPU_COMMAND_BUFFER(prof.value(), cmd.value(), "only"); }
    ASSERT_TRUE(ring.value()->submit(0));
    ASSERT_TRUE(ring.value()->wait_all());
    prof.value()->next_frame();
    prof.value()->collect();
    const auto f = prof.value()->frame(0);
    ASSERT_TRUE(f.has_value());
    ASSERT_EQ(f->zones.size(), 1u);
    EXPECT_STREQ(f->zones[0].name, "cmdbuf only");
    EXPECT_TRUE(f->zones[0].ok());
  }
}

// Two submissions ordered by a semaphore: the second one's timestamps come
// after the first one's. On a second family that can time when the device
// has one, else both on the context's queue.
TEST_F(VulkanTest, ASemaphoreOrdersTwoSubmissions) {
  open(all_queues());
  const uint32_t first_family = ctx_->queue_family();
  const uint32_t second_family =
      ctx_->queues().size() > 1 ? ctx_->queues()[1].family : first_family;
  auto slots_a = VulkanTimestampSlots::create(*ctx_, {.count = 2, .require_host_reset = true});
  auto slots_b = VulkanTimestampSlots::create(
      *ctx_, {.count = 2, .require_host_reset = true, .queue_family = second_family});
  ASSERT_TRUE(slots_a && slots_b);
  auto ring_a = VulkanFrameRing::create(*ctx_, 1, first_family);
  auto ring_b = VulkanFrameRing::create(*ctx_, 1, second_family);
  ASSERT_TRUE(ring_a && ring_b);
  VkSemaphoreCreateInfo sci{};
  sci.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  VkSemaphore sem = VK_NULL_HANDLE;
  ASSERT_EQ(vkCreateSemaphore(ctx_->device(), &sci, nullptr, &sem), VK_SUCCESS);
  auto a = ring_a.value()->begin(0);
  auto b = ring_b.value()->begin(0);
  ASSERT_TRUE(a && b);
  slots_a.value()->write(a.value(), 0, TimestampEdge::begin);
  slots_a.value()->write(a.value(), 1, TimestampEdge::end);
  slots_b.value()->write(b.value(), 0, TimestampEdge::begin);
  slots_b.value()->write(b.value(), 1, TimestampEdge::end);
  const std::array<VkPipelineStageFlags, 1> stages{VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT};
  // A binary semaphore's signal is submitted before its wait (Vulkan's rule);
  // b may start only once a has finished.
  ASSERT_TRUE(ring_a.value()->submit(0, {.signal = {&sem, 1}}));
  ASSERT_TRUE(ring_b.value()->submit(0, {.wait = {&sem, 1}, .wait_stages = stages}));
  ASSERT_TRUE(ring_a.value()->wait_all());
  ASSERT_TRUE(ring_b.value()->wait_all());
  vkDestroySemaphore(ctx_->device(), sem, nullptr);
  std::array<SlotReading, 2> ra{}, rb{};
  slots_a.value()->read(0, ra);
  slots_b.value()->read(0, rb);
  ASSERT_TRUE(ra[1].available && rb[0].available);
  // Compare in the narrower width (the counters are the device's one clock).
  const TickFormat& narrow =
      slots_a.value()->tick_format().valid_bits < slots_b.value()->tick_format().valid_bits
          ? slots_a.value()->tick_format()
          : slots_b.value()->tick_format();
  EXPECT_GE(narrow.signed_delta(ra[1].ticks & narrow.mask(), rb[0].ticks & narrow.mask()), 0)
      << "b began at " << rb[0].ticks << ", before a ended at " << ra[1].ticks;
}

TEST_F(VulkanTest, EveryFamilyTimesItsSubmissionWhileTheOthersRun) {
  open(all_queues());
  if (ctx_->queues().size() < 2) {
    GTEST_SKIP() << ctx_->device_name() << " has one queue family that can time; this needs two";
  }
  // Every queue gets a command buffer of two timestamps, all submitted before
  // any is waited for; each must be timed ok on its own slots (with its own
  // valid bits). Whether they overlap is the device's scheduling: not required.
  std::vector<std::shared_ptr<VulkanTimestampSlots>> slots;
  std::vector<std::unique_ptr<VulkanFrameRing>> rings;
  for (const auto& q : ctx_->queues()) {
    auto s = VulkanTimestampSlots::create(
        *ctx_, {.count = 2, .require_host_reset = true, .queue_family = q.family});
    ASSERT_TRUE(s) << s.error().message;
    auto r = VulkanFrameRing::create(*ctx_, 1, q.family);
    ASSERT_TRUE(r) << r.error().message;
    auto cmd = r.value()->begin(0);
    ASSERT_TRUE(cmd);
    s.value()->write(cmd.value(), 0, TimestampEdge::begin);
    s.value()->write(cmd.value(), 1, TimestampEdge::end);
    ASSERT_TRUE(r.value()->submit(0));
    slots.push_back(s.value());
    rings.push_back(std::move(r.value()));
  }
  for (size_t i = 0; i < rings.size(); ++i) {
    ASSERT_TRUE(rings[i]->wait_all());
    std::array<SlotReading, 2> out{};
    slots[i]->read(0, out);
    EXPECT_EQ(completed_pair_status(out[0], out[1], slots[i]->tick_format()), QueryStatus::ok)
        << "family " << ctx_->queues()[i].family;
  }
}

}  // namespace
}  // namespace latlab::test
