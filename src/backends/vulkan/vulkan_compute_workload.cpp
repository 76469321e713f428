// VulkanComputeWorkload: the reference compute work (shaders/burn.comp).
#include "backends/vulkan/vk_pipeline_parts.hpp"
#include "backends/vulkan/vk_util.hpp"
#include "latlab/bench/vulkan_rig.hpp"
#include "latlab/vulkan.hpp"

namespace latlab {
namespace {

const uint32_t kBurnComp[] = {
#include "burn.comp.spv.inc"
};

struct BurnPush {
  uint32_t width;
  uint32_t height;
  uint32_t complexity;
  uint32_t pass;
};

constexpr uint32_t kGroup = 8;           // local_size_x/y of burn.comp
constexpr uint32_t kFill = 0x3f000000u;  // 0.5f in every component

}  // namespace

Result<std::unique_ptr<VulkanComputeWorkload>> VulkanComputeWorkload::create(
    const VulkanContext& ctx, const ComputeWorkloadDesc& desc) {
  if (desc.width == 0 || desc.height == 0)
    return make_error("compute workload size must be at least 1x1");
  const VkPhysicalDeviceLimits& limits = ctx.properties().limits;
  const uint64_t bytes = uint64_t{desc.width} * desc.height * 16;
  if (bytes > limits.maxStorageBufferRange) {
    return make_error("compute workload " + std::to_string(desc.width) + "x" +
                      std::to_string(desc.height) + " needs a " + std::to_string(bytes) +
                      " byte storage buffer; the device allows " +
                      std::to_string(limits.maxStorageBufferRange));
  }
  if ((desc.width + kGroup - 1) / kGroup > limits.maxComputeWorkGroupCount[0] ||
      (desc.height + kGroup - 1) / kGroup > limits.maxComputeWorkGroupCount[1]) {
    return make_error("compute workload size exceeds the device's dispatch limits");
  }
  std::unique_ptr<VulkanComputeWorkload> w(new VulkanComputeWorkload(ctx, desc));
  const VkDevice dev = ctx.device();

  // --- buffer --------------------------------------------------------------
  VkBufferCreateInfo bci{};
  bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bci.size = bytes;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
              VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  if (const VkResult r = vkCreateBuffer(dev, &bci, nullptr, &w->buffer_); r != VK_SUCCESS) {
    w->buffer_ = VK_NULL_HANDLE;
    return vk::error("vkCreateBuffer", r);
  }
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(dev, w->buffer_, &req);
  auto type = ctx.find_memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (!type) type = ctx.find_memory_type(req.memoryTypeBits, 0);
  if (!type) return type.error();
  VkMemoryAllocateInfo mai{};
  mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = *type;
  if (const VkResult r = vkAllocateMemory(dev, &mai, nullptr, &w->memory_); r != VK_SUCCESS) {
    w->memory_ = VK_NULL_HANDLE;
    return vk::error("vkAllocateMemory(" + std::to_string(req.size) + " bytes)", r);
  }
  if (const VkResult r = vkBindBufferMemory(dev, w->buffer_, w->memory_, 0); r != VK_SUCCESS) {
    return vk::error("vkBindBufferMemory", r);
  }
  // Known contents: the cost per element must not depend on garbage.
  const VkBuffer buffer = w->buffer_;
  auto filled = ctx.run_one_shot([buffer](VkCommandBuffer cmd) {
    vkCmdFillBuffer(cmd, buffer, 0, VK_WHOLE_SIZE, kFill);
    VkMemoryBarrier mb{};
    mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         0, 1, &mb, 0, nullptr, 0, nullptr);
  });
  if (!filled) return filled.error();

  // --- descriptors ---------------------------------------------------------
  if (auto sets = vk::create_single_binding_sets(dev, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                                 VK_SHADER_STAGE_COMPUTE_BIT, 1, w->set_layout_,
                                                 w->descriptor_pool_, &w->set_);
      !sets) {
    return sets.error();
  }
  VkDescriptorBufferInfo dbi{w->buffer_, 0, VK_WHOLE_SIZE};
  VkWriteDescriptorSet write{};
  write.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
  write.dstSet = w->set_;
  write.dstBinding = 0;
  write.descriptorCount = 1;
  write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  write.pBufferInfo = &dbi;
  vkUpdateDescriptorSets(dev, 1, &write, 0, nullptr);

