// The capture layer's device hooks: vkCreateDevice (what the layer adds,
// the start of a capture), vkDestroyDevice and the queues the program gets.
#pragma once

#include <vulkan/vulkan.h>

namespace latlab::capture::layer {

// The layer's wrappers of these Vulkan calls (capture_layer.cpp gives them out).
VKAPI_ATTR VkResult VKAPI_CALL layer_CreateDevice(VkPhysicalDevice physical,
                                                  const VkDeviceCreateInfo* info,
                                                  const VkAllocationCallbacks* alloc,
                                                  VkDevice* out);
VKAPI_ATTR void VKAPI_CALL layer_DestroyDevice(VkDevice device, const VkAllocationCallbacks* alloc);
VKAPI_ATTR void VKAPI_CALL layer_GetDeviceQueue(VkDevice device, uint32_t family, uint32_t index,
                                                VkQueue* queue);
VKAPI_ATTR void VKAPI_CALL layer_GetDeviceQueue2(VkDevice device, const VkDeviceQueueInfo2* info,
                                                 VkQueue* queue);

}  // namespace latlab::capture::layer
