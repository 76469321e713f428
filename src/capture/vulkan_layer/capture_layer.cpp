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
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "capture/capture_record.hpp"
#include "capture/record_sender.hpp"
#include "capture/span_budget.hpp"
#include "capture/vulkan_layer/bracket_probe.hpp"
#include "capture/vulkan_layer/collector.hpp"
#include "capture/vulkan_layer/layer_device.hpp"
#include "capture/vulkan_layer/present_path.hpp"
#include "capture/vulkan_layer/slot_timing.hpp"
#include "capture/vulkan_layer/submit_path.hpp"
#include "capture/wayland_surfaces.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/version.hpp"
#include "latlab/vulkan.hpp"

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

constexpr const char* kLayerName = "VK_LAYER_LATLAB_capture";
// Rounds of the bracketing probe per queue (each kind), at vkCreateDevice.
constexpr uint32_t kProbeRounds = 16;

// ---------------------------------------------------------------------------
// Device set-up

// How present_complete will be learnt on a device, and what that adds to
// the program's vkCreateDevice.
struct PresentPlan {
  PresentMethod method = PresentMethod::none;
  bool layer_ids = false;   // the layer chains VkPresentIdKHR itself
  bool chain_id = false;    // add VkPhysicalDevicePresentIdFeaturesKHR
  bool chain_wait = false;  // add VkPhysicalDevicePresentWaitFeaturesKHR
  std::string why_not;      // method none: why (the Unavailable record)
  std::string note;         // something offered and left unused
};

// The extensions the device offers; empty when they cannot be listed.
std::vector<VkExtensionProperties> offered_extensions(const InstanceData& inst,
                                                      VkPhysicalDevice physical) {
  uint32_t n = 0;
  std::vector<VkExtensionProperties> props;
  if (inst.EnumerateDeviceExtensionProperties != nullptr &&
      inst.EnumerateDeviceExtensionProperties(physical, nullptr, &n, nullptr) == VK_SUCCESS) {
    props.resize(n);
    if (inst.EnumerateDeviceExtensionProperties(physical, nullptr, &n, props.data()) < 0) n = 0;
    props.resize(n);
  }
  return props;
}

bool is_offered(const std::vector<VkExtensionProperties>& props, std::string_view e) {
  return std::any_of(props.begin(), props.end(),
                     [&](const VkExtensionProperties& p) { return e == p.extensionName; });
}

bool is_asked(const VkDeviceCreateInfo& info, std::string_view e) {
  return std::any_of(info.ppEnabledExtensionNames,
                     info.ppEnabledExtensionNames + info.enabledExtensionCount,
                     [&](const char* x) { return e == x; });
}

// Appends `e` to `exts` unless it is there already.
void add_extension(std::vector<const char*>& exts, const char* e) {
  if (std::none_of(exts.begin(), exts.end(), [&](const char* x) { return std::strcmp(x, e) == 0; }))
    exts.push_back(e);
}

// The present extensions the driver lacks, comma-separated (names exactly
// what is missing).
std::string lacked_present_extensions(const std::vector<VkExtensionProperties>& props) {
  std::string lacks;
  for (const char* e : {VK_GOOGLE_DISPLAY_TIMING_EXTENSION_NAME, VK_KHR_PRESENT_ID_EXTENSION_NAME,
                        VK_KHR_PRESENT_WAIT_EXTENSION_NAME}) {
    if (!is_offered(props, e)) lacks += (lacks.empty() ? "" : ", ") + std::string(e);
  }
  return lacks;
}

