// VK_LAYER_LATLAB_test_present_wait, for latlab's tests only: gives a driver
// that lacks them (lavapipe in Mesa 22.3) VK_KHR_present_id and
// VK_KHR_present_wait, so that the capture layer's present wait runs end to
// end on Xvfb (tests/e2e/capture_screen_test.cpp). Put below the capture
// layer, it lists both extensions and their features, takes them (and the
// VkPresentIdKHR of each present) out before the driver sees them, and
// answers vkWaitForPresentKHR itself: present id N of a swapchain counts as
// complete once present N + 1 of it was made (one frame in the presentation
// queue), so the last one never completes and the swapchain is destroyed
// with it outstanding. A wait on a swapchain that is being or was destroyed
// is printed to stderr ("fake present wait: ..."), which the test looks for.
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

template <class T>
void* key_of(T h) {
  return *reinterpret_cast<void**>(h);
}

// The next layer's instance functions, taken at vkCreateInstance: asked for
// later, the loader's terminator answers from its dispatch table, whose top
// is the layer above (and so this layer again).
struct Instance {
  PFN_vkGetInstanceProcAddr gipa = nullptr;
  VkInstance instance = VK_NULL_HANDLE;
  PFN_vkDestroyInstance DestroyInstance = nullptr;
  PFN_vkEnumerateDeviceExtensionProperties EnumerateDeviceExtensionProperties = nullptr;
  PFN_vkGetPhysicalDeviceFeatures2 GetPhysicalDeviceFeatures2 = nullptr;
};

struct Swapchain {
  uint64_t presented = 0;  // the latest id presented
  uint64_t completed = 0;  // every id up to this one is complete
  int waiting = 0;         // waits in progress
};

struct Device {
  VkDevice device = VK_NULL_HANDLE;
  PFN_vkGetDeviceProcAddr gdpa = nullptr;
  PFN_vkQueuePresentKHR QueuePresentKHR = nullptr;
  PFN_vkDestroySwapchainKHR DestroySwapchainKHR = nullptr;
  PFN_vkDestroyDevice DestroyDevice = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  std::map<VkSwapchainKHR, Swapchain> swapchains;
};

std::mutex g_mu;
std::map<void*, Instance> g_instances;
std::map<void*, std::unique_ptr<Device>> g_devices;

Instance* instance_of(void* key) {
  std::lock_guard lock(g_mu);
  auto it = g_instances.find(key);
  if (it != g_instances.end()) return &it->second;
  return g_instances.size() == 1 ? &g_instances.begin()->second : nullptr;
}
Device* device_of(void* key) {
  std::lock_guard lock(g_mu);
  auto it = g_devices.find(key);
  return it == g_devices.end() ? nullptr : it->second.get();
}

// Takes the structures of `types` out of a pNext chain for the length of a
// call and puts them back after (the chain is the caller's memory; this is
// a test layer).
class Unlinked {
 public:
  Unlinked(const void* const* head, std::initializer_list<VkStructureType> types) {
    auto** link =
        const_cast<VkBaseInStructure**>(reinterpret_cast<const VkBaseInStructure* const*>(head));
    while (*link != nullptr) {
      VkBaseInStructure* s = *link;
      bool drop = false;
      for (auto t : types) drop |= s->sType == t;
      if (drop) {
        removed_.push_back({link, s});
        *link = const_cast<VkBaseInStructure*>(s->pNext);
      } else {
        link = const_cast<VkBaseInStructure**>(&s->pNext);
      }
    }
  }
  ~Unlinked() {
    for (auto it = removed_.rbegin(); it != removed_.rend(); ++it) *it->first = it->second;
  }

 private:
  std::vector<std::pair<VkBaseInStructure**, VkBaseInStructure*>> removed_;
};

bool is_ours(const char* e) {
  return std::strcmp(e, VK_KHR_PRESENT_ID_EXTENSION_NAME) == 0 ||
         std::strcmp(e, VK_KHR_PRESENT_WAIT_EXTENSION_NAME) == 0;
}

