// VK_LAYER_LATLAB_capture's entry: the loader's interface (negotiation and
// dispatch), the instance and surface hooks, and the handle registries.
//
// VK_LAYER_LATLAB_capture: the Vulkan frame source of `latlab capture`
// (docs/capture.md). Per device it brackets each vkQueueSubmit/vkQueueSubmit2
// call with two timestamps in command buffers of its own (the first batch
// with work gets one before the program's command buffers, the last batch
// with work one after), closes a frame at each vkQueuePresentKHR, and sends
// submit and frame records (src/capture/capture_record.hpp) from a collector
// thread that reads the timestamps when they are available (never waiting
// for the GPU on a thread of the program's). GPU ticks reach the host clock
// through latlab's VulkanAttachment and ClockSync on the program's device.
//
// What the layer changes on the device: at vkCreateDevice it enables
// calibrated timestamps and host query reset where the device offers them
// (vulkan_attach_wishes), and for present_complete VK_GOOGLE_display_timing
// or else VK_KHR_present_id + VK_KHR_present_wait (plan_present); it adds
// its own command buffers to the program's batches and its own present id
// (or present time with desiredPresentTime 0: "any time") to the program's
// presents. The program's command buffers, semaphores and fences are never
// touched or replaced.
//
// present_complete: a waiter thread per swapchain (PresentWaiter) calls
// vkWaitForPresentKHR in present order and takes the host time it returned;
// with display timing, the present hook reads vkGetPastPresentationTimingGOOGLE
// (the program's thread holds the swapchain then, as that call requires).
// On a Wayland surface (vkCreateWaylandSurfaceKHR), the compositor's
// wp_presentation feedback instead: requested in the present hook, before
// the WSI's commit, dispatched by the collector (poll_feedback).
// The collector holds a frame's record until its present_complete is known
// (at most kCompleteTimeoutNs).
//
// Plumbing follows the Vulkan loader's layer interface (version 2:
// vkNegotiateLoaderLayerInterfaceVersion, per-instance and per-device
// dispatch keyed by the loader's dispatch pointer).
//
// Files: layer_device.hpp (the shared per-device data), slot_timing (the
// timestamp slots), submit_path, present_path, collector, device_setup and
// present_plan (vkCreateDevice), and this one.
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string_view>
#include <unordered_map>

#include "capture/capture_record.hpp"
#include "capture/record_sender.hpp"
#include "capture/vulkan_layer/device_setup.hpp"
#include "capture/vulkan_layer/layer_device.hpp"
#include "capture/vulkan_layer/present_path.hpp"
#include "capture/vulkan_layer/submit_path.hpp"
#include "capture/wayland_surfaces.hpp"

#define LATLAB_LAYER_EXPORT extern "C" __attribute__((visibility("default")))