// Why the driver's presentId / presentWait features cannot be used; empty
// when both are on.
std::string present_wait_features_off(const InstanceData& inst, VkPhysicalDevice physical) {
  if (inst.GetPhysicalDeviceFeatures2 == nullptr) {
    return "vkGetPhysicalDeviceFeatures2 is missing (a Vulkan 1.0 instance): the present "
           "id and wait features cannot be checked";
  }
  VkPhysicalDevicePresentWaitFeaturesKHR wait_f{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_WAIT_FEATURES_KHR, nullptr, VK_FALSE};
  VkPhysicalDevicePresentIdFeaturesKHR id_f{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_ID_FEATURES_KHR, &wait_f, VK_FALSE};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &id_f, {}};
  inst.GetPhysicalDeviceFeatures2(physical, &f2);
  if (!id_f.presentId || !wait_f.presentWait) {
    return std::string(
               "the driver lists VK_KHR_present_id and VK_KHR_present_wait but "
               "reports the features presentId ") +
           (id_f.presentId ? "on" : "off") + ", presentWait " + (wait_f.presentWait ? "on" : "off");
  }
  return {};
}

// Plans VK_KHR_present_id + VK_KHR_present_wait on a driver that offers
// both; `google` ends every reason it gives.
void plan_present_wait(const InstanceData& inst, VkPhysicalDevice physical,
                       const VkDeviceCreateInfo& info, std::vector<const char*>& exts,
                       const std::string& google, PresentPlan& plan) {
  if (std::string off = present_wait_features_off(inst, physical); !off.empty()) {
    plan.why_not = off + google;
    return;
  }
  // The program's own feature structures are never rewritten: one that
  // turns a feature off leaves present_complete unavailable.
  const auto* app_id = chain_find<VkPhysicalDevicePresentIdFeaturesKHR>(
      info.pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_ID_FEATURES_KHR);
  const auto* app_wait = chain_find<VkPhysicalDevicePresentWaitFeaturesKHR>(
      info.pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_WAIT_FEATURES_KHR);
  if ((app_id != nullptr && !app_id->presentId) ||
      (app_wait != nullptr && !app_wait->presentWait)) {
    plan.why_not =
        "the program chains its own present id / present wait feature structure with "
        "the feature off (the layer does not rewrite the program's structures)" +
        google;
    return;
  }
  plan.chain_id = app_id == nullptr;
  plan.chain_wait = app_wait == nullptr;
  // A program with the presentId feature on tags its presents itself: the
  // layer reads its ids and never mixes its own in.
  plan.layer_ids = app_id == nullptr;
  add_extension(exts, VK_KHR_PRESENT_ID_EXTENSION_NAME);
  add_extension(exts, VK_KHR_PRESENT_WAIT_EXTENSION_NAME);
  plan.method = PresentMethod::present_wait;
}

// Prefers VK_GOOGLE_display_timing (the display's own time) and falls back
// to VK_KHR_present_id + VK_KHR_present_wait (the host time the wait
// returned); extensions it needs go on `exts`.
PresentPlan plan_present(const InstanceData& inst, VkPhysicalDevice physical,
                         const VkDeviceCreateInfo& info, std::vector<const char*>& exts) {
  PresentPlan plan;
  const std::vector<VkExtensionProperties> props = offered_extensions(inst, physical);
  if (!is_asked(info, VK_KHR_SWAPCHAIN_EXTENSION_NAME)) {
    plan.why_not =
        "the program did not enable VK_KHR_swapchain on this device: it presents nothing";
    return plan;
  }
  if (is_offered(props, "VK_EXT_present_timing")) {
    plan.note =
        "the device offers VK_EXT_present_timing; this layer, built with Vulkan headers 1.3." +
        std::to_string(VK_HEADER_VERSION) + ", does not use it";
  }
  std::string google;
  if (is_offered(props, VK_GOOGLE_DISPLAY_TIMING_EXTENSION_NAME)) {
    if (!is_asked(info, VK_GOOGLE_DISPLAY_TIMING_EXTENSION_NAME)) {
      add_extension(exts, VK_GOOGLE_DISPLAY_TIMING_EXTENSION_NAME);
      plan.method = PresentMethod::display_timing;
      return plan;
    }
    // Each past timing is returned once, to whoever asks first.
    google =
        "; VK_GOOGLE_display_timing is the program's own (the layer leaves its past timings to it)";
  }
  if (!is_offered(props, VK_KHR_PRESENT_ID_EXTENSION_NAME) ||
      !is_offered(props, VK_KHR_PRESENT_WAIT_EXTENSION_NAME)) {
    plan.why_not = "the driver lacks " + lacked_present_extensions(props) +
                   " (present_complete needs VK_GOOGLE_display_timing, or VK_KHR_present_id with "
                   "VK_KHR_present_wait)" +
                   google;
    return plan;
  }
  plan_present_wait(inst, physical, info, exts, google, plan);
  return plan;
}

