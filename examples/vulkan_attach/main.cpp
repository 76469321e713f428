// A Vulkan program that makes its own instance (with its own debug
// callback), device and queue, with neither host query reset nor calibrated
// timestamps enabled, and then attaches latlab: zones around its own
// transfer work, frames in flight, the stat table and a Perfetto trace.
// The lines that call latlab are marked "latlab:".
//
// Usage: vulkan_attach [trace.json]. Exit 0 on success, 1 on a Vulkan or
// latlab error, 3 when there is no Vulkan device, 4 when the validation
// layer (VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation) said anything.
#include <vulkan/vulkan.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "latlab/profiler_vulkan.hpp"

namespace {

int g_validation_messages = 0;

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                          VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  ++g_validation_messages;
  std::fprintf(stderr, "vulkan_attach: validation: %s\n", data->pMessage);
  return VK_FALSE;
}

bool offered(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> props(n);
  vkEnumerateInstanceExtensionProperties(nullptr, &n, props.data());
  for (const auto& p : props) {
    if (std::strcmp(p.extensionName, name) == 0) return true;
  }
  return false;
}

// The program's own objects, none of them latlab's.
struct Program {
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t family = 0;
  VkQueue queue = VK_NULL_HANDLE;
  std::mutex queue_mutex;  // held around every use of `queue` (submit, wait idle)
  VkCommandPool pool = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;

  ~Program() {
    if (device != VK_NULL_HANDLE) {
      vkDeviceWaitIdle(device);
      vkDestroyBuffer(device, buffer, nullptr);
      vkFreeMemory(device, memory, nullptr);
      vkDestroyCommandPool(device, pool, nullptr);
      vkDestroyDevice(device, nullptr);
    }
    if (messenger != VK_NULL_HANDLE) {
      auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
      destroy(instance, messenger, nullptr);
    }
    if (instance != VK_NULL_HANDLE) vkDestroyInstance(instance, nullptr);
  }

  // 0, or the exit code.
  int create() {
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "vulkan_attach";
    app.apiVersion = VK_API_VERSION_1_0;  // as many samples do: latlab attaches at any version
    VkDebugUtilsMessengerCreateInfoEXT mci{};
    mci.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
    mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                      VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
    mci.pfnUserCallback = &on_message;
    const bool debug_utils = offered(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    const char* ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkInstanceCreateInfo ici{};
    ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ici.pApplicationInfo = &app;
    ici.enabledExtensionCount = debug_utils ? 1 : 0;
    ici.ppEnabledExtensionNames = &ext;
    if (vkCreateInstance(&ici, nullptr, &instance) != VK_SUCCESS) return 3;
    if (debug_utils) {
      auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
      create_messenger(instance, &mci, nullptr, &messenger);
    }
    uint32_t n = 1;
    if (vkEnumeratePhysicalDevices(instance, &n, &physical) < 0 || n == 0) return 3;
    uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, nullptr);
    std::vector<VkQueueFamilyProperties> props(families);
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, props.data());
    family = families;
    for (uint32_t i = 0; i < families && family == families; ++i) {
      if ((props[i].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0 && props[i].timestampValidBits > 0)
        family = i;
    }
    if (family == families) return 3;
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qci{};
    qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qci.queueFamilyIndex = family;
    qci.queueCount = 1;
    qci.pQueuePriorities = &priority;
    VkDeviceCreateInfo dci{};  // no host query reset, no calibrated timestamps
    dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    if (vkCreateDevice(physical, &dci, nullptr, &device) != VK_SUCCESS) return 1;
    vkGetDeviceQueue(device, family, 0, &queue);
    VkCommandPoolCreateInfo pci{};
    pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = family;
    if (vkCreateCommandPool(device, &pci, nullptr, &pool) != VK_SUCCESS) return 1;
    VkBufferCreateInfo bci{};
    bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bci.size = 32u << 20;
    bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    if (vkCreateBuffer(device, &bci, nullptr, &buffer) != VK_SUCCESS) return 1;
    VkMemoryRequirements req{};
    vkGetBufferMemoryRequirements(device, buffer, &req);
    VkMemoryAllocateInfo mai{};
    mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    mai.allocationSize = req.size;
    while ((req.memoryTypeBits & (1u << mai.memoryTypeIndex)) == 0) ++mai.memoryTypeIndex;
    if (vkAllocateMemory(device, &mai, nullptr, &memory) != VK_SUCCESS) return 1;
    return vkBindBufferMemory(device, buffer, memory, 0) == VK_SUCCESS ? 0 : 1;
  }
};