namespace latlab::capture::layer {

std::shared_mutex g_mu;
std::unordered_map<void*, std::unique_ptr<InstanceData>> g_instances;
std::unordered_map<void*, std::unique_ptr<DeviceData>> g_devices;
std::mutex g_surface_mu;
std::unordered_map<uint64_t, uint64_t> g_x11_windows;

WaylandSurfaces& wayland_surfaces() {
  static auto* w = new WaylandSurfaces;
  return *w;
}

namespace {

InstanceData* instance_of(void* key) {
  std::shared_lock lock(g_mu);
  auto it = g_instances.find(key);
  return it == g_instances.end() ? nullptr : it->second.get();
}

}  // namespace

DeviceData* device_of(void* key) {
  std::shared_lock lock(g_mu);
  auto it = g_devices.find(key);
  return it == g_devices.end() ? nullptr : it->second.get();
}

QueueTable<VkQueue, QueueTiming, 256> g_queue_table;

void send_unavailable(uint64_t source, std::string_view name, std::string_view reason) {
  UnavailableRecord r;
  set_text(r.name, name);
  set_text(r.reason, reason);
  RecordSender::process().send(r, RecordType::unavailable, source);
}

namespace {

// The next layer's instance entry points the layer calls; `api`: the
// instance's version (Vulkan 1.0 has only the KHR name of Features2).
void load_instance_fns(InstanceData& d, PFN_vkGetInstanceProcAddr gipa, VkInstance instance,
                       uint32_t api) {
  d.instance = instance;
  d.next_gipa = gipa;
  d.DestroyInstance = reinterpret_cast<PFN_vkDestroyInstance>(gipa(instance, "vkDestroyInstance"));
  d.CreateDevice = reinterpret_cast<PFN_vkCreateDevice>(gipa(instance, "vkCreateDevice"));
  d.GetPhysicalDeviceQueueFamilyProperties =
      reinterpret_cast<PFN_vkGetPhysicalDeviceQueueFamilyProperties>(
          gipa(instance, "vkGetPhysicalDeviceQueueFamilyProperties"));
  d.GetPhysicalDeviceMemoryProperties = reinterpret_cast<PFN_vkGetPhysicalDeviceMemoryProperties>(
      gipa(instance, "vkGetPhysicalDeviceMemoryProperties"));
  d.GetPhysicalDeviceProperties = reinterpret_cast<PFN_vkGetPhysicalDeviceProperties>(
      gipa(instance, "vkGetPhysicalDeviceProperties"));
  d.EnumerateDeviceExtensionProperties = reinterpret_cast<PFN_vkEnumerateDeviceExtensionProperties>(
      gipa(instance, "vkEnumerateDeviceExtensionProperties"));
  d.GetPhysicalDeviceFeatures2 = reinterpret_cast<PFN_vkGetPhysicalDeviceFeatures2>(
      gipa(instance, VK_API_VERSION_MINOR(api) >= 1 ? "vkGetPhysicalDeviceFeatures2"
                                                    : "vkGetPhysicalDeviceFeatures2KHR"));
  d.CreateXcbSurfaceKHR = gipa(instance, "vkCreateXcbSurfaceKHR");
  d.CreateXlibSurfaceKHR = gipa(instance, "vkCreateXlibSurfaceKHR");
  d.CreateWaylandSurfaceKHR = gipa(instance, "vkCreateWaylandSurfaceKHR");
  d.DestroySurfaceKHR =
      reinterpret_cast<PFN_vkDestroySurfaceKHR>(gipa(instance, "vkDestroySurfaceKHR"));
}

VKAPI_ATTR VkResult VKAPI_CALL layer_CreateInstance(const VkInstanceCreateInfo* info,
                                                    const VkAllocationCallbacks* alloc,
                                                    VkInstance* out) {
  auto* link = static_cast<VkLayerInstanceCreateInfo*>(const_cast<void*>(info->pNext));
  while (link != nullptr && !(link->sType == VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO &&
                              link->function == VK_LAYER_LINK_INFO)) {
    link = static_cast<VkLayerInstanceCreateInfo*>(const_cast<void*>(link->pNext));
  }
  if (link == nullptr) return VK_ERROR_INITIALIZATION_FAILED;
  PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  link->u.pLayerInfo = link->u.pLayerInfo->pNext;
  auto create = reinterpret_cast<PFN_vkCreateInstance>(gipa(VK_NULL_HANDLE, "vkCreateInstance"));
  // latlab's attach needs Vulkan 1.1 (properties2, its probe): a program
  // asking for 1.0 gets a 1.1 instance, which runs every 1.0 program the
  // same (1.1 changes behaviour only through what a program enables). The
  // program's request is made as is when that fails, and without a capture.
  uint32_t api = info->pApplicationInfo != nullptr && info->pApplicationInfo->apiVersion != 0
                     ? info->pApplicationInfo->apiVersion
                     : VK_API_VERSION_1_0;
  VkResult r = VK_ERROR_INITIALIZATION_FAILED;
  if (RecordSender::process().active() && VK_API_VERSION_MINOR(api) == 0 &&
      VK_API_VERSION_MAJOR(api) == 1) {
    VkApplicationInfo app{};
    if (info->pApplicationInfo != nullptr) app = *info->pApplicationInfo;
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo raised = *info;
    raised.pApplicationInfo = &app;
    r = create(&raised, alloc, out);
    if (r == VK_SUCCESS) api = VK_API_VERSION_1_1;
  }
  if (r != VK_SUCCESS) r = create(info, alloc, out);
  if (r != VK_SUCCESS) return r;
  auto data = std::make_unique<InstanceData>();
  load_instance_fns(*data, gipa, *out, api);
  data->api_version = api;
  std::unique_lock lock(g_mu);
  g_instances[dispatch_key(*out)] = std::move(data);
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL layer_DestroyInstance(VkInstance instance,
                                                 const VkAllocationCallbacks* alloc) {
  std::unique_ptr<InstanceData> data;
  {
    std::unique_lock lock(g_mu);
    auto it = g_instances.find(dispatch_key(instance));
    if (it == g_instances.end()) return;
    data = std::move(it->second);
    g_instances.erase(it);
  }
  data->DestroyInstance(instance, alloc);
}

// X11 surfaces: the window each one shows (the layer reads only the window
// member, so it declares the two create-info layouts itself and needs no
// X11 headers; vulkan_xcb.h / vulkan_xlib.h define the same).
struct XcbSurfaceInfo {
  VkStructureType sType;
  const void* pNext;
  VkFlags flags;
  void* connection;
  uint32_t window;  // xcb_window_t
};
struct XlibSurfaceInfo {
  VkStructureType sType;
  const void* pNext;
  VkFlags flags;
  void* dpy;
  unsigned long window;  // Window (an XID)
};
template <class Info>
using CreateSurfaceFn = VkResult(VKAPI_PTR*)(VkInstance, const Info*, const VkAllocationCallbacks*,
                                             VkSurfaceKHR*);

template <class Info>
VkResult create_x11_surface(VkInstance instance, const Info* info,
                            const VkAllocationCallbacks* alloc, VkSurfaceKHR* out,
                            PFN_vkVoidFunction next_fn) {
  if (next_fn == nullptr) return VK_ERROR_EXTENSION_NOT_PRESENT;
  auto next = reinterpret_cast<CreateSurfaceFn<Info>>(next_fn);
  const VkResult r = next(instance, info, alloc, out);
  if (r == VK_SUCCESS && RecordSender::process().active()) {
    std::lock_guard lock(g_surface_mu);
    g_x11_windows[reinterpret_cast<uint64_t>(*out)] = info->window;
  }
  return r;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_CreateXcbSurfaceKHR(VkInstance instance,
                                                         const XcbSurfaceInfo* info,
                                                         const VkAllocationCallbacks* alloc,
                                                         VkSurfaceKHR* out) {
  InstanceData* inst = instance_of(dispatch_key(instance));
  return create_x11_surface(instance, info, alloc, out, inst->CreateXcbSurfaceKHR);
}

VKAPI_ATTR VkResult VKAPI_CALL layer_CreateXlibSurfaceKHR(VkInstance instance,
                                                          const XlibSurfaceInfo* info,
                                                          const VkAllocationCallbacks* alloc,
                                                          VkSurfaceKHR* out) {
  InstanceData* inst = instance_of(dispatch_key(instance));
  return create_x11_surface(instance, info, alloc, out, inst->CreateXlibSurfaceKHR);
}

// VkWaylandSurfaceCreateInfoKHR, declared here as the X11 ones are
// (vulkan_wayland.h needs Wayland's headers).
struct WaylandSurfaceInfo {
  VkStructureType sType;
  const void* pNext;
  VkFlags flags;
  void* display;  // wl_display*
  void* surface;  // wl_surface*
};

// Remembers the surface's wl_surface and binds its display's
// wp_presentation (round trips to the compositor, on the layer's queue).
VKAPI_ATTR VkResult VKAPI_CALL layer_CreateWaylandSurfaceKHR(VkInstance instance,
                                                             const WaylandSurfaceInfo* info,
                                                             const VkAllocationCallbacks* alloc,
                                                             VkSurfaceKHR* out) {
  InstanceData* inst = instance_of(dispatch_key(instance));
  auto next = reinterpret_cast<CreateSurfaceFn<WaylandSurfaceInfo>>(inst->CreateWaylandSurfaceKHR);
  const VkResult r = next(instance, info, alloc, out);
  if (r == VK_SUCCESS && RecordSender::process().active())
    wayland_surfaces().add(reinterpret_cast<uint64_t>(*out), info->display, info->surface);
  return r;
}

VKAPI_ATTR void VKAPI_CALL layer_DestroySurfaceKHR(VkInstance instance, VkSurfaceKHR surface,
                                                   const VkAllocationCallbacks* alloc) {
  {
    std::lock_guard lock(g_surface_mu);
    g_x11_windows.erase(reinterpret_cast<uint64_t>(surface));
  }
  wayland_surfaces().remove(reinterpret_cast<uint64_t>(surface));
  InstanceData* inst = instance_of(dispatch_key(instance));
  if (inst->DestroySurfaceKHR != nullptr) inst->DestroySurfaceKHR(instance, surface, alloc);
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL layer_GetDeviceProcAddr(VkDevice device, const char* name);

// The device-level functions the layer wraps, and the next layer's entry
// each needs (a wrapper is given out only where the next one exists).
PFN_vkVoidFunction device_intercept(std::string_view n) {
#define LATLAB_HOOK(name) \
  if (n == "vk" #name) return reinterpret_cast<PFN_vkVoidFunction>(&layer_##name)
  LATLAB_HOOK(GetDeviceProcAddr);
  LATLAB_HOOK(DestroyDevice);
  LATLAB_HOOK(GetDeviceQueue);
  LATLAB_HOOK(GetDeviceQueue2);
  LATLAB_HOOK(QueueSubmit);
  LATLAB_HOOK(QueueSubmit2);
  LATLAB_HOOK(QueueSubmit2KHR);
  LATLAB_HOOK(QueuePresentKHR);
  LATLAB_HOOK(AcquireNextImageKHR);
  LATLAB_HOOK(AcquireNextImage2KHR);
  LATLAB_HOOK(CreateSwapchainKHR);
  LATLAB_HOOK(DestroySwapchainKHR);
#undef LATLAB_HOOK
  return nullptr;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL layer_GetDeviceProcAddr(VkDevice device,
                                                                 const char* name) {
  DeviceData* d = device_of(dispatch_key(device));
  if (d == nullptr) return nullptr;
  PFN_vkVoidFunction next = d->fn.GetDeviceProcAddr(device, name);
  if (next == nullptr) return nullptr;
  if (PFN_vkVoidFunction f = device_intercept(name)) return f;
  return next;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL layer_GetInstanceProcAddr(VkInstance instance,
                                                                   const char* name) {
  const std::string_view n = name;
  if (n == "vkGetInstanceProcAddr")
    return reinterpret_cast<PFN_vkVoidFunction>(&layer_GetInstanceProcAddr);
  if (n == "vkCreateInstance") return reinterpret_cast<PFN_vkVoidFunction>(&layer_CreateInstance);
  if (n == "vkDestroyInstance") return reinterpret_cast<PFN_vkVoidFunction>(&layer_DestroyInstance);
  if (n == "vkCreateDevice") return reinterpret_cast<PFN_vkVoidFunction>(&layer_CreateDevice);
  if (instance == VK_NULL_HANDLE) return nullptr;
  InstanceData* inst = instance_of(dispatch_key(instance));
  if (inst == nullptr) return nullptr;
  PFN_vkVoidFunction next = inst->next_gipa(instance, name);
  if (next == nullptr) return nullptr;
  if (n == "vkCreateXcbSurfaceKHR" && inst->CreateXcbSurfaceKHR != nullptr)
    return reinterpret_cast<PFN_vkVoidFunction>(&layer_CreateXcbSurfaceKHR);
  if (n == "vkCreateXlibSurfaceKHR" && inst->CreateXlibSurfaceKHR != nullptr)
    return reinterpret_cast<PFN_vkVoidFunction>(&layer_CreateXlibSurfaceKHR);
  if (n == "vkCreateWaylandSurfaceKHR" && inst->CreateWaylandSurfaceKHR != nullptr)
    return reinterpret_cast<PFN_vkVoidFunction>(&layer_CreateWaylandSurfaceKHR);
  if (n == "vkDestroySurfaceKHR" && inst->DestroySurfaceKHR != nullptr)
    return reinterpret_cast<PFN_vkVoidFunction>(&layer_DestroySurfaceKHR);
  if (PFN_vkVoidFunction f = device_intercept(n)) return f;
  return next;
}

}  // namespace
}  // namespace latlab::capture::layer

LATLAB_LAYER_EXPORT VKAPI_ATTR VkResult VKAPI_CALL
vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface* v) {
  if (v == nullptr || v->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT)
    return VK_ERROR_INITIALIZATION_FAILED;
  if (v->loaderLayerInterfaceVersion > 2) v->loaderLayerInterfaceVersion = 2;
  if (v->loaderLayerInterfaceVersion >= 2) {
    v->pfnGetInstanceProcAddr = &latlab::capture::layer::layer_GetInstanceProcAddr;
    v->pfnGetDeviceProcAddr = &latlab::capture::layer::layer_GetDeviceProcAddr;
    v->pfnGetPhysicalDeviceProcAddr = nullptr;
  }
  return VK_SUCCESS;
}