// ---------------------------------------------------------------------------
// Intercepted entry points

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

void start_capture(DeviceData& d, const VkDeviceCreateInfo& info, bool host_reset, bool calibrated,
                   PresentMethod present) {
  VulkanAttachDesc ad;
  ad.instance = d.instance->instance;
  ad.physical_device = d.physical;
  ad.device = d.device;
  ad.api_version = d.instance->api_version;
  ad.host_query_reset = host_reset;
  ad.calibrated_timestamps = calibrated;
  ad.get_instance_proc_addr = d.instance->next_gipa;
  ad.get_device_proc_addr = d.fn.GetDeviceProcAddr;
  ad.queue_family = info.queueCreateInfoCount > 0 ? info.pQueueCreateInfos[0].queueFamilyIndex : 0;
  HelloRecord hello;
  hello.api = SourceApi::vulkan;
  set_text(hello.source_name, std::string(kLayerName) + " " + kVersion);
  set_text(hello.present_method, present_method_name(present));
  auto att = VulkanAttachment::create(ad);
  if (!att) {
    RecordSender::process().send(hello, RecordType::hello, d.source);
    send_unavailable(d.source, "gpu_span", "latlab could not attach: " + att.error().message);
    return;
  }
  d.attachment = std::move(*att);
  d.clock = start_clock_sync(*d.attachment);
  if (d.clock->available()) d.mapper = d.clock->mapper();
  set_text(hello.device_name, d.attachment->device_name());
  set_text(hello.clock_method, d.clock->available() ? d.clock->method() : std::string());
  RecordSender::process().send(hello, RecordType::hello, d.source);
  // Host query reset is the attach path's concern, not the layer's: the
  // layer resets its queries on the queue (docs/capture.md).
  for (const auto& m : d.attachment->capabilities().missing) {
    if (m.name != "host_query_reset") send_unavailable(d.source, "device:" + m.name, m.reason);
  }
}

// What one timed submission costs a program that waits for it: the driver's
// CPU for the layer's command buffers and their device time (0: unknown).
int64_t span_cost_ns(const BracketRecord& r) {
  if (r.before_p50_ns == kNoTime || r.after_p50_ns == kNoTime) return 0;
  int64_t cpu = 0;
  if (r.cpu_plain_p50_ns != kNoTime && r.cpu_bracketed_p50_ns != kNoTime)
    cpu = std::max<int64_t>(0, r.cpu_bracketed_p50_ns - r.cpu_plain_p50_ns);
  return cpu + std::max<int64_t>(0, r.before_p50_ns) + std::max<int64_t>(0, r.after_p50_ns);
}

// The budget of the device's spans (span_budget.hpp), from the probe's cost.
void plan_span_budget(DeviceData& d, int64_t span_cost) {
  const std::optional<double> share = span_budget_share(std::getenv(kGpuSpansEnv));
  if (!share) return;
  if (span_cost <= 0) {
    send_unavailable(d.source, "gpu_span_budget",
                     "the bracketing probe gave no cost to budget with: every submission is timed");
    return;
  }
  d.budget = std::make_unique<SpanBudget>(*share, span_cost, host_now_ns());
}

