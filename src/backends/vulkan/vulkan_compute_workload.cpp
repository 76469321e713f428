// VulkanComputeWorkload: the reference compute work (shaders/burn.comp).
#include "backends/vulkan/vk_pipeline_parts.hpp"
#include "backends/vulkan/vk_unique.hpp"
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

namespace vk {

// The workload's objects. Destroyed in reverse order: the pipeline before
// its module and layout, the pool (and its set) before the set layout, the
// buffer before its memory.
struct ComputeObjects {
  UniqueMemory memory;
  UniqueBuffer buffer;
  UniqueSetLayout set_layout;
  UniqueDescriptorPool descriptor_pool;
  VkDescriptorSet set = VK_NULL_HANDLE;  // freed with descriptor_pool
  UniquePipelineLayout layout;
  UniqueShaderModule module;
  UniquePipeline pipeline;
};

}  // namespace vk

namespace {

Result<void> check_size(const VulkanContext& ctx, const ComputeWorkloadDesc& desc) {
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
  return {};
}

// The storage buffer, bound to device memory and filled with known contents
// (the cost per element must not depend on garbage).
Result<void> make_buffer(const VulkanContext& ctx, const ComputeWorkloadDesc& desc,
                         vk::ComputeObjects& o) {
  const VkDevice dev = ctx.device();
  VkBufferCreateInfo bci{};
  bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bci.size = uint64_t{desc.width} * desc.height * 16;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
              VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  auto buffer = vk::make(vkCreateBuffer, dev, bci, vkDestroyBuffer, "vkCreateBuffer");
  if (!buffer) return buffer.error();
  o.buffer = std::move(*buffer);
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(dev, o.buffer.get(), &req);
  auto memory = vk::allocate_memory(ctx, req, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, true);
  if (!memory) return memory.error();
  o.memory = std::move(*memory);
  if (const VkResult r = vkBindBufferMemory(dev, o.buffer.get(), o.memory.get(), 0);
      r != VK_SUCCESS) {
    return vk::error("vkBindBufferMemory", r);
  }
  const VkBuffer target = o.buffer.get();
  return ctx.run_one_shot([target](VkCommandBuffer cmd) {
    vkCmdFillBuffer(cmd, target, 0, VK_WHOLE_SIZE, kFill);
    VkMemoryBarrier mb{};
    mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         0, 1, &mb, 0, nullptr, 0, nullptr);
  });
}

// One storage-buffer set pointing at the buffer.
Result<void> make_descriptors(VkDevice dev, vk::ComputeObjects& o) {
  if (auto sets = vk::create_single_binding_sets(dev, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                                 VK_SHADER_STAGE_COMPUTE_BIT, 1, o.set_layout,
                                                 o.descriptor_pool, &o.set);
      !sets) {
    return sets.error();
  }
  VkDescriptorBufferInfo dbi{o.buffer.get(), 0, VK_WHOLE_SIZE};
  VkWriteDescriptorSet write{};
  write.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
  write.dstSet = o.set;
  write.dstBinding = 0;
  write.descriptorCount = 1;
  write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  write.pBufferInfo = &dbi;
  vkUpdateDescriptorSets(dev, 1, &write, 0, nullptr);
  return {};
}

Result<void> make_pipeline(VkDevice dev, vk::ComputeObjects& o) {
  auto layout = vk::create_pipeline_layout(dev, o.set_layout.get(), VK_SHADER_STAGE_COMPUTE_BIT,
                                           sizeof(BurnPush));
  if (!layout) return layout.error();
  o.layout = std::move(*layout);
  auto module = vk::create_shader_module(dev, kBurnComp, sizeof(kBurnComp), "burn.comp");
  if (!module) return module.error();
  o.module = std::move(*module);
  VkComputePipelineCreateInfo cpci{};
  cpci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  cpci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpci.stage.module = o.module.get();
  cpci.stage.pName = "main";
  cpci.layout = o.layout.get();
  VkPipeline pipeline = VK_NULL_HANDLE;
  if (const VkResult r =
          vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpci, nullptr, &pipeline);
      r != VK_SUCCESS) {
    return vk::error("vkCreateComputePipelines", r);
  }
  o.pipeline = vk::UniquePipeline(dev, pipeline, vkDestroyPipeline);
  return {};
}

}  // namespace

Result<std::unique_ptr<VulkanComputeWorkload>> VulkanComputeWorkload::create(
    const VulkanContext& ctx, const ComputeWorkloadDesc& desc) {
  if (auto ok = check_size(ctx, desc); !ok) return ok.error();
  std::unique_ptr<VulkanComputeWorkload> w(new VulkanComputeWorkload(desc));
  w->o_ = std::make_unique<vk::ComputeObjects>();
  if (auto r = make_buffer(ctx, desc, *w->o_); !r) return r.error();
  if (auto r = make_descriptors(ctx.device(), *w->o_); !r) return r.error();
  if (auto r = make_pipeline(ctx.device(), *w->o_); !r) return r.error();
  // One untimed pass now: drivers that compile shaders at first dispatch
  // (llvmpipe JITs there) would otherwise charge it to the first timed pass.
  VulkanComputeWorkload* self = w.get();
  if (auto warm = ctx.run_one_shot([self](VkCommandBuffer cmd) { self->record_pass(cmd, 1, 0); });
      !warm) {
    return warm.error();
  }
  return w;
}

VulkanComputeWorkload::VulkanComputeWorkload(const ComputeWorkloadDesc& desc) : desc_(desc) {}

// The objects go in ComputeObjects' reverse order.
VulkanComputeWorkload::~VulkanComputeWorkload() = default;

VkBuffer VulkanComputeWorkload::buffer() const { return o_->buffer.get(); }

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
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, o_->pipeline.get());
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, o_->layout.get(), 0, 1, &o_->set, 0,
                          nullptr);
  const BurnPush push{desc_.width, desc_.height, complexity == 0 ? 1 : complexity, pass_index};
  vkCmdPushConstants(cmd, o_->layout.get(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push), &push);
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