  // --- pipeline ------------------------------------------------------------
  auto layout = vk::create_pipeline_layout(dev, w->set_layout_, VK_SHADER_STAGE_COMPUTE_BIT,
                                           sizeof(BurnPush));
  if (!layout) return layout.error();
  w->layout_ = *layout;
  auto module = vk::create_shader_module(dev, kBurnComp, sizeof(kBurnComp), "burn.comp");
  if (!module) return module.error();
  w->module_ = *module;
  VkComputePipelineCreateInfo cpci{};
  cpci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  cpci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpci.stage.module = w->module_;
  cpci.stage.pName = "main";
  cpci.layout = w->layout_;
  if (const VkResult r =
          vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpci, nullptr, &w->pipeline_);
      r != VK_SUCCESS) {
    w->pipeline_ = VK_NULL_HANDLE;
    return vk::error("vkCreateComputePipelines", r);
  }
  // One untimed pass now: drivers that compile shaders at first dispatch
  // (llvmpipe JITs there) would otherwise charge it to the first timed pass.
  VulkanComputeWorkload* self = w.get();
  if (auto warm = ctx.run_one_shot([self](VkCommandBuffer cmd) { self->record_pass(cmd, 1, 0); });
      !warm) {
    return warm.error();
  }
  return w;
}

VulkanComputeWorkload::~VulkanComputeWorkload() {
  const VkDevice dev = ctx_.device();
  if (pipeline_ != VK_NULL_HANDLE) vkDestroyPipeline(dev, pipeline_, nullptr);
  if (module_ != VK_NULL_HANDLE) vkDestroyShaderModule(dev, module_, nullptr);
  if (layout_ != VK_NULL_HANDLE) vkDestroyPipelineLayout(dev, layout_, nullptr);
  if (descriptor_pool_ != VK_NULL_HANDLE) vkDestroyDescriptorPool(dev, descriptor_pool_, nullptr);
  if (set_layout_ != VK_NULL_HANDLE) vkDestroyDescriptorSetLayout(dev, set_layout_, nullptr);
  if (buffer_ != VK_NULL_HANDLE) vkDestroyBuffer(dev, buffer_, nullptr);
  if (memory_ != VK_NULL_HANDLE) vkFreeMemory(dev, memory_, nullptr);
}

// Each pass reads what the previous one wrote; the first pass of a command
// buffer also orders after earlier submissions' passes on the queue.
void VulkanComputeWorkload::record_barrier(VkCommandBuffer cmd) {
  VkMemoryBarrier mb{};
  mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

void VulkanComputeWorkload::record_dispatch(VkCommandBuffer cmd, uint32_t complexity,
                                            uint32_t pass_index) {
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_);
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout_, 0, 1, &set_, 0, nullptr);
  const BurnPush push{desc_.width, desc_.height, complexity == 0 ? 1 : complexity, pass_index};
  vkCmdPushConstants(cmd, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push), &push);
  vkCmdDispatch(cmd, (desc_.width + kGroup - 1) / kGroup, (desc_.height + kGroup - 1) / kGroup, 1);
}

std::vector<std::optional<uint32_t>> VulkanComputeWorkload::record(
    VkCommandBuffer cmd, std::span<const ComputePass> passes, uint64_t frame_id,
    TimestampQueryPool* pool) {
  std::vector<std::optional<uint32_t>> offsets(passes.size());
  for (uint32_t i = 0; i < passes.size(); ++i) {
    const ComputePass& p = passes[i];
    if (pool != nullptr && !p.uid.empty())
      offsets[i] = pool->allocate_queries_for_context(p.uid, frame_id);
    // The barrier goes before the begin timestamp so the pass's span starts
    // after the previous pass (TOP_OF_PIPE is not held by the barrier's
    // compute stage on every driver; this is the best order available).
    record_barrier(cmd);
    if (offsets[i]) pool->write_begin(cmd, *offsets[i]);
    record_dispatch(cmd, p.complexity, i);
    if (offsets[i]) pool->write_end(cmd, *offsets[i]);
  }
  return offsets;
}

}  // namespace latlab
