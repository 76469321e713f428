// Pieces both Vulkan workloads (compute and fragment) build their pipelines
// from (private to the backend), on a latlab-made context's device (the
// loader's entry points). Each returns or fills owners (vk_unique.hpp).
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>

#include "backends/vulkan/vk_unique.hpp"
#include "latlab/result.hpp"

namespace latlab {
class VulkanContext;
}

namespace latlab::vk {

// A set layout with one descriptor at binding 0 of `type` for `stage`, a
// pool for `count` such sets, and the `count` sets allocated into `sets`
// (freed with the pool). `layout` and `pool` are filled as each is made.
Result<void> create_single_binding_sets(VkDevice dev, VkDescriptorType type,
                                        VkShaderStageFlags stage, uint32_t count,
                                        UniqueSetLayout& layout, UniqueDescriptorPool& pool,
                                        VkDescriptorSet* sets);

// A pipeline layout of one set layout and `push_bytes` of push constants
// for `stage`.
Result<UniquePipelineLayout> create_pipeline_layout(VkDevice dev, VkDescriptorSetLayout set_layout,
                                                    VkShaderStageFlags stage, uint32_t push_bytes);

// A shader module from embedded SPIR-V; `name` goes into the error.
Result<UniqueShaderModule> create_shader_module(VkDevice dev, const uint32_t* code, size_t bytes,
                                                const char* name);

// Memory for `req` of a type with `want` (with `fallback_any`, else of any
// type), bound to nothing yet.
Result<UniqueMemory> allocate_memory(const VulkanContext& ctx, const VkMemoryRequirements& req,
                                     VkMemoryPropertyFlags want, bool fallback_any);

}  // namespace latlab::vk