// The bracketing probe (bracket_probe.hpp) on each queue the program
// asked for whose family the layer times; the program has no queue yet.
void probe_queues(DeviceData& d, const VkDeviceCreateInfo& info) {
  const DeviceFns& f = d.fn;
  ProbeFns pf{f.GetDeviceQueue,     f.QueueSubmit,        f.CreateFence,
              f.DestroyFence,       f.WaitForFences,      f.ResetFences,
              f.CreateQueryPool,    f.DestroyQueryPool,   f.GetQueryPoolResults,
              f.CreateCommandPool,  f.DestroyCommandPool, f.AllocateCommandBuffers,
              f.BeginCommandBuffer, f.EndCommandBuffer,   f.CmdWriteTimestamp,
              f.CmdResetQueryPool,  d.set_loader_data,    &f.results};
  pf.copy_waits = !d.late_copies;
  const TicksToNs to_ns = [&d](uint64_t ticks) -> std::optional<int64_t> {
    auto m = d.mapper(ticks);
    return m ? std::optional<int64_t>(m->host_ns) : std::nullopt;
  };
  int64_t span_cost = 0;  // the dearest queue's
  bool probed = false;    // a queue that can time was probed
  for (uint32_t i = 0; i < info.queueCreateInfoCount; ++i) {
    const VkDeviceQueueCreateInfo& q = info.pQueueCreateInfos[i];
    auto it = d.families.find(q.queueFamilyIndex);
    if (it == d.families.end() || !it->second->can_time || q.flags != 0) continue;
    for (uint32_t index = 0; index < q.queueCount; ++index) {
      BracketRecord r;
      probed = true;
      if (auto why =
              probe_bracketing(d.device, pf, q.queueFamilyIndex, index, kProbeRounds, to_ns, r)) {
        send_unavailable(d.source, "bracketing",
                         "queue family " + std::to_string(q.queueFamilyIndex) + " index " +
                             std::to_string(index) + ": " + *why);
      } else {
        RecordSender::process().send(r, RecordType::bracket, d.source);
        span_cost = std::max(span_cost, span_cost_ns(r));
      }
    }
  }
  // Without a queue that can time there is no span to budget.
  if (probed) plan_span_budget(d, span_cost);
}

// The loader's entries in a vkCreateDevice pNext chain: the first layer
// link (null when absent) and the loader-data callback.
struct DeviceChainLinks {
  VkLayerDeviceCreateInfo* layer_link = nullptr;
  PFN_vkSetDeviceLoaderData set_loader_data = nullptr;
};

DeviceChainLinks find_device_chain_links(const VkDeviceCreateInfo* info) {
  DeviceChainLinks links;
  auto* link = static_cast<VkLayerDeviceCreateInfo*>(const_cast<void*>(info->pNext));
  for (auto* s = link; s != nullptr;
       s = static_cast<VkLayerDeviceCreateInfo*>(const_cast<void*>(s->pNext))) {
    if (s->sType != VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO) continue;
    if (s->function == VK_LAYER_LINK_INFO && links.layer_link == nullptr) links.layer_link = s;
    if (s->function == VK_LOADER_DATA_CALLBACK) links.set_loader_data = s->u.pfnSetDeviceLoaderData;
  }
  return links;
}

// The instance whose next vkGetInstanceProcAddr is `gipa`; else the last
// one registered; null when there is none.
InstanceData* instance_for(PFN_vkGetInstanceProcAddr gipa) {
  InstanceData* inst = nullptr;
  std::shared_lock lock(g_mu);
  for (auto& [k, v] : g_instances) {
    if (v->next_gipa == gipa || inst == nullptr) inst = v.get();
  }
  return inst;
}

// Adds the extensions latlab's timing wishes for to `exts`.
void add_attach_wishes(const InstanceData& inst, VkPhysicalDevice physical,
                       PFN_vkGetInstanceProcAddr gipa, std::vector<const char*>& exts) {
  VulkanAttachDesc wd;
  wd.instance = inst.instance;
  wd.physical_device = physical;
  wd.api_version = inst.api_version;
  wd.get_instance_proc_addr = gipa;
  // Only calibrated timestamps: the layer resets its queries in its own
  // command buffers, so the program's query reset features stay its own.
  if (auto wishes = vulkan_attach_wishes(wd)) {
    for (const char* e : wishes->extensions) {
      if (std::string_view(e) == VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME) continue;
      add_extension(exts, e);
    }
  }
}

