// What the sources of VulkanContext share (private): the instance, the
// device probe, and the context's private parts. VulkanContext is split by
// concern over vulkan_instance.cpp (instance, validation messenger),
// vulkan_device_report.cpp (probe, reports), vulkan_calibration.cpp
// (calibration pairs) and vulkan_context.cpp (create: device, queue,
// features; submission).
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "backends/vulkan/vk_unique.hpp"
#include "latlab/result.hpp"
#include "latlab/vulkan.hpp"

namespace latlab {

// ---------------------------------------------------------------------------
// Private parts of VulkanContext (declared in latlab/vulkan.hpp)

// Validation-layer messages, counted and bounded; address-stable for the
// messenger callback (pUserData).
struct VulkanContext::Validation {
  mutable std::mutex mu;
  uint64_t errors = 0;
  std::deque<std::string> messages;

  static VKAPI_ATTR VkBool32 VKAPI_CALL callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT types,
                                                 const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                 void* user);
  // Warnings and errors of every type, delivered to callback() with this.
  VkDebugUtilsMessengerCreateInfoEXT create_info();
};

// What the context owns of the driver's, destroyed in reverse order: the
// device, then the messenger (which reports on the device's destruction),
// then the instance. Through the loader's entry points (the context made
// them through the loader).
struct VulkanContext::Owned {
  vk::UniqueInstance instance;
  vk::UniqueMessenger messenger;
  vk::UniqueDevice device;
};

struct VulkanContext::OneShot {
  std::mutex mu;
  vk::UniqueCommandPool pool;  // on the device: goes before Owned
};

namespace vk {

struct InstanceFns;

// The KHR name of calibrated timestamps (promoted from EXT, same entry points;
// newer than the headers some distributions ship).
inline constexpr const char* kCalibratedTimestampsKhr = "VK_KHR_calibrated_timestamps";

// `version` is at least major.minor.
inline bool at_least(uint32_t version, uint32_t major, uint32_t minor) {
  return VK_API_VERSION_MAJOR(version) > major ||
         (VK_API_VERSION_MAJOR(version) == major && VK_API_VERSION_MINOR(version) >= minor);
}

// ---------------------------------------------------------------------------
// Instance (vulkan_instance.cpp)

struct InstanceChoice {
  UniqueInstance instance;       // empty: no driver (VK_ERROR_INCOMPATIBLE_DRIVER)
  uint32_t api = 0;              // the API version the instance was created at
  bool xcb_surface = false;      // VK_KHR_surface + VK_KHR_xcb_surface enabled
  bool wayland_surface = false;  // VK_KHR_surface + VK_KHR_wayland_surface enabled
};

// An instance at min(loader, max_api), at least 1.1; with `validation` the
// Khronos layer, VK_EXT_debug_utils and `messenger` chained. No driver comes
// back as an empty instance, other failures as errors.
// With `surfaces`, VK_KHR_surface with VK_KHR_xcb_surface and
// VK_KHR_wayland_surface, each where offered.
Result<InstanceChoice> make_instance(uint32_t max_api, bool validation,
                                     const VkDebugUtilsMessengerCreateInfoEXT* messenger,
                                     bool surfaces = false);

// The instance's devices; an error (with the driver's code) when the driver
// fails to enumerate, so "no device" only ever means none exists.
Result<std::vector<VkPhysicalDevice>> physical_devices(VkInstance instance);

// A debug-utils messenger on `instance` (destroyed before it).
Result<UniqueMessenger> create_messenger(VkInstance instance,
                                         const VkDebugUtilsMessengerCreateInfoEXT& ci);

// ---------------------------------------------------------------------------
// Device probe (vulkan_device_report.cpp)

// The facts about one physical device, as seen through an instance created
// at some API version. Also says which extensions to enable on it.
struct Probe {
  VulkanDeviceReport report;
  VkPhysicalDeviceProperties props{};
  uint32_t usable_api = 0;  // min(instance, device)
  // The *2 queries (core at 1.1, else VK_KHR_get_physical_device_properties2
  // enabled on the instance); null when neither. Every device extension
  // latlab wishes for depends on the same: without them none can be enabled.
  PFN_vkGetPhysicalDeviceProperties2 properties2 = nullptr;
  PFN_vkGetPhysicalDeviceFeatures2 features2 = nullptr;
  bool extension_deps() const { return properties2 != nullptr && features2 != nullptr; }
  bool host_reset_core = false;       // feature via Vulkan 1.2
  bool host_reset_ext = false;        // feature via VK_EXT_host_query_reset
  bool calibrated_ext = false;        // VK_KHR_ or VK_EXT_calibrated_timestamps offered
  bool calibrated_ext_named = false;  // VK_EXT_calibrated_timestamps among them
  bool calibrated_khr = false;        // VK_KHR_calibrated_timestamps among them
  bool has_device_domain = false;
  bool has_monotonic_domain = false;
};

// Probes device `pd`, number `index` in the instance's list, through the
// instance's entry points `f`; `instance_api` is the version the instance
// was created at.
Probe probe_device(const InstanceFns& f, uint32_t instance_api, VkPhysicalDevice pd,
                   uint32_t index);

}  // namespace vk
}  // namespace latlab
