// Counts the Vulkan objects a process has alive, by kind, and the order
// they go in: wrappers of the loader's exported vkCreate*/vkDestroy* (and
// vkAllocateMemory/vkFreeMemory) for the kinds latlab makes, and of
// vkGetInstanceProcAddr/vkGetDeviceProcAddr, so that entry points fetched
// through them (the attach path's) are counted too. Every wrapper calls the
// loader's own export (for VK_EXT_debug_utils, which the loader does not
// export, the instance's pointer), so behaviour is the loader's.
//
// Why: a driver may hold per-instance or per-device resources (NVIDIA opens
// device files and maps memory for them) that a software driver does not;
// an object never destroyed, or destroyed after its parent, costs nothing on
// lavapipe and fails much later on a GPU. The counts show it on any driver.
//
// Built twice (tests/CMakeLists.txt):
//  * libvk_leak_shim.so, for LD_PRELOAD into any binary (bench/device/vulkan_leak.sh):
//      LD_PRELOAD=build/dev/tests/leak/libvk_leak_shim.so build/dev/apps/latlab/latlab run
//    It prints at exit what was created, destroyed and left alive per kind and
//    the order faults; it drops itself from LD_PRELOAD so that child
//    processes run without it. LATLAB_VKLEAK_TRACE=1 prints a line per
//    instance and device made and destroyed (with the process's open fds,
//    memory mappings and threads at each instance), 2 per object of every
//    kind; LATLAB_VKLEAK_PIN=1 keeps the drivers (libvulkan_*, *nvidia*)
//    loaded after the first instance, so the loader does not load and
//    unload them for every instance.
//  * linked into latlab_vulkan_tests (testbed/leak/vk_leak_linked.cpp, with
//    LATLAB_VKLEAK_LINKED): the same counting, quiet but for order faults;
//    its listener (vk_leak_listener.hpp) fails a test that leaves objects
//    alive.
#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <vulkan/vulkan.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>

#include "leak/vk_leak_counts.h"

namespace {

const char* const kNames[LATLAB_VKLEAK_KINDS] = {
    "instance",   "device",    "messenger",       "surface",       "swapchain",   "memory",
    "buffer",     "image",     "image_view",      "sampler",       "render_pass", "framebuffer",
    "set_layout", "desc_pool", "pipeline_layout", "shader_module", "pipeline",    "command_pool",
    "fence",      "semaphore", "event",           "query_pool"};

struct Object {
  uint64_t parent = 0;  // instance for devices, surfaces, messengers; device for the rest; 0
  uint64_t serial = 0;  // n-th of its kind made in the process: traces of two runs compare
};

struct State {
  std::mutex mu;
  std::map<std::pair<int, uint64_t>, Object> live;  // by (kind, handle)
  std::map<uint64_t, uint64_t> instance_of_physical;
  uint64_t created[LATLAB_VKLEAK_KINDS] = {};
  uint64_t destroyed[LATLAB_VKLEAK_KINDS] = {};
  uint64_t order_faults = 0;
  int trace = 0;  // 1: instances and devices; 2: every kind
  bool pin = false;
};

State& state() {
  static State* s = [] {
    auto* st = new State();  // never destroyed: wrappers may run during exit
    const char* t = std::getenv("LATLAB_VKLEAK_TRACE");
    st->trace = t != nullptr ? std::atoi(t) : 0;
    const char* p = std::getenv("LATLAB_VKLEAK_PIN");
    st->pin = p != nullptr && std::atoi(p) != 0;
#if defined(LATLAB_VKLEAK_LINKED)
    st->trace = 0;  // the listener reports; LD_PRELOAD's copy traces
    st->pin = false;
#endif
    return st;
  }();
  return *s;
}

bool traced(const State& s, int kind) {
  return s.trace >= 2 || (s.trace == 1 && kind <= LATLAB_VKLEAK_DEVICE);
}

// Dispatchable handles are pointers, non-dispatchable ones 64-bit values.
template <class H>
uint64_t key(H h) {
  if constexpr (std::is_pointer_v<H>) {
    return reinterpret_cast<uintptr_t>(h);
  } else {
    return static_cast<uint64_t>(h);
  }
}
using ull = unsigned long long;

template <class F>
F next(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (p == nullptr) {
    std::fprintf(stderr, "vkleak: the loader exports no %s\n", name);
    std::abort();
  }
  return reinterpret_cast<F>(p);
}
#define LATLAB_NEXT(name)                           \
  static const auto real = next<PFN_##name>(#name); \
  (void)0

// Entries of a /proc/self directory (fd, task) or lines of a /proc/self file (maps).
long proc_count(const char* what, bool lines) {
  if (!lines) {
    DIR* d = opendir(what);
    if (d == nullptr) return -1;
    long n = 0;
    while (const dirent* e = readdir(d)) n += e->d_name[0] != '.' ? 1 : 0;
    closedir(d);
    return n - (std::strcmp(what, "/proc/self/fd") == 0 ? 1 : 0);  // the DIR's own fd
  }
  FILE* f = std::fopen(what, "r");
  if (f == nullptr) return -1;
  long n = 0;
  for (int c = 0; (c = std::fgetc(f)) != EOF;) n += c == '\n' ? 1 : 0;
  std::fclose(f);
  return n;
}

// Marks every loaded Vulkan driver (Mesa's libvulkan_*, NVIDIA's) as never
// unloaded, as vulkan_instance.cpp's keep_vulkan_modules_loaded does for ASan.
void pin_drivers() {
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void*) -> int {
        const char* name = info->dlpi_name;
        if (name != nullptr && (std::strstr(name, "libvulkan_") != nullptr ||
                                std::strstr(name, "nvidia") != nullptr)) {
          if (dlopen(name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != nullptr && state().trace > 0)
            std::fprintf(stderr, "vkleak: pinned %s\n", name);
        }
        return 0;
      },
      nullptr);
}

