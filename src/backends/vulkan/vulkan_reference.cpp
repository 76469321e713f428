// The Vulkan reference path: one prerecorded command buffer with two timestamps.
#include "backends/vulkan/vulkan_reference.hpp"

#include "backends/vulkan/vk_unique.hpp"
#include "backends/vulkan/vk_util.hpp"
#include "latlab/bench/vulkan_rig.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/core/latency_device.hpp"

namespace latlab {

namespace {

class VulkanReferencePath final : public ReferencePath {
 public:
  explicit VulkanReferencePath(const VulkanContext& ctx) : ctx_(ctx) {}
  ~VulkanReferencePath() override {
    // The fence, then the pool (members' reverse order), once idle.
    const VkFence fence = fence_.get();
    if (busy_) (void)vkWaitForFences(ctx_.device(), 1, &fence, VK_TRUE, UINT64_MAX);
  }

  Result<void> init() {
    auto slots = VulkanTimestampSlots::create(ctx_, {.count = 2});
    if (!slots) return slots.error();
    slots_ = std::move(slots.value());
    if (!slots_->can_time()) return make_error("the queue cannot write timestamps");
    const VkDevice dev = ctx_.device();
    VkCommandPoolCreateInfo pci{};
    pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pci.queueFamilyIndex = ctx_.queue_family();
    auto pool =
        vk::make(vkCreateCommandPool, dev, pci, vkDestroyCommandPool, "vkCreateCommandPool");
    if (!pool) return pool.error();
    pool_ = std::move(*pool);
    VkCommandBufferAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ai.commandPool = pool_.get();
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    if (const VkResult r = vkAllocateCommandBuffers(dev, &ai, &cmd_); r != VK_SUCCESS)
      return vk::error("vkAllocateCommandBuffers", r);
    VkFenceCreateInfo fci{};
    fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    auto fence = vk::make(vkCreateFence, dev, fci, vkDestroyFence, "vkCreateFence");
    if (!fence) return fence.error();
    fence_ = std::move(*fence);
    // Recorded once, resubmitted every frame (no ONE_TIME_SUBMIT).
    VkCommandBufferBeginInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    if (const VkResult r = vkBeginCommandBuffer(cmd_, &bi); r != VK_SUCCESS)
      return vk::error("vkBeginCommandBuffer", r);
    // Without host reset the reset runs on the queue, inside this buffer,
    // before the writes (the slots object is then never asked to reset).
    if (!slots_->uses_host_reset()) vkCmdResetQueryPool(cmd_, slots_->handle(), 0, 2);
    slots_->write(cmd_, 0, TimestampEdge::begin);
    slots_->write(cmd_, 1, TimestampEdge::end);
    if (const VkResult r = vkEndCommandBuffer(cmd_); r != VK_SUCCESS)
      return vk::error("vkEndCommandBuffer", r);
    return {};
  }

  const char* what() const override {
    return "vulkan: one command buffer recorded once (two timestamps, nothing between), its "
           "own query pool and fence, one vkQueueSubmit per frame, vkWaitForFences";
  }

  Result<void> submit(uint64_t frame_id) override {
    if (busy_) return make_error("Vulkan reference: a frame is still in flight; wait first");
    if (slots_->uses_host_reset()) slots_->reset(0, 2, /*previous_use_done=*/true);
    const VkFence fence = fence_.get();
    if (const VkResult r = vkResetFences(ctx_.device(), 1, &fence); r != VK_SUCCESS)
      return vk::error("vkResetFences", r);
    if (auto s = ctx_.submit(cmd_, fence); !s) return s.error();
    busy_ = true;
    frame_id_ = frame_id;
    return {};
  }

  std::optional<PollTarget> poll_target(uint64_t frame_id) override {
    if (!busy_ || frame_id_ != frame_id) return std::nullopt;
    return PollTarget{reinterpret_cast<uint64_t>(fence_.get()), 0};
  }
  Result<GpuFrameTiming> wait(uint64_t frame_id) override {
    if (!busy_ || frame_id != frame_id_) {
      return make_error("Vulkan reference: frame " + std::to_string(frame_id) +
                        " is not in flight");
    }
    const VkFence fence = fence_.get();
    const VkResult r =
        vkWaitForFences(ctx_.device(), 1, &fence, VK_TRUE, VulkanLatencyDevice::kFrameTimeoutNs);
    const int64_t wake_ns = host_now_ns();  // first thing after the wait returns
    if (r == VK_TIMEOUT) return make_error("the GPU did not finish the reference frame in time");
    if (r != VK_SUCCESS) return vk::error("vkWaitForFences", r);
    busy_ = false;
    GpuFrameTiming t;
    t.fence_status = QueryStatus::ok;
    t.fence_wake_ns = wake_ns;
    SlotReading pair[2];
    slots_->read(0, pair);
    const TickFormat ticks = slots_->tick_format();
    t.gpu_status = completed_pair_status(pair[0], pair[1], ticks);
    if (t.gpu_status == QueryStatus::ok) {
      t.gpu_begin_ticks = pair[0].ticks & ticks.mask();
      t.gpu_end_ticks = pair[1].ticks & ticks.mask();
    }
    return t;
  }

 private:
  const VulkanContext& ctx_;
  std::shared_ptr<VulkanTimestampSlots> slots_;
  vk::UniqueCommandPool pool_;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;  // freed with pool_
  vk::UniqueFence fence_;
  bool busy_ = false;
  uint64_t frame_id_ = 0;
};

}  // namespace

Result<std::unique_ptr<ReferencePath>> create_vulkan_reference_path(const VulkanContext& ctx) {
  auto ref = std::make_unique<VulkanReferencePath>(ctx);
  if (auto ok = ref->init(); !ok) return ok.error();
  return std::unique_ptr<ReferencePath>(std::move(ref));
}

}  // namespace latlab