void load_device_fns(DeviceFns& f, PFN_vkGetDeviceProcAddr gdpa, VkDevice device) {
  f.GetDeviceProcAddr = gdpa;
#define LATLAB_LOAD(name) f.name = load<PFN_vk##name>(gdpa, device, "vk" #name)
  LATLAB_LOAD(DestroyDevice);
  LATLAB_LOAD(GetDeviceQueue);
  LATLAB_LOAD(GetDeviceQueue2);
  LATLAB_LOAD(QueueSubmit);
  LATLAB_LOAD(QueueSubmit2);
  LATLAB_LOAD(QueuePresentKHR);
  LATLAB_LOAD(AcquireNextImageKHR);
  LATLAB_LOAD(AcquireNextImage2KHR);
  LATLAB_LOAD(CreateSwapchainKHR);
  LATLAB_LOAD(DestroySwapchainKHR);
  LATLAB_LOAD(CreateQueryPool);
  LATLAB_LOAD(DestroyQueryPool);
  LATLAB_LOAD(GetQueryPoolResults);
  LATLAB_LOAD(CreateCommandPool);
  LATLAB_LOAD(DestroyCommandPool);
  LATLAB_LOAD(AllocateCommandBuffers);
  LATLAB_LOAD(BeginCommandBuffer);
  LATLAB_LOAD(EndCommandBuffer);
  LATLAB_LOAD(CmdWriteTimestamp);
  LATLAB_LOAD(CmdResetQueryPool);
  LATLAB_LOAD(CreateFence);
  LATLAB_LOAD(DestroyFence);
  LATLAB_LOAD(WaitForFences);
  LATLAB_LOAD(ResetFences);
#undef LATLAB_LOAD
#define LATLAB_LOAD(name) f.results.name = load<PFN_vk##name>(gdpa, device, "vk" #name)
  LATLAB_LOAD(CreateBuffer);
  LATLAB_LOAD(DestroyBuffer);
  LATLAB_LOAD(GetBufferMemoryRequirements);
  LATLAB_LOAD(AllocateMemory);
  LATLAB_LOAD(FreeMemory);
  LATLAB_LOAD(BindBufferMemory);
  LATLAB_LOAD(MapMemory);
  LATLAB_LOAD(CmdCopyQueryPoolResults);
#undef LATLAB_LOAD
  f.QueueSubmit2KHR = load<PFN_vkQueueSubmit2>(gdpa, device, "vkQueueSubmit2KHR");
}

// Loads what the planned present method calls; a missing entry point
// leaves present_complete unavailable.
void load_present_fns(DeviceFns& f, PFN_vkGetDeviceProcAddr gdpa, VkDevice device,
                      PresentPlan& present) {
  if (present.method == PresentMethod::present_wait) {
    f.WaitForPresentKHR = load<PFN_vkWaitForPresentKHR>(gdpa, device, "vkWaitForPresentKHR");
    if (f.WaitForPresentKHR == nullptr) {
      present.method = PresentMethod::none;
      present.why_not = "the driver gave no vkWaitForPresentKHR";
    }
  } else if (present.method == PresentMethod::display_timing) {
    f.GetPastPresentationTimingGOOGLE = load<PFN_vkGetPastPresentationTimingGOOGLE>(
        gdpa, device, "vkGetPastPresentationTimingGOOGLE");
    if (f.GetPastPresentationTimingGOOGLE == nullptr) {
      present.method = PresentMethod::none;
      present.why_not = "the driver gave no vkGetPastPresentationTimingGOOGLE";
    }
  }
}

// Whether the end command buffers copy late (kLateCopySlots): on a CPU
// device; LATLAB_CAPTURE_LATE_COPIES=0 or 1 decides instead (to compare
// the two ways on one device).
bool wants_late_copies(const InstanceData& inst, VkPhysicalDevice physical) {
  if (const char* e = std::getenv("LATLAB_CAPTURE_LATE_COPIES"); e != nullptr && *e != '\0')
    return std::string_view(e) != "0";
  if (inst.GetPhysicalDeviceProperties == nullptr) return false;
  VkPhysicalDeviceProperties props{};
  inst.GetPhysicalDeviceProperties(physical, &props);
  return props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
}