void created(int kind, uint64_t handle, uint64_t parent) {
  if (handle == 0) return;
  State& s = state();
  std::lock_guard lock(s.mu);
  const uint64_t serial = ++s.created[kind];
  s.live[{kind, handle}] = Object{parent, serial};
  if (!traced(s, kind)) return;
  if (kind == LATLAB_VKLEAK_INSTANCE) {
    std::fprintf(stderr, "vkleak: + instance#%llu (fds %ld, maps %ld, threads %ld)\n",
                 static_cast<ull>(serial), proc_count("/proc/self/fd", false),
                 proc_count("/proc/self/maps", true), proc_count("/proc/self/task", false));
  } else {
    std::fprintf(stderr, "vkleak: + %s#%llu\n", kNames[kind], static_cast<ull>(serial));
  }
}

// Forgets `handle`; a child whose parent has gone already is an order fault.
void destroyed(int kind, uint64_t handle) {
  if (handle == 0) return;
  State& s = state();
  std::lock_guard lock(s.mu);
  const auto it = s.live.find({kind, handle});
  if (it == s.live.end()) return;  // made before the shim saw it, or twice
  const Object o = it->second;
  const uint64_t parent = o.parent;
  s.live.erase(it);
  ++s.destroyed[kind];
  if (traced(s, kind))
    std::fprintf(stderr, "vkleak: - %s#%llu\n", kNames[kind], static_cast<ull>(o.serial));
  if (parent == 0) return;
  const int parent_kind = (kind == LATLAB_VKLEAK_DEVICE || kind == LATLAB_VKLEAK_MESSENGER ||
                           kind == LATLAB_VKLEAK_SURFACE)
                              ? LATLAB_VKLEAK_INSTANCE
                              : LATLAB_VKLEAK_DEVICE;
  if (s.live.count({parent_kind, parent}) == 0) {
    ++s.order_faults;
    std::fprintf(stderr, "vkleak: %s#%llu destroyed after its %s\n", kNames[kind],
                 static_cast<ull>(o.serial), kNames[parent_kind]);
  }
}

