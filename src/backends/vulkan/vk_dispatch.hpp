// The Vulkan entry points latlab's timing code calls, loaded through the
// program's vkGetInstanceProcAddr / vkGetDeviceProcAddr (volk, a dispatch of
// its own) or the loader's (private). Device-level calls go straight to the
// driver (or the layers the program enabled), never through the loader's
// trampolines: the attach path and the latlab-made context share them.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>

#include "latlab/result.hpp"

namespace latlab::vk {

// Physical-device queries (the device probe).
struct InstanceFns {
  PFN_vkGetInstanceProcAddr GetInstanceProcAddr = nullptr;
  PFN_vkGetPhysicalDeviceProperties GetPhysicalDeviceProperties = nullptr;
  PFN_vkGetPhysicalDeviceProperties2 GetPhysicalDeviceProperties2 = nullptr;  // null below 1.1
  PFN_vkGetPhysicalDeviceFeatures2 GetPhysicalDeviceFeatures2 = nullptr;      // null below 1.1
  // VK_KHR_get_physical_device_properties2's names: null unless the program
  // enabled that extension on its instance (the loader gives them only then).
  PFN_vkGetPhysicalDeviceProperties2KHR GetPhysicalDeviceProperties2Khr = nullptr;
  PFN_vkGetPhysicalDeviceFeatures2KHR GetPhysicalDeviceFeatures2Khr = nullptr;
  PFN_vkGetPhysicalDeviceQueueFamilyProperties GetPhysicalDeviceQueueFamilyProperties = nullptr;
  PFN_vkGetPhysicalDeviceMemoryProperties GetPhysicalDeviceMemoryProperties = nullptr;
  PFN_vkEnumerateDeviceExtensionProperties EnumerateDeviceExtensionProperties = nullptr;
  // KHR or EXT name; null when the instance offers neither.
  PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT GetPhysicalDeviceCalibrateableTimeDomains =
      nullptr;

  // `gipa` null: the loader's vkGetInstanceProcAddr. Error names the first
  // required entry point the instance does not give.
  static Result<InstanceFns> load(VkInstance instance, PFN_vkGetInstanceProcAddr gipa);
};

// What the timestamp slots and the calibration record and call on a device.
struct DeviceFns {
  PFN_vkCmdWriteTimestamp CmdWriteTimestamp = nullptr;
  PFN_vkCmdResetQueryPool CmdResetQueryPool = nullptr;
  PFN_vkCreateQueryPool CreateQueryPool = nullptr;
  PFN_vkDestroyQueryPool DestroyQueryPool = nullptr;
  PFN_vkGetQueryPoolResults GetQueryPoolResults = nullptr;
  PFN_vkDeviceWaitIdle DeviceWaitIdle = nullptr;
  PFN_vkCreateCommandPool CreateCommandPool = nullptr;
  PFN_vkDestroyCommandPool DestroyCommandPool = nullptr;
  PFN_vkAllocateCommandBuffers AllocateCommandBuffers = nullptr;
  PFN_vkBeginCommandBuffer BeginCommandBuffer = nullptr;
  PFN_vkEndCommandBuffer EndCommandBuffer = nullptr;
  PFN_vkQueueSubmit QueueSubmit = nullptr;
  PFN_vkCreateFence CreateFence = nullptr;
  PFN_vkDestroyFence DestroyFence = nullptr;
  PFN_vkResetFences ResetFences = nullptr;
  PFN_vkWaitForFences WaitForFences = nullptr;
  // Optional: null unless the program enabled them (host query reset: the
  // core 1.2 or the EXT name; calibrated timestamps: the KHR or EXT name).
  PFN_vkResetQueryPoolEXT ResetQueryPool = nullptr;
  PFN_vkGetCalibratedTimestampsEXT GetCalibratedTimestamps = nullptr;

  // How the program enabled host query reset: not, as the Vulkan 1.2
  // feature (vkResetQueryPool), or through VK_EXT_host_query_reset.
  enum class HostReset : uint8_t { off, core, ext };
  // `gdpa` null: vkGetDeviceProcAddr from `instance` (through `gipa`).
  // Loads the optional ones only where `host_reset` / `calibrated` say the
  // program enabled them. Error names the first missing required one.
  static Result<DeviceFns> load(VkInstance instance, VkDevice device,
                                PFN_vkGetInstanceProcAddr gipa, PFN_vkGetDeviceProcAddr gdpa,
                                HostReset host_reset, bool calibrated);
};

}  // namespace latlab::vk
