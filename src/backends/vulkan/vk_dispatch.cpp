// Loading the entry points of vk_dispatch.hpp.
#include "backends/vulkan/vk_dispatch.hpp"

#include <string>

namespace latlab::vk {
namespace {

template <class Fn>
void load_instance(Fn& fn, PFN_vkGetInstanceProcAddr gipa, VkInstance instance, const char* name,
                   const char*& missing) {
  fn = reinterpret_cast<Fn>(gipa(instance, name));
  if (fn == nullptr && missing == nullptr) missing = name;
}

template <class Fn>
void load_device(Fn& fn, PFN_vkGetDeviceProcAddr gdpa, VkDevice device, const char* name,
                 const char*& missing) {
  fn = reinterpret_cast<Fn>(gdpa(device, name));
  if (fn == nullptr && missing == nullptr) missing = name;
}

}  // namespace

Result<InstanceFns> InstanceFns::load(VkInstance instance, PFN_vkGetInstanceProcAddr gipa) {
  if (gipa == nullptr) gipa = vkGetInstanceProcAddr;
  InstanceFns f;
  f.GetInstanceProcAddr = gipa;
  const char* missing = nullptr;
  load_instance(f.GetPhysicalDeviceProperties, gipa, instance, "vkGetPhysicalDeviceProperties",
                missing);
  load_instance(f.GetPhysicalDeviceQueueFamilyProperties, gipa, instance,
                "vkGetPhysicalDeviceQueueFamilyProperties", missing);
  load_instance(f.GetPhysicalDeviceMemoryProperties, gipa, instance,
                "vkGetPhysicalDeviceMemoryProperties", missing);
  load_instance(f.EnumerateDeviceExtensionProperties, gipa, instance,
                "vkEnumerateDeviceExtensionProperties", missing);
  if (missing != nullptr) {
    return make_error(std::string("vkGetInstanceProcAddr gave no ") + missing +
                      " (is the instance handle valid, and the function the program's loader's?)");
  }
  // Core in 1.1 (the instance may be older: the probe then reads less).
  f.GetPhysicalDeviceProperties2 = reinterpret_cast<PFN_vkGetPhysicalDeviceProperties2>(
      gipa(instance, "vkGetPhysicalDeviceProperties2"));
  f.GetPhysicalDeviceFeatures2 = reinterpret_cast<PFN_vkGetPhysicalDeviceFeatures2>(
      gipa(instance, "vkGetPhysicalDeviceFeatures2"));
  // A 1.0 instance has the *2 queries only through the extension, and only
  // where the program enabled it (vkGetInstanceProcAddr gives null otherwise).
  f.GetPhysicalDeviceProperties2Khr = reinterpret_cast<PFN_vkGetPhysicalDeviceProperties2KHR>(
      gipa(instance, "vkGetPhysicalDeviceProperties2KHR"));
  f.GetPhysicalDeviceFeatures2Khr = reinterpret_cast<PFN_vkGetPhysicalDeviceFeatures2KHR>(
      gipa(instance, "vkGetPhysicalDeviceFeatures2KHR"));
  f.GetPhysicalDeviceCalibrateableTimeDomains =
      reinterpret_cast<PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT>(
          gipa(instance, "vkGetPhysicalDeviceCalibrateableTimeDomainsKHR"));
  if (f.GetPhysicalDeviceCalibrateableTimeDomains == nullptr) {
    f.GetPhysicalDeviceCalibrateableTimeDomains =
        reinterpret_cast<PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT>(
            gipa(instance, "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT"));
  }
  return f;
}

Result<DeviceFns> DeviceFns::load(VkInstance instance, VkDevice device,
                                  PFN_vkGetInstanceProcAddr gipa, PFN_vkGetDeviceProcAddr gdpa,
                                  HostReset host_reset, bool calibrated) {
  if (gipa == nullptr) gipa = vkGetInstanceProcAddr;
  if (gdpa == nullptr) {
    gdpa = reinterpret_cast<PFN_vkGetDeviceProcAddr>(gipa(instance, "vkGetDeviceProcAddr"));
    if (gdpa == nullptr) return make_error("vkGetInstanceProcAddr gave no vkGetDeviceProcAddr");
  }
  DeviceFns f;
  const char* missing = nullptr;
  load_device(f.CmdWriteTimestamp, gdpa, device, "vkCmdWriteTimestamp", missing);
  load_device(f.CmdResetQueryPool, gdpa, device, "vkCmdResetQueryPool", missing);
  load_device(f.CreateQueryPool, gdpa, device, "vkCreateQueryPool", missing);
  load_device(f.DestroyQueryPool, gdpa, device, "vkDestroyQueryPool", missing);
  load_device(f.GetQueryPoolResults, gdpa, device, "vkGetQueryPoolResults", missing);
  load_device(f.DeviceWaitIdle, gdpa, device, "vkDeviceWaitIdle", missing);
  load_device(f.CreateCommandPool, gdpa, device, "vkCreateCommandPool", missing);
  load_device(f.DestroyCommandPool, gdpa, device, "vkDestroyCommandPool", missing);
  load_device(f.AllocateCommandBuffers, gdpa, device, "vkAllocateCommandBuffers", missing);
  load_device(f.BeginCommandBuffer, gdpa, device, "vkBeginCommandBuffer", missing);
  load_device(f.EndCommandBuffer, gdpa, device, "vkEndCommandBuffer", missing);
  load_device(f.QueueSubmit, gdpa, device, "vkQueueSubmit", missing);
  load_device(f.CreateFence, gdpa, device, "vkCreateFence", missing);
  load_device(f.DestroyFence, gdpa, device, "vkDestroyFence", missing);
  load_device(f.ResetFences, gdpa, device, "vkResetFences", missing);
  load_device(f.WaitForFences, gdpa, device, "vkWaitForFences", missing);
  if (missing != nullptr) {
    return make_error(std::string("vkGetDeviceProcAddr gave no ") + missing +
                      " (is the device handle valid?)");
  }
  // The preferred name first, then the other (a device made at 1.2 may have
  // enabled the extension, one below 1.2 can only have).
  if (host_reset != HostReset::off) {
    const bool core = host_reset == HostReset::core;
    f.ResetQueryPool = reinterpret_cast<PFN_vkResetQueryPoolEXT>(
        gdpa(device, core ? "vkResetQueryPool" : "vkResetQueryPoolEXT"));
    if (f.ResetQueryPool == nullptr) {
      f.ResetQueryPool = reinterpret_cast<PFN_vkResetQueryPoolEXT>(
          gdpa(device, core ? "vkResetQueryPoolEXT" : "vkResetQueryPool"));
    }
  }
  if (calibrated) {
    f.GetCalibratedTimestamps = reinterpret_cast<PFN_vkGetCalibratedTimestampsEXT>(
        gdpa(device, "vkGetCalibratedTimestampsEXT"));
    if (f.GetCalibratedTimestamps == nullptr) {
      f.GetCalibratedTimestamps = reinterpret_cast<PFN_vkGetCalibratedTimestampsEXT>(
          gdpa(device, "vkGetCalibratedTimestampsKHR"));
    }
  }
  return f;
}

}  // namespace latlab::vk