// Starts capture on a device the layer is active on, created with `info`.
void activate_device(DeviceData& d, const InstanceData& inst, VkPhysicalDevice physical,
                     const VkDeviceCreateInfo& info, const PresentPlan& present,
                     const std::string& not_enabled) {
  d.active = true;
  d.present_method = present.method;
  d.layer_present_ids = present.layer_ids;
  VulkanAttachDesc enabled;
  vulkan_attach_enabled(info, enabled);
  start_capture(d, info, enabled.host_query_reset, enabled.calibrated_timestamps, present.method);
  if (!not_enabled.empty()) send_unavailable(d.source, "layer_additions", not_enabled);
  d.late_copies = wants_late_copies(inst, physical);
  create_families(d, inst, physical, info);
  probe_queues(d, info);
  // present_complete's Unavailable record waits for a present without a way
  // (a swapchain on a Wayland surface may have the compositor's).
  d.no_present_method = present.why_not;
  if (!present.note.empty()) send_unavailable(d.source, "present_timing", present.note);
  d.collector = std::thread(collector_main, &d);
}

// Puts the present features the plan adds ahead of the program's chain.
void chain_present_features(const PresentPlan& present, VkDeviceCreateInfo& info,
                            VkPhysicalDevicePresentIdFeaturesKHR& id_features,
                            VkPhysicalDevicePresentWaitFeaturesKHR& wait_features) {
  if (present.chain_id) {
    id_features.pNext = const_cast<void*>(info.pNext);
    info.pNext = &id_features;
  }
  if (present.chain_wait) {
    wait_features.pNext = const_cast<void*>(info.pNext);
    info.pNext = &wait_features;
  }
}

