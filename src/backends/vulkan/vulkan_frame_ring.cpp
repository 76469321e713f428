// VulkanFrameRing: per-frame command buffers and fences for frames in flight.
#include "backends/vulkan/vk_unique.hpp"
#include "backends/vulkan/vk_util.hpp"
#include "latlab/vulkan.hpp"

namespace latlab {

namespace vk {
// Declared in this order: the fences go before the pool.
struct FrameRingObjects {
  UniqueCommandPool pool;           // frees the slots' command buffers
  std::vector<UniqueFence> fences;  // one per slot
};
}  // namespace vk

Result<std::unique_ptr<VulkanFrameRing>> VulkanFrameRing::create(
    const VulkanContext& ctx, uint32_t slots, std::optional<uint32_t> queue_family) {
  if (slots == 0) return make_error("VulkanFrameRing needs at least one slot");
  const uint32_t family = queue_family.value_or(ctx.queue_family());
  if (ctx.find_queue(family) == nullptr) {
    return make_error("VulkanFrameRing: the context opened no queue of family " +
                      std::to_string(family) +
                      " (VulkanContextDesc::all_timing_queues opens one per family that can time)");
  }
  std::unique_ptr<VulkanFrameRing> ring(new VulkanFrameRing(ctx));
  ring->family_ = family;
  ring->o_ = std::make_unique<vk::FrameRingObjects>();
  const VkDevice dev = ctx.device();
  VkCommandPoolCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = family;
  auto pool = vk::make(vkCreateCommandPool, dev, pci, vkDestroyCommandPool, "vkCreateCommandPool");
  if (!pool) return pool.error();
  ring->o_->pool = std::move(*pool);
  std::vector<VkCommandBuffer> cmds(slots);
  VkCommandBufferAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ai.commandPool = ring->o_->pool.get();
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = slots;
  if (const VkResult r = vkAllocateCommandBuffers(dev, &ai, cmds.data()); r != VK_SUCCESS) {
    return vk::error("vkAllocateCommandBuffers", r);
  }
  ring->slots_.resize(slots);
  for (uint32_t i = 0; i < slots; ++i) ring->slots_[i].cmd = cmds[i];
  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  for (uint32_t i = 0; i < slots; ++i) {
    auto fence = vk::make(vkCreateFence, dev, fci, vkDestroyFence, "vkCreateFence");
    if (!fence) return fence.error();
    ring->o_->fences.push_back(std::move(*fence));
  }
  return ring;
}

VulkanFrameRing::VulkanFrameRing(const VulkanContext& ctx) : ctx_(ctx) {}

// The fences, then the pool (which frees the command buffers), once no slot
// is in flight.
VulkanFrameRing::~VulkanFrameRing() { (void)wait_all(); }

VkFence VulkanFrameRing::fence(uint32_t slot) const { return o_->fences[slot].get(); }

Result<VkCommandBuffer> VulkanFrameRing::begin(uint32_t slot, bool reusable) {
  Slot& s = slots_.at(slot);
  if (s.in_flight)
    return make_error("frame ring slot " + std::to_string(slot) +
                      " is still in flight; wait() first");
  if (const VkResult r = vkResetCommandBuffer(s.cmd, 0); r != VK_SUCCESS)
    return vk::error("vkResetCommandBuffer", r);
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  bi.flags = reusable ? 0 : VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  if (const VkResult r = vkBeginCommandBuffer(s.cmd, &bi); r != VK_SUCCESS)
    return vk::error("vkBeginCommandBuffer", r);
  return s.cmd;
}

Result<void> VulkanFrameRing::submit(uint32_t slot, const VulkanSubmitSync& sync) {
  if (auto e = end(slot); !e) return e;
  return submit_slot(slot, sync);
}

Result<void> VulkanFrameRing::end(uint32_t slot) {
  Slot& s = slots_.at(slot);
  if (s.in_flight)
    return make_error("frame ring slot " + std::to_string(slot) + " is already in flight");
  if (const VkResult r = vkEndCommandBuffer(s.cmd); r != VK_SUCCESS)
    return vk::error("vkEndCommandBuffer", r);
  return {};
}

Result<void> VulkanFrameRing::submit_recorded(uint32_t slot) { return submit_slot(slot, {}); }

Result<void> VulkanFrameRing::submit_slot(uint32_t slot, const VulkanSubmitSync& sync) {
  Slot& s = slots_.at(slot);
  if (s.in_flight)
    return make_error("frame ring slot " + std::to_string(slot) + " is already in flight");
  const VkFence fence = o_->fences[slot].get();
  if (const VkResult r = vkResetFences(ctx_.device(), 1, &fence); r != VK_SUCCESS)
    return vk::error("vkResetFences", r);
  if (auto r = ctx_.submit(family_, s.cmd, fence, sync); !r) return r.error();
  s.in_flight = true;
  return {};
}

Result<bool> VulkanFrameRing::wait(uint32_t slot, uint64_t timeout_ns) {
  Slot& s = slots_.at(slot);
  if (!s.in_flight) return true;
  const VkFence fence = o_->fences[slot].get();
  const VkResult r = vkWaitForFences(ctx_.device(), 1, &fence, VK_TRUE, timeout_ns);
  if (r == VK_TIMEOUT) return false;
  if (r != VK_SUCCESS) return vk::error("vkWaitForFences", r);
  s.in_flight = false;
  return true;
}

Result<void> VulkanFrameRing::wait_all(uint64_t timeout_ns) {
  for (uint32_t i = 0; i < slots_.size(); ++i) {
    auto r = wait(i, timeout_ns);
    if (!r) return r.error();
    if (!*r) return make_error("timed out waiting for frame ring slot " + std::to_string(i));
  }
  return {};
}

}  // namespace latlab