// A parent going with children alive: an order fault, with what is left.
void check_children(int parent_kind, uint64_t parent) {
  if (parent == 0) return;
  State& s = state();
  std::lock_guard lock(s.mu);
  int n[LATLAB_VKLEAK_KINDS] = {};
  int total = 0;
  uint64_t serial = 0;
  for (const auto& [k, o] : s.live) {
    const int kind = k.first;
    if (kind == parent_kind && k.second == parent) serial = o.serial;
    const uint64_t p = o.parent;
    const bool of_instance = kind == LATLAB_VKLEAK_DEVICE || kind == LATLAB_VKLEAK_MESSENGER ||
                             kind == LATLAB_VKLEAK_SURFACE;
    if (p == parent && (parent_kind == LATLAB_VKLEAK_INSTANCE) == of_instance) {
      ++n[kind];
      ++total;
    }
  }
  if (total == 0) return;
  ++s.order_faults;
  std::string what;
  for (int k = 0; k < LATLAB_VKLEAK_KINDS; ++k) {
    if (n[k] > 0) what += " " + std::string(kNames[k]) + "=" + std::to_string(n[k]);
  }
  std::fprintf(stderr, "vkleak: %s#%llu destroyed with children alive:%s\n", kNames[parent_kind],
               static_cast<ull>(serial), what.c_str());
}

// VK_EXT_debug_utils is not exported by the loader: the instance's own
// pointers, kept per instance.
struct MessengerFns {
  PFN_vkCreateDebugUtilsMessengerEXT create = nullptr;
  PFN_vkDestroyDebugUtilsMessengerEXT destroy = nullptr;
};
std::map<uint64_t, MessengerFns>& messenger_fns() {
  static auto* m = new std::map<uint64_t, MessengerFns>();
  return *m;
}

}  // namespace