int fail(const char* what, const std::string& why) {
  std::fprintf(stderr, "vulkan_attach: %s: %s\n", what, why.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Program p;
  if (const int rc = p.create(); rc != 0) {
    std::fprintf(stderr, "vulkan_attach: %s\n",
                 rc == 3 ? "no Vulkan device with a timing compute queue" : "Vulkan error");
    return rc;
  }
  constexpr uint32_t kInFlight = 2;
  constexpr int kFrames = 24;
  VkCommandBuffer cmds[kInFlight];
  VkFence fences[kInFlight];
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, nullptr, p.pool,
                                 VK_COMMAND_BUFFER_LEVEL_PRIMARY, kInFlight};
  vkAllocateCommandBuffers(p.device, &ai, cmds);
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, nullptr, VK_FENCE_CREATE_SIGNALED_BIT};
  for (VkFence& f : fences) vkCreateFence(p.device, &fci, nullptr, &f);

  {
    // latlab: attach to the program's device; hand it the queue and the lock
    // the program holds around that queue's use, for bracketed calibration.
    auto gpu = latlab::vulkan::attach(
        {.device = {.instance = p.instance,
                    .physical_device = p.physical,
                    .device = p.device,
                    .queue_family = p.family,
                    .api_version = VK_API_VERSION_1_0,
                    .queue = p.queue,
                    .queue_lock =
                        [&p](const std::function<void()>& use) {
                          std::lock_guard lock(p.queue_mutex);
                          use();
                        }},
         .profiler = {.name = "transfer", .frames_in_flight = kInFlight}});
    if (!gpu) return fail("attach", gpu.error().message);
    if (argc > 1) {
      if (auto t = (*gpu)->trace(argv[1]); !t) return fail("trace", t.error().message);  // latlab
    }

    for (int frame = 0; frame < kFrames; ++frame) {
      const uint32_t slot = static_cast<uint32_t>(frame) % kInFlight;
      vkWaitForFences(p.device, 1, &fences[slot], VK_TRUE, UINT64_MAX);
      vkResetFences(p.device, 1, &fences[slot]);
      VkCommandBuffer cmd = cmds[slot];
      VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, nullptr,
                                  VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, nullptr};
      vkBeginCommandBuffer(cmd, &bi);
      (*gpu)->frame(cmd);  // latlab: closes the last frame, resets this one's queries in cmd
      {
        LATLAB_GPU_ZONE(*gpu, cmd, "frame");  // latlab
        {
          LATLAB_GPU_ZONE(*gpu, cmd, "fill");  // latlab
          vkCmdFillBuffer(cmd, p.buffer, 0, 16u << 20, static_cast<uint32_t>(frame));
        }
        VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr,
                                VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_TRANSFER_READ_BIT};
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                             1, &barrier, 0, nullptr, 0, nullptr);
        {
          LATLAB_GPU_ZONE(*gpu, cmd, "copy");  // latlab
          VkBufferCopy region{0, 16u << 20, 16u << 20};
          vkCmdCopyBuffer(cmd, p.buffer, p.buffer, 1, &region);
        }
      }
      vkEndCommandBuffer(cmd);
      VkSubmitInfo si{
          VK_STRUCTURE_TYPE_SUBMIT_INFO, nullptr, 0, nullptr, nullptr, 1, &cmd, 0, nullptr};
      std::lock_guard lock(p.queue_mutex);
      if (vkQueueSubmit(p.queue, 1, &si, fences[slot]) != VK_SUCCESS)
        return fail("submit", "vkQueueSubmit failed");
    }
    {
      std::lock_guard lock(p.queue_mutex);  // the program's own wait uses the queue too
      vkQueueWaitIdle(p.queue);
    }
    // latlab: close the last frame, collect every frame, close the trace
    if (auto done = (*gpu)->finish(); !done) return fail("trace", done.error().message);
    std::printf("%s", (*gpu)->stat_table().c_str());  // latlab
    const latlab::ClockSync& clock = (*gpu)->clock();  // latlab
    std::printf("clock: %s\n", clock.available() ? clock.method().c_str() : clock.reason().c_str());
    if (argc > 1) std::printf("trace: %s (%zu spans)\n", argv[1], (*gpu)->trace_spans());
    if ((*gpu)->counters().zones_ok != 3u * kFrames)  // latlab
      return fail("zones", "not every zone was timed");
  }
  for (VkFence f : fences) vkDestroyFence(p.device, f, nullptr);
  return g_validation_messages == 0 ? 0 : 4;
}