VKAPI_ATTR VkResult VKAPI_CALL fake_CreateInstance(const VkInstanceCreateInfo* info,
                                                   const VkAllocationCallbacks* alloc,
                                                   VkInstance* out) {
  auto* link = static_cast<VkLayerInstanceCreateInfo*>(const_cast<void*>(info->pNext));
  while (link != nullptr && !(link->sType == VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO &&
                              link->function == VK_LAYER_LINK_INFO))
    link = static_cast<VkLayerInstanceCreateInfo*>(const_cast<void*>(link->pNext));
  if (link == nullptr) return VK_ERROR_INITIALIZATION_FAILED;
  PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  link->u.pLayerInfo = link->u.pLayerInfo->pNext;
  auto create = reinterpret_cast<PFN_vkCreateInstance>(gipa(VK_NULL_HANDLE, "vkCreateInstance"));
  const VkResult r = create(info, alloc, out);
  if (r != VK_SUCCESS) return r;
  Instance i{gipa, *out};
  i.DestroyInstance = reinterpret_cast<PFN_vkDestroyInstance>(gipa(*out, "vkDestroyInstance"));
  i.EnumerateDeviceExtensionProperties = reinterpret_cast<PFN_vkEnumerateDeviceExtensionProperties>(
      gipa(*out, "vkEnumerateDeviceExtensionProperties"));
  i.GetPhysicalDeviceFeatures2 = reinterpret_cast<PFN_vkGetPhysicalDeviceFeatures2>(
      gipa(*out, "vkGetPhysicalDeviceFeatures2"));
  std::lock_guard lock(g_mu);
  g_instances[key_of(*out)] = i;
  return r;
}

VKAPI_ATTR void VKAPI_CALL fake_DestroyInstance(VkInstance instance,
                                                const VkAllocationCallbacks* alloc) {
  Instance i = *instance_of(key_of(instance));
  {
    std::lock_guard lock(g_mu);
    g_instances.erase(key_of(instance));
  }
  i.DestroyInstance(instance, alloc);
}

VKAPI_ATTR VkResult VKAPI_CALL fake_EnumerateDeviceExtensionProperties(
    VkPhysicalDevice pd, const char* layer, uint32_t* count, VkExtensionProperties* props) {
  const VkExtensionProperties ours[2] = {{VK_KHR_PRESENT_ID_EXTENSION_NAME, 1},
                                         {VK_KHR_PRESENT_WAIT_EXTENSION_NAME, 1}};
  if (layer != nullptr && std::strcmp(layer, "VK_LAYER_LATLAB_test_present_wait") == 0) {
    if (props == nullptr) {
      *count = 2;
      return VK_SUCCESS;
    }
    const uint32_t n = *count < 2 ? *count : 2;
    std::memcpy(props, ours, n * sizeof(VkExtensionProperties));
    *count = n;
    return n < 2 ? VK_INCOMPLETE : VK_SUCCESS;
  }
  auto next = instance_of(key_of(pd))->EnumerateDeviceExtensionProperties;
  if (layer != nullptr) return next(pd, layer, count, props);
  uint32_t n = 0;
  VkResult r = next(pd, nullptr, &n, nullptr);
  if (r != VK_SUCCESS) return r;
  std::vector<VkExtensionProperties> all(n);
  r = next(pd, nullptr, &n, all.data());
  if (r != VK_SUCCESS) return r;
  all.resize(n);
  for (const auto& e : ours) {
    bool have = false;
    for (const auto& a : all) have |= std::strcmp(a.extensionName, e.extensionName) == 0;
    if (!have) all.push_back(e);
  }
  if (props == nullptr) {
    *count = static_cast<uint32_t>(all.size());
    return VK_SUCCESS;
  }
  const uint32_t k = *count < all.size() ? *count : static_cast<uint32_t>(all.size());
  std::memcpy(props, all.data(), k * sizeof(VkExtensionProperties));
  *count = k;
  return k < all.size() ? VK_INCOMPLETE : VK_SUCCESS;
}

void set_our_features(VkPhysicalDeviceFeatures2* f) {
  for (auto* s = static_cast<VkBaseOutStructure*>(f->pNext); s != nullptr; s = s->pNext) {
    if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_ID_FEATURES_KHR)
      reinterpret_cast<VkPhysicalDevicePresentIdFeaturesKHR*>(s)->presentId = VK_TRUE;
    if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_WAIT_FEATURES_KHR)
      reinterpret_cast<VkPhysicalDevicePresentWaitFeaturesKHR*>(s)->presentWait = VK_TRUE;
  }
}

VKAPI_ATTR void VKAPI_CALL fake_GetPhysicalDeviceFeatures2(VkPhysicalDevice pd,
                                                           VkPhysicalDeviceFeatures2* f) {
  {
    // The driver does not know the two structures: it sees the chain without them.
    Unlinked hide(const_cast<const void* const*>(&f->pNext),
                  {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_ID_FEATURES_KHR,
                   VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_WAIT_FEATURES_KHR});
    instance_of(key_of(pd))->GetPhysicalDeviceFeatures2(pd, f);
  }
  set_our_features(f);
}