extern "C" {

// ---------------------------------------------------------------------------
// Counts (vk_leak_counts.h)

__attribute__((visibility("default"))) int latlab_vkleak_live(int kind) {
  if (kind < 0 || kind >= LATLAB_VKLEAK_KINDS) return -1;
  State& s = state();
  std::lock_guard lock(s.mu);
  int n = 0;
  for (const auto& e : s.live) n += e.first.first == kind ? 1 : 0;
  return n;
}

__attribute__((visibility("default"))) const char* latlab_vkleak_kind_name(int kind) {
  return kind >= 0 && kind < LATLAB_VKLEAK_KINDS ? kNames[kind] : "?";
}

__attribute__((visibility("default"))) uint64_t latlab_vkleak_order_faults(void) {
  State& s = state();
  std::lock_guard lock(s.mu);
  return s.order_faults;
}

// ---------------------------------------------------------------------------
// Instance, physical devices, device

VKAPI_ATTR VkResult VKAPI_CALL vkCreateInstance(const VkInstanceCreateInfo* ci,
                                                const VkAllocationCallbacks* a, VkInstance* out) {
  LATLAB_NEXT(vkCreateInstance);
  const VkResult r = real(ci, a, out);
  if (r == VK_SUCCESS) {
    created(LATLAB_VKLEAK_INSTANCE, key(*out), 0);
    if (state().pin) pin_drivers();
  } else if (state().trace > 0) {
    std::fprintf(stderr,
                 "vkleak: vkCreateInstance failed: VkResult %d (fds %ld, maps %ld, threads %ld)\n",
                 static_cast<int>(r), proc_count("/proc/self/fd", false),
                 proc_count("/proc/self/maps", true), proc_count("/proc/self/task", false));
  }
  return r;
}

VKAPI_ATTR void VKAPI_CALL vkDestroyInstance(VkInstance instance, const VkAllocationCallbacks* a) {
  LATLAB_NEXT(vkDestroyInstance);
  check_children(LATLAB_VKLEAK_INSTANCE, key(instance));
  destroyed(LATLAB_VKLEAK_INSTANCE, key(instance));
  real(instance, a);
}

VKAPI_ATTR VkResult VKAPI_CALL vkEnumeratePhysicalDevices(VkInstance instance, uint32_t* n,
                                                          VkPhysicalDevice* out) {
  LATLAB_NEXT(vkEnumeratePhysicalDevices);
  const VkResult r = real(instance, n, out);
  if (out != nullptr && (r == VK_SUCCESS || r == VK_INCOMPLETE)) {
    State& s = state();
    std::lock_guard lock(s.mu);
    for (uint32_t i = 0; i < *n; ++i) s.instance_of_physical[key(out[i])] = key(instance);
  }
  return r;
}

VKAPI_ATTR VkResult VKAPI_CALL vkCreateDevice(VkPhysicalDevice pd, const VkDeviceCreateInfo* ci,
                                              const VkAllocationCallbacks* a, VkDevice* out) {
  LATLAB_NEXT(vkCreateDevice);
  const VkResult r = real(pd, ci, a, out);
  if (r == VK_SUCCESS) {
    uint64_t instance = 0;
    {
      State& s = state();
      std::lock_guard lock(s.mu);
      const auto it = s.instance_of_physical.find(key(pd));
      if (it != s.instance_of_physical.end()) instance = it->second;
    }
    created(LATLAB_VKLEAK_DEVICE, key(*out), instance);
  }
  return r;
}

VKAPI_ATTR void VKAPI_CALL vkDestroyDevice(VkDevice device, const VkAllocationCallbacks* a) {
  LATLAB_NEXT(vkDestroyDevice);
  check_children(LATLAB_VKLEAK_DEVICE, key(device));
  destroyed(LATLAB_VKLEAK_DEVICE, key(device));
  real(device, a);
}

// ---------------------------------------------------------------------------
// Device children: vkCreateX(device, info, alloc, out) / vkDestroyX(device, h, alloc)

#define LATLAB_VKLEAK_CHILD(Create, Destroy, Info, Handle, kind)                             \
  VKAPI_ATTR VkResult VKAPI_CALL Create(VkDevice d, const Info* ci,                          \
                                        const VkAllocationCallbacks* a, Handle* out) {       \
    LATLAB_NEXT(Create);                                                                     \
    const VkResult r = real(d, ci, a, out);                                                  \
    if (r == VK_SUCCESS) created(kind, key(*out), key(d));                                   \
    return r;                                                                                \
  }                                                                                          \
  VKAPI_ATTR void VKAPI_CALL Destroy(VkDevice d, Handle h, const VkAllocationCallbacks* a) { \
    LATLAB_NEXT(Destroy);                                                                    \
    destroyed(kind, key(h));                                                                 \
    real(d, h, a);                                                                           \
  }

LATLAB_VKLEAK_CHILD(vkCreateSwapchainKHR, vkDestroySwapchainKHR, VkSwapchainCreateInfoKHR,
                    VkSwapchainKHR, LATLAB_VKLEAK_SWAPCHAIN)
LATLAB_VKLEAK_CHILD(vkAllocateMemory, vkFreeMemory, VkMemoryAllocateInfo, VkDeviceMemory,
                    LATLAB_VKLEAK_MEMORY)
LATLAB_VKLEAK_CHILD(vkCreateBuffer, vkDestroyBuffer, VkBufferCreateInfo, VkBuffer,
                    LATLAB_VKLEAK_BUFFER)
LATLAB_VKLEAK_CHILD(vkCreateImage, vkDestroyImage, VkImageCreateInfo, VkImage, LATLAB_VKLEAK_IMAGE)
LATLAB_VKLEAK_CHILD(vkCreateImageView, vkDestroyImageView, VkImageViewCreateInfo, VkImageView,
                    LATLAB_VKLEAK_IMAGE_VIEW)
LATLAB_VKLEAK_CHILD(vkCreateSampler, vkDestroySampler, VkSamplerCreateInfo, VkSampler,
                    LATLAB_VKLEAK_SAMPLER)
LATLAB_VKLEAK_CHILD(vkCreateRenderPass, vkDestroyRenderPass, VkRenderPassCreateInfo, VkRenderPass,
                    LATLAB_VKLEAK_RENDER_PASS)
LATLAB_VKLEAK_CHILD(vkCreateFramebuffer, vkDestroyFramebuffer, VkFramebufferCreateInfo,
                    VkFramebuffer, LATLAB_VKLEAK_FRAMEBUFFER)
LATLAB_VKLEAK_CHILD(vkCreateDescriptorSetLayout, vkDestroyDescriptorSetLayout,
                    VkDescriptorSetLayoutCreateInfo, VkDescriptorSetLayout,
                    LATLAB_VKLEAK_SET_LAYOUT)
LATLAB_VKLEAK_CHILD(vkCreateDescriptorPool, vkDestroyDescriptorPool, VkDescriptorPoolCreateInfo,
                    VkDescriptorPool, LATLAB_VKLEAK_DESC_POOL)
LATLAB_VKLEAK_CHILD(vkCreatePipelineLayout, vkDestroyPipelineLayout, VkPipelineLayoutCreateInfo,
                    VkPipelineLayout, LATLAB_VKLEAK_PIPELINE_LAYOUT)
LATLAB_VKLEAK_CHILD(vkCreateShaderModule, vkDestroyShaderModule, VkShaderModuleCreateInfo,
                    VkShaderModule, LATLAB_VKLEAK_SHADER_MODULE)
LATLAB_VKLEAK_CHILD(vkCreateCommandPool, vkDestroyCommandPool, VkCommandPoolCreateInfo,
                    VkCommandPool, LATLAB_VKLEAK_COMMAND_POOL)
LATLAB_VKLEAK_CHILD(vkCreateFence, vkDestroyFence, VkFenceCreateInfo, VkFence, LATLAB_VKLEAK_FENCE)
LATLAB_VKLEAK_CHILD(vkCreateSemaphore, vkDestroySemaphore, VkSemaphoreCreateInfo, VkSemaphore,
                    LATLAB_VKLEAK_SEMAPHORE)
LATLAB_VKLEAK_CHILD(vkCreateEvent, vkDestroyEvent, VkEventCreateInfo, VkEvent, LATLAB_VKLEAK_EVENT)
LATLAB_VKLEAK_CHILD(vkCreateQueryPool, vkDestroyQueryPool, VkQueryPoolCreateInfo, VkQueryPool,
                    LATLAB_VKLEAK_QUERY_POOL)

#define LATLAB_VKLEAK_PIPELINES(Create, Info)                                              \
  VKAPI_ATTR VkResult VKAPI_CALL Create(VkDevice d, VkPipelineCache cache, uint32_t n,     \
                                        const Info* ci, const VkAllocationCallbacks* a,    \
                                        VkPipeline* out) {                                 \
    LATLAB_NEXT(Create);                                                                   \
    const VkResult r = real(d, cache, n, ci, a, out);                                      \
    for (uint32_t i = 0; i < n; ++i) created(LATLAB_VKLEAK_PIPELINE, key(out[i]), key(d)); \
    return r;                                                                              \
  }
LATLAB_VKLEAK_PIPELINES(vkCreateComputePipelines, VkComputePipelineCreateInfo)
LATLAB_VKLEAK_PIPELINES(vkCreateGraphicsPipelines, VkGraphicsPipelineCreateInfo)

VKAPI_ATTR void VKAPI_CALL vkDestroyPipeline(VkDevice d, VkPipeline h,
                                             const VkAllocationCallbacks* a) {
  LATLAB_NEXT(vkDestroyPipeline);
  destroyed(LATLAB_VKLEAK_PIPELINE, key(h));
  real(d, h, a);
}

// ---------------------------------------------------------------------------
// Instance children: surfaces, messengers

// The create info as an opaque pointer: no xcb header needed.
VKAPI_ATTR VkResult VKAPI_CALL vkCreateXcbSurfaceKHR(VkInstance instance, const void* ci,
                                                     const VkAllocationCallbacks* a,
                                                     VkSurfaceKHR* out) {
  using Pfn =
      VkResult(VKAPI_PTR*)(VkInstance, const void*, const VkAllocationCallbacks*, VkSurfaceKHR*);
  static const auto real = next<Pfn>("vkCreateXcbSurfaceKHR");
  const VkResult r = real(instance, ci, a, out);
  if (r == VK_SUCCESS) created(LATLAB_VKLEAK_SURFACE, key(*out), key(instance));
  return r;
}

VKAPI_ATTR void VKAPI_CALL vkDestroySurfaceKHR(VkInstance instance, VkSurfaceKHR h,
                                               const VkAllocationCallbacks* a) {
  LATLAB_NEXT(vkDestroySurfaceKHR);
  destroyed(LATLAB_VKLEAK_SURFACE, key(h));
  real(instance, h, a);
}

static MessengerFns fns_of(VkInstance instance) {
  std::lock_guard lock(state().mu);
  const auto it = messenger_fns().find(key(instance));
  return it == messenger_fns().end() ? MessengerFns{} : it->second;
}

static VKAPI_ATTR VkResult VKAPI_CALL create_messenger(VkInstance instance,
                                                       const VkDebugUtilsMessengerCreateInfoEXT* ci,
                                                       const VkAllocationCallbacks* a,
                                                       VkDebugUtilsMessengerEXT* out) {
  const MessengerFns f = fns_of(instance);
  if (f.create == nullptr) return VK_ERROR_EXTENSION_NOT_PRESENT;
  const VkResult r = f.create(instance, ci, a, out);
  if (r == VK_SUCCESS) created(LATLAB_VKLEAK_MESSENGER, key(*out), key(instance));
  return r;
}

static VKAPI_ATTR void VKAPI_CALL destroy_messenger(VkInstance instance, VkDebugUtilsMessengerEXT h,
                                                    const VkAllocationCallbacks* a) {
  const MessengerFns f = fns_of(instance);
  destroyed(LATLAB_VKLEAK_MESSENGER, key(h));
  if (f.destroy != nullptr) f.destroy(instance, h, a);
}

// ---------------------------------------------------------------------------
// Entry points fetched by name: the wrappers above where they exist.

static PFN_vkVoidFunction wrapper(const char* name) {
#define LATLAB_VKLEAK_FN(fn) \
  if (std::strcmp(name, #fn) == 0) return reinterpret_cast<PFN_vkVoidFunction>(&fn);
  LATLAB_VKLEAK_FN(vkCreateInstance)
  LATLAB_VKLEAK_FN(vkDestroyInstance)
  LATLAB_VKLEAK_FN(vkEnumeratePhysicalDevices)
  LATLAB_VKLEAK_FN(vkCreateDevice)
  LATLAB_VKLEAK_FN(vkDestroyDevice)
  LATLAB_VKLEAK_FN(vkCreateSwapchainKHR)
  LATLAB_VKLEAK_FN(vkDestroySwapchainKHR)
  LATLAB_VKLEAK_FN(vkAllocateMemory)
  LATLAB_VKLEAK_FN(vkFreeMemory)
  LATLAB_VKLEAK_FN(vkCreateBuffer)
  LATLAB_VKLEAK_FN(vkDestroyBuffer)
  LATLAB_VKLEAK_FN(vkCreateImage)
  LATLAB_VKLEAK_FN(vkDestroyImage)
  LATLAB_VKLEAK_FN(vkCreateImageView)
  LATLAB_VKLEAK_FN(vkDestroyImageView)
  LATLAB_VKLEAK_FN(vkCreateSampler)
  LATLAB_VKLEAK_FN(vkDestroySampler)
  LATLAB_VKLEAK_FN(vkCreateRenderPass)
  LATLAB_VKLEAK_FN(vkDestroyRenderPass)
  LATLAB_VKLEAK_FN(vkCreateFramebuffer)
  LATLAB_VKLEAK_FN(vkDestroyFramebuffer)
  LATLAB_VKLEAK_FN(vkCreateDescriptorSetLayout)
  LATLAB_VKLEAK_FN(vkDestroyDescriptorSetLayout)
  LATLAB_VKLEAK_FN(vkCreateDescriptorPool)
  LATLAB_VKLEAK_FN(vkDestroyDescriptorPool)
  LATLAB_VKLEAK_FN(vkCreatePipelineLayout)
  LATLAB_VKLEAK_FN(vkDestroyPipelineLayout)
  LATLAB_VKLEAK_FN(vkCreateShaderModule)
  LATLAB_VKLEAK_FN(vkDestroyShaderModule)
  LATLAB_VKLEAK_FN(vkCreateComputePipelines)
  LATLAB_VKLEAK_FN(vkCreateGraphicsPipelines)
  LATLAB_VKLEAK_FN(vkDestroyPipeline)
  LATLAB_VKLEAK_FN(vkCreateCommandPool)
  LATLAB_VKLEAK_FN(vkDestroyCommandPool)
  LATLAB_VKLEAK_FN(vkCreateFence)
  LATLAB_VKLEAK_FN(vkDestroyFence)
  LATLAB_VKLEAK_FN(vkCreateSemaphore)
  LATLAB_VKLEAK_FN(vkDestroySemaphore)
  LATLAB_VKLEAK_FN(vkCreateEvent)
  LATLAB_VKLEAK_FN(vkDestroyEvent)
  LATLAB_VKLEAK_FN(vkCreateQueryPool)
  LATLAB_VKLEAK_FN(vkDestroyQueryPool)
  LATLAB_VKLEAK_FN(vkCreateXcbSurfaceKHR)
  LATLAB_VKLEAK_FN(vkDestroySurfaceKHR)
#undef LATLAB_VKLEAK_FN
  return nullptr;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetDeviceProcAddr(VkDevice device, const char* name);

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetInstanceProcAddr(VkInstance instance,
                                                               const char* name) {
  LATLAB_NEXT(vkGetInstanceProcAddr);
  const PFN_vkVoidFunction fn = real(instance, name);
  if (fn == nullptr || name == nullptr) return fn;
  if (std::strcmp(name, "vkGetInstanceProcAddr") == 0)
    return reinterpret_cast<PFN_vkVoidFunction>(&vkGetInstanceProcAddr);
  if (std::strcmp(name, "vkGetDeviceProcAddr") == 0)
    return reinterpret_cast<PFN_vkVoidFunction>(&vkGetDeviceProcAddr);
  const bool create = std::strcmp(name, "vkCreateDebugUtilsMessengerEXT") == 0;
  if (create || std::strcmp(name, "vkDestroyDebugUtilsMessengerEXT") == 0) {
    std::lock_guard lock(state().mu);
    MessengerFns& f = messenger_fns()[key(instance)];
    if (create) {
      f.create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(fn);
      return reinterpret_cast<PFN_vkVoidFunction>(&create_messenger);
    }
    f.destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(fn);
    return reinterpret_cast<PFN_vkVoidFunction>(&destroy_messenger);
  }
  const PFN_vkVoidFunction w = wrapper(name);
  return w != nullptr ? w : fn;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetDeviceProcAddr(VkDevice device, const char* name) {
  LATLAB_NEXT(vkGetDeviceProcAddr);
  const PFN_vkVoidFunction fn = real(device, name);
  if (fn == nullptr || name == nullptr) return fn;
  if (std::strcmp(name, "vkGetDeviceProcAddr") == 0)
    return reinterpret_cast<PFN_vkVoidFunction>(&vkGetDeviceProcAddr);
  const PFN_vkVoidFunction w = wrapper(name);
  return w != nullptr ? w : fn;
}

}  // extern "C"

namespace {

// What was made, destroyed and left, per kind, at exit.
#if !defined(LATLAB_VKLEAK_LINKED)
// Children (a test's CLI runs) start without the shim: it leaves LD_PRELOAD
// (the rest of the list stays).
__attribute__((constructor)) void leave_children_alone() {
  const char* p = std::getenv("LD_PRELOAD");
  if (p == nullptr || std::strstr(p, "vk_leak_shim") == nullptr) return;
  std::string rest;
  const std::string all = p;
  for (size_t i = 0; i <= all.size();) {
    size_t j = all.find_first_of(" :", i);
    if (j == std::string::npos) j = all.size();
    const std::string entry = all.substr(i, j - i);
    if (!entry.empty() && entry.find("vk_leak_shim") == std::string::npos)
      rest += (rest.empty() ? "" : ":") + entry;
    i = j + 1;
  }
  if (rest.empty()) {
    unsetenv("LD_PRELOAD");
  } else {
    setenv("LD_PRELOAD", rest.c_str(), 1);
  }
}

__attribute__((destructor)) void report_at_exit() {
  State& s = state();
  std::lock_guard lock(s.mu);
  std::string line = "vkleak: at exit (created/destroyed/alive):";
  for (int k = 0; k < LATLAB_VKLEAK_KINDS; ++k) {
    if (s.created[k] == 0) continue;
    line += " " + std::string(kNames[k]) + "=" + std::to_string(s.created[k]) + "/" +
            std::to_string(s.destroyed[k]) + "/" + std::to_string(s.created[k] - s.destroyed[k]);
  }
  std::fprintf(stderr, "%s; order faults %llu\n", line.c_str(), static_cast<ull>(s.order_faults));
}
#endif

}  // namespace
