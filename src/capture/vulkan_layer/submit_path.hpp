// The capture layer's submit hooks: each vkQueueSubmit/vkQueueSubmit2 call
// bracketed with the layer's timestamps (within the span budget) and queued
// for the collector.
#pragma once

#include <vulkan/vulkan.h>

namespace latlab::capture::layer {

// The layer's wrappers of these Vulkan calls (capture_layer.cpp gives them out).
VKAPI_ATTR VkResult VKAPI_CALL layer_QueueSubmit(VkQueue queue, uint32_t count,
                                                 const VkSubmitInfo* submits, VkFence fence);
VKAPI_ATTR VkResult VKAPI_CALL layer_QueueSubmit2(VkQueue queue, uint32_t count,
                                                  const VkSubmitInfo2* submits, VkFence fence);
VKAPI_ATTR VkResult VKAPI_CALL layer_QueueSubmit2KHR(VkQueue queue, uint32_t count,
                                                     const VkSubmitInfo2* submits, VkFence fence);

}  // namespace latlab::capture::layer
