// The capture layer's device set-up and teardown: vkCreateDevice with what
// latlab adds, the attach, the bracketing probe and the span budget, the
// collector's start; vkDestroyDevice; the program's queues.
#include "capture/vulkan_layer/device_setup.hpp"

#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
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
#include "capture/vulkan_layer/present_plan.hpp"
#include "capture/vulkan_layer/slot_timing.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/version.hpp"
#include "latlab/vulkan.hpp"

namespace latlab::capture::layer {
namespace {

constexpr const char* kLayerName = "VK_LAYER_LATLAB_capture";
// Rounds of the bracketing probe per queue (each kind), at vkCreateDevice.
constexpr uint32_t kProbeRounds = 16;

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

// The layer's state of a device the driver made, with its functions (a
// present method whose functions are missing becomes none).
DeviceData* register_device(VkDevice device, VkPhysicalDevice physical, InstanceData* inst,
                            PFN_vkSetDeviceLoaderData set_loader_data, PFN_vkGetDeviceProcAddr gdpa,
                            PresentPlan& present) {
  auto d = make_device_data(device, physical, inst, set_loader_data);
  load_device_fns(d->fn, gdpa, device);
  load_present_fns(d->fn, gdpa, device, present);
  DeviceData* dp = d.get();
  std::unique_lock lock(g_mu);
  g_devices[dispatch_key(device)] = std::move(d);
  return dp;
}

}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL layer_CreateDevice(VkPhysicalDevice physical,
                                                  const VkDeviceCreateInfo* info,
                                                  const VkAllocationCallbacks* alloc,
                                                  VkDevice* out) {
  const int64_t enter = host_now_ns();
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
  int64_t driver_ns = 0;  // the layer's own time is the rest
  auto timed_create = [&](const VkDeviceCreateInfo* ci) {
    const int64_t start = host_now_ns();
    const VkResult res = create(physical, ci, alloc, out);
    driver_ns += host_now_ns() - start;
    return res;
  };
  VkResult r = timed_create(active ? &mine : info);
  if (r != VK_SUCCESS && active) {
    // The additions must never cost the program its device.
    r = timed_create(info);
    not_enabled = "vkCreateDevice with the layer's additions failed; created as asked";
    mine = *info;
    if (present.method != PresentMethod::none) {
      present.method = PresentMethod::none;
      present.why_not = "vkCreateDevice with the present extensions the layer added failed";
    }
  }
  if (r != VK_SUCCESS) return r;
  DeviceData* dp = register_device(*out, physical, inst, links.set_loader_data, gdpa, present);
  if (!active) return VK_SUCCESS;
  activate_device(*dp, *inst, physical, mine, present, not_enabled);
  dp->setup_ns.store(host_now_ns() - enter - driver_ns, std::memory_order_relaxed);
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

namespace {

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

}  // namespace

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

FamilyTiming* family_of(DeviceData* d, VkQueue queue) {
  std::shared_lock lock(d->queues_mu);
  auto it = d->queues.find(queue);
  return it == d->queues.end() ? nullptr : it->second;
}

}  // namespace latlab::capture::layer
