#include "backends/vulkan/vk_pipeline_parts.hpp"

#include <string>
#include <vector>

#include "backends/vulkan/vk_util.hpp"

namespace latlab::vk {

Result<void> create_single_binding_sets(VkDevice dev, VkDescriptorType type, VkShaderStageFlags stage,
                                        uint32_t count, VkDescriptorSetLayout& layout,
                                        VkDescriptorPool& pool, VkDescriptorSet* sets) {
  VkDescriptorSetLayoutBinding binding{};
  binding.binding = 0;
  binding.descriptorType = type;
  binding.descriptorCount = 1;
  binding.stageFlags = stage;
  VkDescriptorSetLayoutCreateInfo dslci{};
  dslci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  dslci.bindingCount = 1;
  dslci.pBindings = &binding;
  VkDescriptorSetLayout new_layout = VK_NULL_HANDLE;
  if (const VkResult r = vkCreateDescriptorSetLayout(dev, &dslci, nullptr, &new_layout); r != VK_SUCCESS) {
    return error("vkCreateDescriptorSetLayout", r);
  }
  layout = new_layout;
  VkDescriptorPoolSize size{type, count};
  VkDescriptorPoolCreateInfo dpci{};
  dpci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  dpci.maxSets = count;
  dpci.poolSizeCount = 1;
  dpci.pPoolSizes = &size;
  VkDescriptorPool new_pool = VK_NULL_HANDLE;
  if (const VkResult r = vkCreateDescriptorPool(dev, &dpci, nullptr, &new_pool); r != VK_SUCCESS) {
    return error("vkCreateDescriptorPool", r);
  }
  pool = new_pool;
  const std::vector<VkDescriptorSetLayout> layouts(count, new_layout);  // every set alike
  VkDescriptorSetAllocateInfo dsai{};
  dsai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  dsai.descriptorPool = pool;
  dsai.descriptorSetCount = count;
  dsai.pSetLayouts = layouts.data();
  if (const VkResult r = vkAllocateDescriptorSets(dev, &dsai, sets); r != VK_SUCCESS) {
    return error("vkAllocateDescriptorSets", r);
  }
  return {};
}

Result<VkPipelineLayout> create_pipeline_layout(VkDevice dev, VkDescriptorSetLayout set_layout,
                                                VkShaderStageFlags stage, uint32_t push_bytes) {
  VkPushConstantRange push{stage, 0, push_bytes};
  VkPipelineLayoutCreateInfo plci{};
  plci.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  plci.setLayoutCount = 1;
  plci.pSetLayouts = &set_layout;
  plci.pushConstantRangeCount = 1;
  plci.pPushConstantRanges = &push;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  if (const VkResult r = vkCreatePipelineLayout(dev, &plci, nullptr, &layout); r != VK_SUCCESS) {
    return error("vkCreatePipelineLayout", r);
  }
  return layout;
}

Result<VkShaderModule> create_shader_module(VkDevice dev, const uint32_t* code, size_t bytes,
                                            const char* name) {
  VkShaderModuleCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  ci.codeSize = bytes;
  ci.pCode = code;
  VkShaderModule m = VK_NULL_HANDLE;
  if (const VkResult r = vkCreateShaderModule(dev, &ci, nullptr, &m); r != VK_SUCCESS) {
    return error(std::string("vkCreateShaderModule(") + name + ")", r);
  }
  return m;
}

}  // namespace latlab::vk
