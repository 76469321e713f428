// A Vulkan instance and device made the way a program makes its own, with
// no latlab object involved: its own debug messenger (counting validation
// errors), its own choice of features and extensions. The attach tests and
// the attach zone-cost benchmark (bench/profiler_bench.cpp) attach latlab
// to it. LATLAB_TEST_VULKAN_DEVICE (index or name substring) picks the
// device, as for the other Vulkan tests.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "latlab/vulkan.hpp"

namespace latlab::test {

struct ProgramDeviceDesc {
  std::string device = {};             // index or name substring; "" = first discrete, else first
  bool validation = true;              // VK_LAYER_KHRONOS_validation + a messenger of its own
  bool host_query_reset = false;       // enable the hostQueryReset feature where offered
  bool calibrated_timestamps = false;  // enable VK_EXT/KHR_calibrated_timestamps where offered
  // The instance's apiVersion. Below 1.1 the instance enables what
  // vulkan_attach_instance_extensions names, unless `instance_wishes` is off.
  uint32_t api_version = VK_API_VERSION_1_3;
  bool instance_wishes = true;
};

class ProgramDevice {
 public:
  // Null with `error` set when there is no device, no layer, or a call fails.
  static std::unique_ptr<ProgramDevice> create(const ProgramDeviceDesc& desc, std::string& error) {
    std::unique_ptr<ProgramDevice> p(new ProgramDevice());
    if (!p->init(desc, error)) return nullptr;
    return p;
  }
  ~ProgramDevice() {
    if (device != VK_NULL_HANDLE) {
      vkDeviceWaitIdle(device);
      if (pool != VK_NULL_HANDLE) vkDestroyCommandPool(device, pool, nullptr);
      vkDestroyDevice(device, nullptr);
    }
    if (messenger != VK_NULL_HANDLE) {
      auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
      if (destroy != nullptr) destroy(instance, messenger, nullptr);
    }
    if (instance != VK_NULL_HANDLE) vkDestroyInstance(instance, nullptr);
  }
  ProgramDevice(const ProgramDevice&) = delete;
  ProgramDevice& operator=(const ProgramDevice&) = delete;

  // The attach description of this device: handles, the family, what was
  // enabled (read from the create info, as a program would).
  VulkanAttachDesc attach_desc() const {
    VulkanAttachDesc d;
    d.instance = instance;
    d.physical_device = physical;
    d.device = device;
    d.queue_family = family;
    d.api_version = api_version;
    d.host_query_reset = host_query_reset_enabled;
    d.calibrated_timestamps = calibrated_enabled;
    return d;
  }
  // The same, handing latlab the queue and the lock its submissions take.
  VulkanAttachDesc attach_desc_with_queue() {
    VulkanAttachDesc d = attach_desc();
    d.queue = queue;
    d.queue_lock = [this](const std::function<void()>& submit) {
      std::lock_guard lock(queue_mutex);
      ++lock_calls;
      submit();
    };
    return d;
  }

  // A primary command buffer from the device's pool, begun (one-time submit).
  VkCommandBuffer begin() {
    VkCommandBufferAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    vkAllocateCommandBuffers(device, &ai, &cmd);
    VkCommandBufferBeginInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(cmd, &bi);
    return cmd;
  }
  // Ends and submits `cmd` under the queue lock, signalling `fence` (may be null).
  VkResult submit(VkCommandBuffer cmd, VkFence fence) {
    vkEndCommandBuffer(cmd);
    VkSubmitInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    std::lock_guard lock(queue_mutex);
    return vkQueueSubmit(queue, 1, &si, fence);
  }

  uint64_t validation_errors() const {
    std::lock_guard lock(messages_mutex_);
    return errors_;
  }
  std::string validation_messages() const {
    std::lock_guard lock(messages_mutex_);
    std::string all;
    for (const auto& m : messages_) all += m + "\n";
    return all;
  }

  uint32_t api_version = VK_API_VERSION_1_3;   // the instance's
  std::vector<const char*> device_extensions;  // what the device was created with
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  VkCommandPool pool = VK_NULL_HANDLE;  // transient, resettable buffers of `family`
  std::mutex queue_mutex;               // the program's lock around its submissions
  uint64_t lock_calls = 0;              // times latlab took it (under queue_mutex)
  bool host_query_reset_enabled = false;
  bool calibrated_enabled = false;
  std::string name;

 private:
  ProgramDevice() = default;

  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                   void* user) {
    auto* self = static_cast<ProgramDevice*>(user);
    std::lock_guard lock(self->messages_mutex_);
    if ((severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) != 0) ++self->errors_;
    if (self->messages_.size() < 64)
      self->messages_.emplace_back(data != nullptr && data->pMessage ? data->pMessage : "");
    return VK_FALSE;
  }

