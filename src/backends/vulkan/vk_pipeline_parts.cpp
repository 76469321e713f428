#include "backends/vulkan/vk_pipeline_parts.hpp"

#include <string>
#include <vector>

#include "backends/vulkan/vk_util.hpp"
#include "latlab/vulkan.hpp"

namespace latlab::vk {

Result<void> create_single_binding_sets(VkDevice dev, VkDescriptorType type,
                                        VkShaderStageFlags stage, uint32_t count,
                                        UniqueSetLayout& layout, UniqueDescriptorPool& pool,
                                        VkDescriptorSet* sets) {
  VkDescriptorSetLayoutBinding binding{};
  binding.binding = 0;
  binding.descriptorType = type;
  binding.descriptorCount = 1;
  binding.stageFlags = stage;
  VkDescriptorSetLayoutCreateInfo dslci{};
  dslci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  dslci.bindingCount = 1;
  dslci.pBindings = &binding;
  auto new_layout = make(vkCreateDescriptorSetLayout, dev, dslci, vkDestroyDescriptorSetLayout,
                         "vkCreateDescriptorSetLayout");
  if (!new_layout) return new_layout.error();
  layout = std::move(*new_layout);
  VkDescriptorPoolSize size{type, count};
  VkDescriptorPoolCreateInfo dpci{};
  dpci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  dpci.maxSets = count;
  dpci.poolSizeCount = 1;
  dpci.pPoolSizes = &size;
  auto new_pool =
      make(vkCreateDescriptorPool, dev, dpci, vkDestroyDescriptorPool, "vkCreateDescriptorPool");
  if (!new_pool) return new_pool.error();
  pool = std::move(*new_pool);
  const std::vector<VkDescriptorSetLayout> layouts(count, layout.get());  // every set alike
  VkDescriptorSetAllocateInfo dsai{};
  dsai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  dsai.descriptorPool = pool.get();
  dsai.descriptorSetCount = count;
  dsai.pSetLayouts = layouts.data();
  if (const VkResult r = vkAllocateDescriptorSets(dev, &dsai, sets); r != VK_SUCCESS) {
    return error("vkAllocateDescriptorSets", r);
  }
  return {};
}

Result<UniquePipelineLayout> create_pipeline_layout(VkDevice dev, VkDescriptorSetLayout set_layout,
                                                    VkShaderStageFlags stage, uint32_t push_bytes) {
  VkPushConstantRange push{stage, 0, push_bytes};
  VkPipelineLayoutCreateInfo plci{};
  plci.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  plci.setLayoutCount = 1;
  plci.pSetLayouts = &set_layout;
  plci.pushConstantRangeCount = 1;
  plci.pPushConstantRanges = &push;
  return make(vkCreatePipelineLayout, dev, plci, vkDestroyPipelineLayout, "vkCreatePipelineLayout");
}

Result<UniqueShaderModule> create_shader_module(VkDevice dev, const uint32_t* code, size_t bytes,
                                                const char* name) {
  VkShaderModuleCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  ci.codeSize = bytes;
  ci.pCode = code;
  return make(vkCreateShaderModule, dev, ci, vkDestroyShaderModule,
              std::string("vkCreateShaderModule(") + name + ")");
}

Result<UniqueMemory> allocate_memory(const VulkanContext& ctx, const VkMemoryRequirements& req,
                                     VkMemoryPropertyFlags want, bool fallback_any) {
  auto type = ctx.find_memory_type(req.memoryTypeBits, want);
  if (!type && fallback_any) type = ctx.find_memory_type(req.memoryTypeBits, 0);
  if (!type) return type.error();
  VkMemoryAllocateInfo mai{};
  mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = *type;
  return make(vkAllocateMemory, ctx.device(), mai, vkFreeMemory,
              "vkAllocateMemory(" + std::to_string(req.size) + " bytes)");
}

}  // namespace latlab::vk
