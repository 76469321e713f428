// Pieces both Vulkan workloads (compute and fragment) build their pipelines
// from (private to the backend). Each writes its handles only on success;
// the caller owns and destroys them.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>

#include "latlab/result.hpp"

namespace latlab::vk {

// A set layout with one descriptor at binding 0 of `type` for `stage`, a
// pool for `count` such sets, and the `count` sets allocated into `sets`.
// `layout` and `pool` are written as soon as each exists (so a later failure
// leaves them for the caller to destroy).
Result<void> create_single_binding_sets(VkDevice dev, VkDescriptorType type, VkShaderStageFlags stage,
                                        uint32_t count, VkDescriptorSetLayout& layout,
                                        VkDescriptorPool& pool, VkDescriptorSet* sets);

// A pipeline layout of one set layout and `push_bytes` of push constants
// for `stage`.
Result<VkPipelineLayout> create_pipeline_layout(VkDevice dev, VkDescriptorSetLayout set_layout,
                                                VkShaderStageFlags stage, uint32_t push_bytes);

// A shader module from embedded SPIR-V; `name` goes into the error.
Result<VkShaderModule> create_shader_module(VkDevice dev, const uint32_t* code, size_t bytes,
                                            const char* name);

}  // namespace latlab::vk
