// The capture layer's present hooks: frames closed at vkQueuePresentKHR,
// present ids and present_complete per swapchain, acquire waits.
#pragma once

#include <vulkan/vulkan.h>

#include <vector>

#include "capture/presentation_feedback.hpp"

namespace latlab::capture::layer {

struct DeviceData;
struct SwapchainState;

// No more present_complete from `st` (its swapchain is retired or about to
// be destroyed): the waiter is stopped (no vkWaitForPresentKHR runs once
// this returns) and what is outstanding is resolved as retired.
void retire_swapchain(DeviceData* d, SwapchainState& st);

// Routes the compositor's outcomes to the devices whose presents asked
// (each outcome's owner is a device's source).
void post_outcomes(DeviceData* d, const std::vector<DisplayOutcome>& got);

// The layer's wrappers of these Vulkan calls (capture_layer.cpp gives them out).
VKAPI_ATTR VkResult VKAPI_CALL layer_QueuePresentKHR(VkQueue queue, const VkPresentInfoKHR* info);
VKAPI_ATTR VkResult VKAPI_CALL layer_AcquireNextImageKHR(VkDevice device, VkSwapchainKHR sc,
                                                         uint64_t timeout, VkSemaphore sem,
                                                         VkFence fence, uint32_t* index);
VKAPI_ATTR VkResult VKAPI_CALL layer_AcquireNextImage2KHR(VkDevice device,
                                                          const VkAcquireNextImageInfoKHR* info,
                                                          uint32_t* index);
VKAPI_ATTR VkResult VKAPI_CALL layer_CreateSwapchainKHR(VkDevice device,
                                                        const VkSwapchainCreateInfoKHR* info,
                                                        const VkAllocationCallbacks* alloc,
                                                        VkSwapchainKHR* out);
VKAPI_ATTR void VKAPI_CALL layer_DestroySwapchainKHR(VkDevice device, VkSwapchainKHR sc,
                                                     const VkAllocationCallbacks* alloc);

}  // namespace latlab::capture::layer