std::unique_ptr<DeviceData> make_device_data(VkDevice device, VkPhysicalDevice physical,
                                             InstanceData* inst,
                                             PFN_vkSetDeviceLoaderData set_loader_data) {
  auto d = std::make_unique<DeviceData>();
  d->device = device;
  d->physical = physical;
  d->instance = inst;
  d->set_loader_data = set_loader_data;
  d->source = reinterpret_cast<uint64_t>(device);
  return d;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_CreateDevice(VkPhysicalDevice physical,
                                                  const VkDeviceCreateInfo* info,
                                                  const VkAllocationCallbacks* alloc,
                                                  VkDevice* out) {
  const DeviceChainLinks links = find_device_chain_links(info);
  VkLayerDeviceCreateInfo* chain_link = links.layer_link;
  if (chain_link == nullptr) return VK_ERROR_INITIALIZATION_FAILED;
  PFN_vkGetInstanceProcAddr gipa = chain_link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  PFN_vkGetDeviceProcAddr gdpa = chain_link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
  chain_link->u.pLayerInfo = chain_link->u.pLayerInfo->pNext;
  InstanceData* inst = instance_for(gipa);
  const bool active = RecordSender::process().active() && inst != nullptr;
  // What latlab would like enabled, added to the program's own request.
  VkDeviceCreateInfo mine = *info;
  std::vector<const char*> exts(info->ppEnabledExtensionNames,
                                info->ppEnabledExtensionNames + info->enabledExtensionCount);
  VkPhysicalDevicePresentIdFeaturesKHR id_features{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_ID_FEATURES_KHR, nullptr, VK_TRUE};
  VkPhysicalDevicePresentWaitFeaturesKHR wait_features{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_WAIT_FEATURES_KHR, nullptr, VK_TRUE};
  std::string not_enabled;
  PresentPlan present;
  if (active) {
    add_attach_wishes(*inst, physical, gipa, exts);
    present = plan_present(*inst, physical, *info, exts);
    chain_present_features(present, mine, id_features, wait_features);
    mine.enabledExtensionCount = static_cast<uint32_t>(exts.size());
    mine.ppEnabledExtensionNames = exts.data();
  }
  auto create = reinterpret_cast<PFN_vkCreateDevice>(
      gipa(inst ? inst->instance : VK_NULL_HANDLE, "vkCreateDevice"));
  VkResult r = create(physical, active ? &mine : info, alloc, out);
  if (r != VK_SUCCESS && active) {
    // The additions must never cost the program its device.
    r = create(physical, info, alloc, out);
    not_enabled = "vkCreateDevice with the layer's additions failed; created as asked";
    mine = *info;
    if (present.method != PresentMethod::none) {
      present.method = PresentMethod::none;
      present.why_not = "vkCreateDevice with the present extensions the layer added failed";
    }
  }
  if (r != VK_SUCCESS) return r;
  auto d = make_device_data(*out, physical, inst, links.set_loader_data);
  load_device_fns(d->fn, gdpa, *out);
  load_present_fns(d->fn, gdpa, *out, present);
  DeviceData* dp = d.get();
  {
    std::unique_lock lock(g_mu);
    g_devices[dispatch_key(*out)] = std::move(d);
  }
  if (!active) return VK_SUCCESS;
  activate_device(*dp, *inst, physical, mine, present, not_enabled);
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL layer_DestroyDevice(VkDevice device,
                                               const VkAllocationCallbacks* alloc) {
  DeviceData* d = device_of(dispatch_key(device));
  if (d == nullptr) return;
  // Swapchains the program left (it must destroy them first): their
  // waiters stop before the collector's last pass.
  std::unordered_map<VkSwapchainKHR, std::unique_ptr<SwapchainState>> left;
  {
    std::lock_guard lock(d->swap_mu);
    left.swap(d->swapchains);
  }
  for (auto& [sc, st] : left) {
    st->timing.clear();  // not read: the swapchain may be gone in the driver
    retire_swapchain(d, *st);
    if (st->feedback) st->feedback->forget(d->source);
  }
  read_slots_at_idle(*d);
  if (d->collector.joinable()) {
    {
      std::lock_guard lock(d->frame_mu);
      d->stop = true;
    }
    d->wake.notify_all();
    d->collector.join();
  }
  destroy_timing(*d);
  d->clock.reset();
  d->attachment.reset();
  auto destroy = d->fn.DestroyDevice;
  g_queue_table.forget_if([d](const QueueTiming& t) { return t.device == d; });
  {
    std::unique_lock lock(g_mu);
    g_devices.erase(dispatch_key(device));
  }
  destroy(device, alloc);
}

void remember_queue(DeviceData* d, VkQueue q, uint32_t family) {
  if (q == VK_NULL_HANDLE) return;
  auto it = d->families.find(family);
  FamilyTiming* fam = it == d->families.end() ? nullptr : it->second.get();
  {
    std::unique_lock lock(d->queues_mu);
    d->queues[q] = fam;
  }
  g_queue_table.publish(q, QueueTiming{d, fam});
}

VKAPI_ATTR void VKAPI_CALL layer_GetDeviceQueue(VkDevice device, uint32_t family, uint32_t index,
                                                VkQueue* queue) {
  DeviceData* d = device_of(dispatch_key(device));
  d->fn.GetDeviceQueue(device, family, index, queue);
  remember_queue(d, *queue, family);
}

VKAPI_ATTR void VKAPI_CALL layer_GetDeviceQueue2(VkDevice device, const VkDeviceQueueInfo2* info,
                                                 VkQueue* queue) {
  DeviceData* d = device_of(dispatch_key(device));
  d->fn.GetDeviceQueue2(device, info, queue);
  remember_queue(d, *queue, info->queueFamilyIndex);
}

}  // namespace

FamilyTiming* family_of(DeviceData* d, VkQueue queue) {
  std::shared_lock lock(d->queues_mu);
  auto it = d->queues.find(queue);
  return it == d->queues.end() ? nullptr : it->second;
}

namespace {

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