VKAPI_ATTR VkResult VKAPI_CALL fake_CreateDevice(VkPhysicalDevice pd,
                                                 const VkDeviceCreateInfo* info,
                                                 const VkAllocationCallbacks* alloc,
                                                 VkDevice* out) {
  auto* link = static_cast<VkLayerDeviceCreateInfo*>(const_cast<void*>(info->pNext));
  while (link != nullptr && !(link->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO &&
                              link->function == VK_LAYER_LINK_INFO))
    link = static_cast<VkLayerDeviceCreateInfo*>(const_cast<void*>(link->pNext));
  if (link == nullptr) return VK_ERROR_INITIALIZATION_FAILED;
  PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  PFN_vkGetDeviceProcAddr gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
  link->u.pLayerInfo = link->u.pLayerInfo->pNext;
  Instance* inst = instance_of(key_of(pd));
  auto create = reinterpret_cast<PFN_vkCreateDevice>(gipa(inst->instance, "vkCreateDevice"));
  VkDeviceCreateInfo mine = *info;
  std::vector<const char*> exts;
  for (uint32_t i = 0; i < info->enabledExtensionCount; ++i) {
    if (!is_ours(info->ppEnabledExtensionNames[i]))
      exts.push_back(info->ppEnabledExtensionNames[i]);
  }
  mine.enabledExtensionCount = static_cast<uint32_t>(exts.size());
  mine.ppEnabledExtensionNames = exts.data();
  VkResult r = VK_SUCCESS;
  {
    Unlinked hide(&mine.pNext, {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_ID_FEATURES_KHR,
                                VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_WAIT_FEATURES_KHR});
    r = create(pd, &mine, alloc, out);
  }
  if (r != VK_SUCCESS) return r;
  auto d = std::make_unique<Device>();
  d->device = *out;
  d->gdpa = gdpa;
  d->QueuePresentKHR = reinterpret_cast<PFN_vkQueuePresentKHR>(gdpa(*out, "vkQueuePresentKHR"));
  d->DestroySwapchainKHR =
      reinterpret_cast<PFN_vkDestroySwapchainKHR>(gdpa(*out, "vkDestroySwapchainKHR"));
  d->DestroyDevice = reinterpret_cast<PFN_vkDestroyDevice>(gdpa(*out, "vkDestroyDevice"));
  std::lock_guard lock(g_mu);
  g_devices[key_of(*out)] = std::move(d);
  return r;
}

VKAPI_ATTR void VKAPI_CALL fake_DestroyDevice(VkDevice device, const VkAllocationCallbacks* alloc) {
  std::unique_ptr<Device> d;
  {
    std::lock_guard lock(g_mu);
    auto it = g_devices.find(key_of(device));
    if (it == g_devices.end()) return;
    d = std::move(it->second);
    g_devices.erase(it);
  }
  d->DestroyDevice(device, alloc);
}

VKAPI_ATTR VkResult VKAPI_CALL fake_QueuePresentKHR(VkQueue queue, const VkPresentInfoKHR* info) {
  Device* d = device_of(key_of(queue));
  std::vector<uint64_t> ids(info->swapchainCount, 0);
  for (auto* s = static_cast<const VkBaseInStructure*>(info->pNext); s != nullptr; s = s->pNext) {
    if (s->sType != VK_STRUCTURE_TYPE_PRESENT_ID_KHR) continue;
    const auto* p = reinterpret_cast<const VkPresentIdKHR*>(s);
    for (uint32_t i = 0; i < p->swapchainCount && i < ids.size() && p->pPresentIds; ++i)
      ids[i] = p->pPresentIds[i];
  }
  VkResult r = VK_SUCCESS;
  {
    Unlinked hide(&info->pNext, {VK_STRUCTURE_TYPE_PRESENT_ID_KHR});
    r = d->QueuePresentKHR(queue, info);
  }
  if (r >= 0) {
    std::lock_guard lock(d->mu);
    for (uint32_t i = 0; i < info->swapchainCount; ++i) {
      if (ids[i] == 0) continue;
      Swapchain& sc = d->swapchains[info->pSwapchains[i]];
      sc.completed = sc.presented;  // the previous one is done now
      sc.presented = ids[i];
    }
    d->cv.notify_all();
  }
  return r;
}