  bool init(const ProgramDeviceDesc& desc, std::string& error) {
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "latlab attach test";
    api_version = desc.api_version;
    app.apiVersion = api_version;
    VkDebugUtilsMessengerCreateInfoEXT mci{};
    mci.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
    mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                      VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
    mci.pfnUserCallback = &on_message;
    mci.pUserData = this;
    const char* layer = "VK_LAYER_KHRONOS_validation";
    std::vector<const char*> instance_extensions;
    if (desc.instance_wishes) instance_extensions = vulkan_attach_instance_extensions(api_version);
    if (desc.validation) instance_extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    VkInstanceCreateInfo ici{};
    ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ici.pApplicationInfo = &app;
    ici.enabledExtensionCount = static_cast<uint32_t>(instance_extensions.size());
    ici.ppEnabledExtensionNames = instance_extensions.data();
    if (desc.validation) {
      ici.pNext = &mci;
      ici.enabledLayerCount = 1;
      ici.ppEnabledLayerNames = &layer;
    }
    if (VkResult r = vkCreateInstance(&ici, nullptr, &instance); r != VK_SUCCESS) {
      instance = VK_NULL_HANDLE;
      error = "vkCreateInstance failed (" + std::to_string(r) + ")";
      return false;
    }
    if (desc.validation) {
      auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
      if (create == nullptr || create(instance, &mci, nullptr, &messenger) != VK_SUCCESS) {
        error = "no debug messenger";
        return false;
      }
    }
    uint32_t n = 0;
    vkEnumeratePhysicalDevices(instance, &n, nullptr);
    std::vector<VkPhysicalDevice> devices(n);
    vkEnumeratePhysicalDevices(instance, &n, devices.data());
    if (n == 0) {
      error = "no Vulkan device";
      return false;
    }
    physical = pick(devices, desc.device);
    if (physical == VK_NULL_HANDLE) {
      error = "no Vulkan device matches '" + desc.device + "'";
      return false;
    }
    VkPhysicalDeviceProperties props{};
    vkGetPhysicalDeviceProperties(physical, &props);
    name = props.deviceName;
    if (!pick_family()) {
      error = name + " has no compute queue family that can time";
      return false;
    }
    // What latlab would like, taken only as far as this program wants it.
    VulkanAttachDesc probe;
    probe.instance = instance;
    probe.physical_device = physical;
    probe.api_version = api_version;
    auto wishes = vulkan_attach_wishes(probe);
    if (!wishes) {
      error = wishes.error().message;
      return false;
    }
    std::vector<const char*>& extensions = device_extensions;
    for (const char* e : wishes->extensions) {
      const bool calibrated = std::strstr(e, "calibrated_timestamps") != nullptr;
      if (calibrated ? desc.calibrated_timestamps : desc.host_query_reset) extensions.push_back(e);
    }
    VkPhysicalDeviceHostQueryResetFeatures reset = wishes->host_query_reset_features;
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qci{};
    qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qci.queueFamilyIndex = family;
    qci.queueCount = 1;
    qci.pQueuePriorities = &priority;
    VkDeviceCreateInfo dci{};
    dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    dci.pNext = desc.host_query_reset && wishes->host_query_reset ? &reset : nullptr;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    dci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
    dci.ppEnabledExtensionNames = extensions.data();
    if (VkResult r = vkCreateDevice(physical, &dci, nullptr, &device); r != VK_SUCCESS) {
      device = VK_NULL_HANDLE;
      error = "vkCreateDevice failed (" + std::to_string(r) + ")";
      return false;
    }
    VulkanAttachDesc enabled;
    vulkan_attach_enabled(dci, enabled);
    host_query_reset_enabled = enabled.host_query_reset;
    calibrated_enabled = enabled.calibrated_timestamps;
    vkGetDeviceQueue(device, family, 0, &queue);
    VkCommandPoolCreateInfo pci{};
    pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pci.flags =
        VK_COMMAND_POOL_CREATE_TRANSIENT_BIT | VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = family;
    if (vkCreateCommandPool(device, &pci, nullptr, &pool) != VK_SUCCESS) {
      error = "vkCreateCommandPool failed";
      return false;
    }
    return true;
  }

  static VkPhysicalDevice pick(const std::vector<VkPhysicalDevice>& devices,
                               const std::string& selector) {
    if (!selector.empty() && selector.find_first_not_of("0123456789") == std::string::npos) {
      const auto i = std::stoul(selector);
      return i < devices.size() ? devices[i] : VK_NULL_HANDLE;
    }
    for (VkPhysicalDevice d : devices) {
      VkPhysicalDeviceProperties p{};
      vkGetPhysicalDeviceProperties(d, &p);
      if (!selector.empty() && std::string(p.deviceName).find(selector) != std::string::npos)
        return d;
      if (selector.empty() && p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) return d;
    }
    return selector.empty() ? devices[0] : VK_NULL_HANDLE;
  }

  bool pick_family() {
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &n, nullptr);
    std::vector<VkQueueFamilyProperties> families(n);
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &n, families.data());
    for (uint32_t i = 0; i < n; ++i) {
      if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0 &&
          families[i].timestampValidBits > 0) {
        family = i;
        return true;
      }
    }
    return false;
  }

  mutable std::mutex messages_mutex_;
  uint64_t errors_ = 0;
  std::deque<std::string> messages_;
};

}  // namespace latlab::test