VKAPI_ATTR VkResult VKAPI_CALL fake_WaitForPresentKHR(VkDevice device, VkSwapchainKHR sc,
                                                      uint64_t id, uint64_t timeout) {
  Device* d = device_of(key_of(device));
  std::unique_lock lock(d->mu);
  auto it = d->swapchains.find(sc);
  if (it == d->swapchains.end()) {
    std::fprintf(stderr, "fake present wait: wait on an unknown or destroyed swapchain\n");
    return VK_ERROR_SURFACE_LOST_KHR;
  }
  ++it->second.waiting;
  const bool done = d->cv.wait_for(lock, std::chrono::nanoseconds(timeout), [&] {
    auto s = d->swapchains.find(sc);
    return s == d->swapchains.end() || s->second.completed >= id;
  });
  auto s = d->swapchains.find(sc);
  if (s == d->swapchains.end()) {
    std::fprintf(stderr, "fake present wait: swapchain destroyed during a wait\n");
    return VK_ERROR_SURFACE_LOST_KHR;
  }
  --s->second.waiting;
  return done ? VK_SUCCESS : VK_TIMEOUT;
}

VKAPI_ATTR void VKAPI_CALL fake_DestroySwapchainKHR(VkDevice device, VkSwapchainKHR sc,
                                                    const VkAllocationCallbacks* alloc) {
  Device* d = device_of(key_of(device));
  {
    std::lock_guard lock(d->mu);
    auto it = d->swapchains.find(sc);
    if (it != d->swapchains.end()) {
      if (it->second.waiting > 0)
        std::fprintf(stderr, "fake present wait: swapchain destroyed during a wait\n");
      d->swapchains.erase(it);
    }
    d->cv.notify_all();
  }
  d->DestroySwapchainKHR(device, sc, alloc);
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL fake_GetDeviceProcAddr(VkDevice device, const char* name);

PFN_vkVoidFunction device_hook(std::string_view n) {
  if (n == "vkGetDeviceProcAddr")
    return reinterpret_cast<PFN_vkVoidFunction>(&fake_GetDeviceProcAddr);
  if (n == "vkDestroyDevice") return reinterpret_cast<PFN_vkVoidFunction>(&fake_DestroyDevice);
  if (n == "vkQueuePresentKHR") return reinterpret_cast<PFN_vkVoidFunction>(&fake_QueuePresentKHR);
  if (n == "vkWaitForPresentKHR")
    return reinterpret_cast<PFN_vkVoidFunction>(&fake_WaitForPresentKHR);
  if (n == "vkDestroySwapchainKHR")
    return reinterpret_cast<PFN_vkVoidFunction>(&fake_DestroySwapchainKHR);
  return nullptr;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL fake_GetDeviceProcAddr(VkDevice device, const char* name) {
  if (PFN_vkVoidFunction f = device_hook(name)) return f;
  Device* d = device_of(key_of(device));
  return d == nullptr ? nullptr : d->gdpa(device, name);
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL fake_GetInstanceProcAddr(VkInstance instance,
                                                                  const char* name) {
  const std::string_view n = name;
  if (n == "vkGetInstanceProcAddr")
    return reinterpret_cast<PFN_vkVoidFunction>(&fake_GetInstanceProcAddr);
  if (n == "vkCreateInstance") return reinterpret_cast<PFN_vkVoidFunction>(&fake_CreateInstance);
  if (n == "vkDestroyInstance") return reinterpret_cast<PFN_vkVoidFunction>(&fake_DestroyInstance);
  if (n == "vkCreateDevice") return reinterpret_cast<PFN_vkVoidFunction>(&fake_CreateDevice);
  if (n == "vkEnumerateDeviceExtensionProperties")
    return reinterpret_cast<PFN_vkVoidFunction>(&fake_EnumerateDeviceExtensionProperties);
  if (n == "vkGetPhysicalDeviceFeatures2" || n == "vkGetPhysicalDeviceFeatures2KHR")
    return reinterpret_cast<PFN_vkVoidFunction>(&fake_GetPhysicalDeviceFeatures2);
  if (PFN_vkVoidFunction f = device_hook(n)) return f;
  if (instance == VK_NULL_HANDLE) return nullptr;
  Instance* i = instance_of(key_of(instance));
  return i == nullptr ? nullptr : i->gipa(instance, name);
}

}  // namespace

FAKE_EXPORT VKAPI_ATTR VkResult VKAPI_CALL
vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface* v) {
  if (v == nullptr || v->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT)
    return VK_ERROR_INITIALIZATION_FAILED;
  if (v->loaderLayerInterfaceVersion > 2) v->loaderLayerInterfaceVersion = 2;
  v->pfnGetInstanceProcAddr = &fake_GetInstanceProcAddr;
  v->pfnGetDeviceProcAddr = &fake_GetDeviceProcAddr;
  v->pfnGetPhysicalDeviceProcAddr = nullptr;
  return VK_SUCCESS;
}
