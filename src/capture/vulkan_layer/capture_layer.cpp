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
#include <pthread.h>
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "capture/capture_record.hpp"
#include "capture/frame_assembly.hpp"
#include "capture/present_waiter.hpp"
#include "capture/presentation_feedback.hpp"
#include "capture/queue_table.hpp"
#include "capture/record_sender.hpp"
#include "capture/span_budget.hpp"
#include "capture/thread_cpu.hpp"
#include "capture/vulkan_layer/bracket_probe.hpp"
#include "capture/vulkan_layer/layer_device.hpp"
#include "capture/vulkan_layer/result_buffer.hpp"
#include "capture/vulkan_layer/slot_timing.hpp"
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
// How often the collector reads the timestamps (from memory: the layer's
// end command buffers copy them there, result_buffer.hpp).
constexpr auto kCollectPeriod = std::chrono::milliseconds(10);
// Rounds of the bracketing probe per queue (each kind), at vkCreateDevice.
constexpr uint32_t kProbeRounds = 16;
// How often the collector sends a CostRecord (and once at the end).
constexpr int64_t kCostPeriodNs = 1'000'000'000;
// How long a frame's record waits for its present_complete before it is
// sent without (NoComplete::late).
constexpr int64_t kCompleteTimeoutNs = 1'000'000'000;
// Display timing: presents per swapchain whose timing is still awaited.
constexpr size_t kTimingPending = 64;
// wp_presentation: how long vkDestroySwapchainKHR waits for the compositor's
// word on the presents still outstanding (a few refresh periods).
constexpr int64_t kFeedbackDrainNs = 100'000'000;

// ---------------------------------------------------------------------------
// Collector

// Resolves `p` from its copy (result_buffer.hpp) if both timestamps of its
// pair are there, and gives the slot back once the other pair's reset (in
// p's end command buffer) has executed too: its copy reads unavailable.
// final: the device is going away, the slot is not used again: the other
// pair is not checked.
bool try_resolve(DeviceData& d, PendingSubmit& p, bool final) {
  uint64_t* w = p.fam->words(p.slot);
  uint64_t* x = w + 4 * p.pair;
  uint64_t* y = w + 4 * (p.pair ^ 1U);
  if (load_acquire(x[1]) == 0 || load_acquire(x[3]) == 0) return false;
  if (!final && (load_acquire(y[1]) != 0 || load_acquire(y[3]) != 0)) return false;
  auto b = d.mapper ? d.mapper(load_acquire(x[0])) : std::nullopt;
  auto e = d.mapper ? d.mapper(load_acquire(x[2])) : std::nullopt;
  if (b && e) {
    p.rec.gpu_begin = b->host_ns;
    p.rec.gpu_end = e->host_ns;
  } else {
    p.rec.no_span = NoSpan::cannot_time;
  }
  p.fam->give_back(p.slot, true);
  return true;
}

// What the collector holds between passes.
struct CollectorState {
  std::deque<PendingSubmit> pending;
  std::deque<FrameEntry> frames;
  std::map<uint64_t, std::vector<SubmitRecord>> done;  // by frame
  std::map<uint64_t, Completion> completions;          // by frame
  std::map<uint64_t, DisplayOutcome> outcomes;         // wp_presentation, by feedback id
  uint64_t last_feedback_sent = 0;                     // the newest feedback id of a frame sent
  RecordBatch batch{RecordSender::process()};          // flushed at the end of each pass
  uint64_t bracketed = 0;  // submissions sent that carried the layer's command buffers
  LatlabThreadsCpu threads;
  int64_t last_cost = 0;  // host ns the last CostRecord was sent
};

// What the program spends on latlab beyond the calls the layer times.
void send_cost(DeviceData& d, CollectorState& c) {
  CostRecord r;
  r.threads_cpu_ns = c.threads.sample();
  r.threads = c.threads.threads();
  r.bracketed = c.bracketed;
  RecordSender::process().send(r, RecordType::cost, d.source);
  c.last_cost = host_now_ns();
}

// A frame's record is ready once its submissions are (the caller checks)
// and its present_complete is known, or no longer awaited.
bool fill_completion(FrameEntry& f, CollectorState& c, int64_t now, bool final) {
  if (!f.awaiting) return true;
  if (f.feedback_id != 0) {
    auto o = c.outcomes.find(f.feedback_id);
    if (o != c.outcomes.end()) {
      apply_outcome(o->second, f.rec);
      c.outcomes.erase(o);
      return true;
    }
  }
  auto it = c.completions.find(f.rec.frame);
  if (it != c.completions.end()) {
    f.rec.present_complete = it->second.ns;
    f.rec.no_complete = it->second.why;
    c.completions.erase(it);
    return true;
  }
  if (final || now - f.rec.present_end > kCompleteTimeoutNs) {
    f.rec.no_complete = NoComplete::late;
    return true;
  }
  return false;
}

// An outcome whose frame was sent already (late, or its present failed) has
// no use any more; feedback ids grow with the frames.
void drop_stale_outcomes(CollectorState& c) {
  while (!c.outcomes.empty() && c.outcomes.begin()->first <= c.last_feedback_sent)
    c.outcomes.erase(c.outcomes.begin());
}

void collect_once(DeviceData& d, CollectorState& c, bool final) {
  auto& pending = c.pending;
  auto& frames = c.frames;
  auto& done = c.done;
  {
    std::lock_guard lock(d.frame_mu);
    for (auto& s : d.new_submits) pending.push_back(s);
    for (auto& f : d.new_frames) frames.push_back(f);
    for (auto& x : d.new_completions) c.completions[x.frame] = x;
    for (auto& x : d.new_outcomes) c.outcomes[x.frame] = x;
    d.new_outcomes.clear();
    d.new_submits.clear();
    d.new_frames.clear();
    d.new_completions.clear();
  }
  for (auto& p : pending) {
    if (p.resolved) continue;
    if (p.slot == UINT32_MAX) {
      p.resolved = true;
    } else if (try_resolve(d, p, final)) {
      p.resolved = true;
    } else if (final) {
      p.rec.no_span = NoSpan::not_read;
      p.fam->give_back(p.slot, false);
      p.resolved = true;
    }
  }
  while (!pending.empty() && pending.front().resolved) {
    if (pending.front().slot != UINT32_MAX) ++c.bracketed;
    SubmitRecord rec = pending.front().rec;
    c.batch.add(rec, RecordType::submit, d.source);
    ++d.submits_sent;
    done[rec.frame].push_back(rec);
    pending.pop_front();
  }
  const int64_t now = host_now_ns();
  while (!frames.empty() &&
         (pending.empty() || pending.front().rec.frame > frames.front().rec.frame) &&
         fill_completion(frames.front(), c, now, final)) {
    FrameRecord f = frames.front().rec;
    c.last_feedback_sent = std::max(c.last_feedback_sent, frames.front().feedback_id);
    frames.pop_front();
    auto it = done.find(f.frame);
    if (it != done.end()) {
      fill_gpu_figures(f, it->second);
      done.erase(it);
    } else {
      fill_gpu_figures(f, {});
    }
    c.batch.add(f, RecordType::frame, d.source);
    ++d.frames_sent;
  }
  // A completion for a frame already sent (late) has no use any more.
  const uint64_t oldest = frames.empty() ? UINT64_MAX : frames.front().rec.frame;
  while (!c.completions.empty() && c.completions.begin()->first < oldest)
    c.completions.erase(c.completions.begin());
  drop_stale_outcomes(c);
  c.batch.flush();
}

void post_outcomes(DeviceData* d, const std::vector<DisplayOutcome>& got);

// What the compositor said of the presents to the device's swapchains on
// Wayland surfaces: dispatched here, on the collector, not in the program's
// present (a dispatch costs microseconds per event). Under swap_mu: a
// feedback is polled only while a swapchain on its display exists
// (vkDestroySwapchainKHR takes the swapchain out under it first), so the
// program's display is connected.
void poll_feedback(DeviceData& d, std::vector<DisplayOutcome>& got) {
  got.clear();
  {
    std::lock_guard lock(d.swap_mu);
    for (const auto& [sc, st] : d.swapchains) {
      if (st->feedback) st->feedback->poll(got);
    }
  }
  if (!got.empty()) post_outcomes(&d, got);
}

void collector_main(DeviceData* d) {
  // Named for `top -H` and profilers: the program's CPU that latlab takes.
  pthread_setname_np(pthread_self(), "latlab-collect");
  CollectorState c;
  std::vector<DisplayOutcome> outcomes;
  for (;;) {
    {
      std::unique_lock lock(d->frame_mu);
      d->wake.wait_for(lock, kCollectPeriod, [d] { return d->stop; });
      if (d->stop) break;
    }
    poll_feedback(*d, outcomes);
    collect_once(*d, c, false);
    if (host_now_ns() - c.last_cost > kCostPeriodNs) send_cost(*d, c);
    // Keep a quarter of a chunk free, so that the program's submit rarely
    // waits for a chunk to be made.
    for (auto& [f, ft] : d->families) {
      if (ft->can_time && ft->free_slots() < kChunkSlots / 4) grow_family(*d, *ft, kChunkSlots / 4);
    }
  }
  // The program destroys its device only once its work is done, but a
  // driver may still be writing the last timestamps (llvmpipe's rasteriser
  // threads finish after its queue): a few more passes, 2 ms apart, then
  // what is still not available is sent as not read.
  auto unresolved = [&c] {
    return std::any_of(c.pending.begin(), c.pending.end(),
                       [](const PendingSubmit& p) { return !p.resolved; });
  };
  collect_once(*d, c, false);
  for (int i = 0; i < 25 && unresolved(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    collect_once(*d, c, false);
  }
  collect_once(*d, c, true);
  // Submissions after the last present belong to no frame: sent above.
  send_cost(*d, c);
  EndRecord end;
  end.frames = d->frames_sent;
  end.submits = d->submits_sent;
  end.dropped = RecordSender::process().dropped();
  RecordSender::process().send(end, RecordType::end, d->source);
}

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

// Whether the budget lets this submission be timed.
bool within_budget(DeviceData& d) {
  if (!d.budget) return true;
  const uint64_t frame = d.frame_index.load(std::memory_order_relaxed);
  std::lock_guard lock(d.budget_mu);
  // Before the first present every submission is decided alone.
  return d.budget->take(frame, frame > 0, host_now_ns());
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

void retire_swapchain(DeviceData* d, SwapchainState& st);

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

// Queues the submission for the collector. Its cpu_end and source_cpu_ns
// are set last, under the lock: everything but the unlock is counted.
void push_submit(DeviceData* d, PendingSubmit& p, int64_t enter, int64_t call_start,
                 int64_t call_end) {
  std::lock_guard lock(d->frame_mu);
  p.rec.frame = d->frame_index.load(std::memory_order_relaxed);
  d->new_submits.push_back(p);
  const int64_t now = host_now_ns();
  SubmitRecord& rec = d->new_submits.back().rec;
  rec.cpu_end = now;
  rec.source_cpu_ns = (call_start - enter) + (now - call_end);
}

// A batch the layer leaves as the program made it: protected work or
// per-command-buffer device masks, which its own command buffers would break.
bool bracketable(const VkSubmitInfo& s) {
  for (auto* c = static_cast<const VkBaseInStructure*>(s.pNext); c != nullptr; c = c->pNext) {
    if (c->sType == VK_STRUCTURE_TYPE_DEVICE_GROUP_SUBMIT_INFO) return false;
    if (c->sType == VK_STRUCTURE_TYPE_PROTECTED_SUBMIT_INFO &&
        reinterpret_cast<const VkProtectedSubmitInfo*>(c)->protectedSubmit == VK_TRUE)
      return false;
  }
  return true;
}
bool bracketable(const VkSubmitInfo2& s) { return (s.flags & VK_SUBMIT_PROTECTED_BIT) == 0; }
uint32_t work_of(const VkSubmitInfo& s) { return s.commandBufferCount; }
uint32_t work_of(const VkSubmitInfo2& s) { return s.commandBufferInfoCount; }

// The program's batches with the layer's begin command buffer before the
// first batch with work and its end command buffer after the last one.
struct Bracketed {
  std::vector<VkSubmitInfo> infos;
  std::vector<VkSubmitInfo2> infos2;
  std::vector<VkCommandBuffer> cbs;
  std::vector<VkCommandBufferSubmitInfo> cbs2;
};

void bracket(const VkSubmitInfo* in, uint32_t count, uint32_t first, uint32_t last,
             VkCommandBuffer b, VkCommandBuffer e, Bracketed& out) {
  out.infos.assign(in, in + count);
  out.cbs.clear();
  out.cbs.reserve(in[first].commandBufferCount + in[last].commandBufferCount + 2);
  auto rebuild = [&](uint32_t i) {
    const size_t at = out.cbs.size();
    if (i == first) out.cbs.push_back(b);
    out.cbs.insert(out.cbs.end(), in[i].pCommandBuffers,
                   in[i].pCommandBuffers + in[i].commandBufferCount);
    if (i == last) out.cbs.push_back(e);
    out.infos[i].pCommandBuffers = out.cbs.data() + at;
    out.infos[i].commandBufferCount = static_cast<uint32_t>(out.cbs.size() - at);
  };
  rebuild(first);
  if (last != first) rebuild(last);
}

void bracket(const VkSubmitInfo2* in, uint32_t count, uint32_t first, uint32_t last,
             VkCommandBuffer b, VkCommandBuffer e, Bracketed& out) {
  out.infos2.assign(in, in + count);
  out.cbs2.clear();
  out.cbs2.reserve(in[first].commandBufferInfoCount + in[last].commandBufferInfoCount + 2);
  auto ours = [](VkCommandBuffer cb) {
    return VkCommandBufferSubmitInfo{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO, nullptr, cb, 0};
  };
  auto rebuild = [&](uint32_t i) {
    const size_t at = out.cbs2.size();
    if (i == first) out.cbs2.push_back(ours(b));
    out.cbs2.insert(out.cbs2.end(), in[i].pCommandBufferInfos,
                    in[i].pCommandBufferInfos + in[i].commandBufferInfoCount);
    if (i == last) out.cbs2.push_back(ours(e));
    out.infos2[i].pCommandBufferInfos = out.cbs2.data() + at;
    out.infos2[i].commandBufferInfoCount = static_cast<uint32_t>(out.cbs2.size() - at);
  };
  rebuild(first);
  if (last != first) rebuild(last);
}

template <class Info, class Call>
VkResult timed_submit(int64_t enter, DeviceData* d, FamilyTiming* fam, uint32_t count,
                      const Info* submits, Call&& call) {
  if (d == nullptr || !d->active) return call(count, submits);
  PendingSubmit p;
  SlotUse slot_use;
  p.rec.cpu_start = enter;
  p.rec.batches = count;
  uint32_t first = UINT32_MAX;
  uint32_t last = 0;
  for (uint32_t i = 0; i < count; ++i) {
    if (work_of(submits[i]) == 0) continue;
    p.rec.command_buffers += work_of(submits[i]);
    if (first == UINT32_MAX) first = i;
    last = i;
  }
  if (fam != nullptr) p.rec.queue_family = fam->family;
  if (first == UINT32_MAX) {
    p.rec.no_span = NoSpan::no_work;
  } else if (!bracketable(submits[first]) || !bracketable(submits[last])) {
    p.rec.no_span = NoSpan::not_bracketable;
  } else if (fam == nullptr || !fam->can_time) {
    p.rec.no_span = NoSpan::cannot_time;
  } else if (!within_budget(*d)) {
    p.rec.no_span = NoSpan::budget;
  } else {
    slot_use = fam->take();
    // More in flight than ever before: a chunk more, made here (rarely:
    // the collector grows the family ahead of need).
    if (slot_use.slot == UINT32_MAX && grow_family(*d, *fam, 1)) slot_use = fam->take();
    if ((p.slot = slot_use.slot) == UINT32_MAX) p.rec.no_span = NoSpan::ring_full;
  }
  thread_local Bracketed scratch;
  const Info* use = submits;
  if (p.slot != UINT32_MAX) {
    p.fam = fam;
    p.pair = slot_use.pair;
    bracket(submits, count, first, last, slot_use.begin, slot_use.end, scratch);
    if constexpr (std::is_same_v<Info, VkSubmitInfo>) {
      use = scratch.infos.data();
    } else {
      use = scratch.infos2.data();
    }
  }
  const int64_t call_start = host_now_ns();
  const VkResult r = call(count, use);
  const int64_t call_end = host_now_ns();
  p.rec.result = r;
  if (r != VK_SUCCESS && p.slot != UINT32_MAX) {
    // A failed submit leaves its command buffers unsubmitted: the slot's
    // next use is this one again.
    fam->give_back(p.slot, false);
    p.slot = UINT32_MAX;
    p.rec.no_span = NoSpan::failed;
  }
  push_submit(d, p, enter, call_start, call_end);
  return r;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_QueueSubmit(VkQueue queue, uint32_t count,
                                                 const VkSubmitInfo* submits, VkFence fence) {
  const int64_t enter = host_now_ns();
  const auto found = device_and_family(queue);
  DeviceData* d = found.first;
  FamilyTiming* fam = found.second;
  return timed_submit(enter, d, fam, count, submits, [&](uint32_t n, const VkSubmitInfo* s) {
    return d->fn.QueueSubmit(queue, n, s, fence);
  });
}

VKAPI_ATTR VkResult VKAPI_CALL layer_QueueSubmit2(VkQueue queue, uint32_t count,
                                                  const VkSubmitInfo2* submits, VkFence fence) {
  const int64_t enter = host_now_ns();
  const auto found = device_and_family(queue);
  DeviceData* d = found.first;
  FamilyTiming* fam = found.second;
  return timed_submit(enter, d, fam, count, submits, [&](uint32_t n, const VkSubmitInfo2* s) {
    return d->fn.QueueSubmit2(queue, n, s, fence);
  });
}

VKAPI_ATTR VkResult VKAPI_CALL layer_QueueSubmit2KHR(VkQueue queue, uint32_t count,
                                                     const VkSubmitInfo2* submits, VkFence fence) {
  const int64_t enter = host_now_ns();
  const auto found = device_and_family(queue);
  DeviceData* d = found.first;
  FamilyTiming* fam = found.second;
  return timed_submit(enter, d, fam, count, submits, [&](uint32_t n, const VkSubmitInfo2* s) {
    return d->fn.QueueSubmit2KHR(queue, n, s, fence);
  });
}

SwapchainState* swapchain_of(DeviceData* d, VkSwapchainKHR sc) {
  std::lock_guard lock(d->swap_mu);
  auto it = d->swapchains.find(sc);
  return it == d->swapchains.end() ? nullptr : it->second.get();
}

void post_completion(DeviceData* d, const Completion& c) {
  std::lock_guard lock(d->frame_mu);
  d->new_completions.push_back(c);
}

// Display timing: the actual present times the presentation engine has
// for `st`'s presents (each is returned once), as completions. Runs on the
// program's thread inside one of its calls on the swapchain, which the
// spec requires to be externally synchronised with this query.
void read_display_timing(DeviceData* d, SwapchainState& st, std::vector<Completion>& out) {
  if (st.timing.empty()) return;
  VkPastPresentationTimingGOOGLE past[16];
  for (int round = 0; round < 4; ++round) {
    auto n = static_cast<uint32_t>(std::size(past));
    const VkResult r = d->fn.GetPastPresentationTimingGOOGLE(d->device, st.swapchain, &n, past);
    if (r < 0) break;
    const int64_t now = host_now_ns();
    for (uint32_t i = 0; i < n; ++i) {
      auto it = std::find_if(st.timing.begin(), st.timing.end(),
                             [&](const auto& p) { return p.first == past[i].presentID; });
      if (it == st.timing.end()) continue;
      Completion c{it->second, kNoTime, NoComplete::failed};
      const auto t = static_cast<int64_t>(past[i].actualPresentTime);
      // The spec's clock on Linux is CLOCK_MONOTONIC; a time more than
      // 10 s away from now is on another one and is not used.
      if (t > 0 && (now - t < 10'000'000'000 && t - now < 10'000'000'000)) {
        c.ns = t;
        c.why = NoComplete::none;
      } else if (!d->timing_clock_warned.exchange(true)) {
        send_unavailable(d->source, "present_complete",
                         "VK_GOOGLE_display_timing's actualPresentTime is not on CLOCK_MONOTONIC "
                         "(more than 10 s from the host's now): such frames are failed");
      }
      out.push_back(c);
      st.timing.erase(it);
    }
    if (r != VK_INCOMPLETE) break;
  }
}

// No more present_complete from `st` (its swapchain is retired or about to
// be destroyed): the waiter is stopped (no vkWaitForPresentKHR runs once
// this returns) and what is outstanding is resolved as retired.
void retire_swapchain(DeviceData* d, SwapchainState& st) {
  st.retired = true;
  if (st.waiter) st.waiter->stop(NoComplete::retired);
  std::vector<Completion> got;
  read_display_timing(d, st, got);
  for (const auto& [id, frame] : st.timing) got.push_back({frame, kNoTime, NoComplete::retired});
  st.timing.clear();
  for (const auto& c : got) post_completion(d, c);
}

// Routes the compositor's outcomes to the devices whose presents asked
// (each outcome's owner is a device's source).
void post_outcomes(DeviceData* d, const std::vector<DisplayOutcome>& got) {
  for (const DisplayOutcome& o : got) {
    DeviceData* to = d;
    if (o.owner != d->source) {
      std::shared_lock lock(g_mu);
      auto it = std::find_if(g_devices.begin(), g_devices.end(),
                             [&](const auto& kv) { return kv.second->source == o.owner; });
      to = it == g_devices.end() ? nullptr : it->second.get();
    }
    if (to == nullptr) continue;  // its device is gone
    std::lock_guard lock(to->frame_mu);
    to->new_outcomes.push_back(o);
  }
}

// What the layer adds to one present for present_complete. Filled in place
// (`use` may point at `tagged`).
struct PresentTag {
  const VkPresentInfoKHR* use = nullptr;  // what goes down
  VkPresentInfoKHR tagged{};
  VkPresentIdKHR ids{VK_STRUCTURE_TYPE_PRESENT_ID_KHR, nullptr, 0, nullptr};
  VkPresentTimesInfoGOOGLE times{VK_STRUCTURE_TYPE_PRESENT_TIMES_INFO_GOOGLE, nullptr, 0, nullptr};
  uint64_t tag = 0;          // the present id / presentID (0: none)
  uint64_t feedback_id = 0;  // the wp_presentation request (0: none)
};

// Tags the first swapchain's present with an id the layer can wait for (or
// reads the program's own id), or, on a Wayland surface, asks the
// compositor for the feedback of the commit the present makes.
void tag_present(DeviceData* d, SwapchainState* st, const VkPresentInfoKHR* info, PresentTag& t) {
  t.use = info;
  if (st == nullptr) return;
  if (st->feedback) {
    const uint64_t id = d->next_feedback_id.fetch_add(1, std::memory_order_relaxed);
    if (st->feedback->request(st->wl_surface, d->source, id)) t.feedback_id = id;
    return;
  }
  if (st->retired || d->present_method == PresentMethod::none) return;
  const uint32_t n = info->swapchainCount;
  if (d->present_method == PresentMethod::present_wait && !d->layer_present_ids) {
    const auto* own = chain_find<VkPresentIdKHR>(info->pNext, VK_STRUCTURE_TYPE_PRESENT_ID_KHR);
    if (own != nullptr && own->pPresentIds != nullptr && own->swapchainCount > 0)
      t.tag = own->pPresentIds[0];
  } else if (d->present_method == PresentMethod::present_wait) {
    // thread_local only where used: in a dlopen'd library passing the
    // declaration costs a TLS lookup even when nothing is done with it.
    thread_local std::vector<uint64_t> id_list;
    id_list.assign(n, 0);  // 0: no id for the other swapchains
    t.tag = id_list[0] = st->next_id++;
    t.ids = {VK_STRUCTURE_TYPE_PRESENT_ID_KHR, info->pNext, n, id_list.data()};
    t.tagged = *info;
    t.tagged.pNext = &t.ids;
    t.use = &t.tagged;
  } else {
    // desiredPresentTime 0: "any time", as without the structure.
    thread_local std::vector<VkPresentTimeGOOGLE> time_list;
    time_list.assign(n, VkPresentTimeGOOGLE{0, 0});
    if (static_cast<uint32_t>(st->next_id) == 0) ++st->next_id;  // 0 is not an id
    t.tag = static_cast<uint32_t>(st->next_id++);
    time_list[0].presentID = static_cast<uint32_t>(t.tag);
    t.times = {VK_STRUCTURE_TYPE_PRESENT_TIMES_INFO_GOOGLE, info->pNext, n, time_list.data()};
    t.tagged = *info;
    t.tagged.pNext = &t.times;
    t.use = &t.tagged;
  }
}

// Sends present_complete's Unavailable record, once per device, at its
// first present that has no way to learn it.
void say_no_complete(DeviceData* d, const SwapchainState* st) {
  if (d->no_complete_said.exchange(true)) return;
  std::string why = d->no_present_method;
  if (st != nullptr && !st->no_feedback.empty())
    why = "on Wayland: " + st->no_feedback + "; the device: " + why;
  send_unavailable(d->source, "present_complete", why);
}

// How the frame's present_complete will come (e.awaiting), or why not.
// Under frame_mu: a waiter's completion reaches the collector after its frame.
void plan_completion(DeviceData* d, SwapchainState* st, const PresentTag& t, VkResult first,
                     FrameEntry& e) {
  FrameRecord& f = e.rec;
  if (st != nullptr && st->feedback) {
    f.complete_method = PresentMethod::wp_presentation;
    // A failed present made no commit: its request answers a later one and is dropped.
    f.no_complete = t.feedback_id == 0 ? NoComplete::dropped
                    : first < 0        ? NoComplete::failed
                                       : NoComplete::none;
    e.awaiting = f.no_complete == NoComplete::none;
    e.feedback_id = t.feedback_id;
    return;
  }
  if (d->present_method == PresentMethod::none || st == nullptr) {
    f.no_complete = NoComplete::unavailable;
    return;
  }
  f.complete_method = d->present_method;
  if (st->retired) {
    f.no_complete = NoComplete::retired;
  } else if (first < 0) {
    f.no_complete = NoComplete::failed;  // nothing was queued for presentation
  } else if (t.tag == 0) {
    f.no_complete = NoComplete::not_tagged;
  } else if (d->present_method == PresentMethod::present_wait) {
    const auto pushed = st->waiter->push(t.tag, f.frame);
    e.awaiting = pushed == PresentWaiter::Push::queued;
    f.no_complete = pushed == PresentWaiter::Push::full ? NoComplete::dropped
                    : e.awaiting                        ? NoComplete::none
                                                        : NoComplete::retired;
  } else {
    if (st->timing.size() == kTimingPending) st->timing.pop_front();  // it goes late
    st->timing.emplace_back(static_cast<uint32_t>(t.tag), f.frame);
    e.awaiting = true;
    f.no_complete = NoComplete::none;
  }
}

VKAPI_ATTR VkResult VKAPI_CALL layer_QueuePresentKHR(VkQueue queue, const VkPresentInfoKHR* info) {
  const int64_t enter = host_now_ns();
  DeviceData* d = device_and_family(queue).first;
  if (!d->active) return d->fn.QueuePresentKHR(queue, info);
  SwapchainState* st = info->swapchainCount > 0 ? swapchain_of(d, info->pSwapchains[0]) : nullptr;
  PresentTag t;
  tag_present(d, st, info, t);
  // What the return needs is read before the call: the driver's present
  // (on a CPU device, a copy of the whole image) leaves the caches cold,
  // and every line touched after it costs a miss in the program's present.
  const bool read_timing =
      st != nullptr && !st->feedback && d->present_method == PresentMethod::display_timing;
  FrameEntry e;
  FrameRecord& f = e.rec;
  f.present_start = enter;
  f.swapchains = info->swapchainCount;
  f.swapchain = info->swapchainCount > 0 ? reinterpret_cast<uint64_t>(info->pSwapchains[0]) : 0;
  const int64_t call_start = host_now_ns();
  const VkResult r = d->fn.QueuePresentKHR(queue, t.use);
  const int64_t returned = host_now_ns();
  // The frame state's lines and the swapchain's, fetched together rather
  // than one miss after another.
  __builtin_prefetch(&d->frame_mu, 1);
  __builtin_prefetch(&d->new_frames, 1);
  __builtin_prefetch(&d->acquire_wait_ns, 1);
  if (st != nullptr) __builtin_prefetch(st);
  f.present_end = returned;
  f.present_result = r;
  const VkResult first =
      info->pResults != nullptr && info->swapchainCount > 0 ? info->pResults[0] : r;
  // Display timing's results for earlier presents (the compositor's are
  // dispatched by the collector: poll_feedback).
  std::vector<Completion>* timed = nullptr;
  if (read_timing) {
    // thread_local only here: in a dlopen'd library each use is a TLS lookup.
    thread_local std::vector<Completion> timed_list;
    timed_list.clear();
    read_display_timing(d, *st, timed_list);
    timed = &timed_list;
  }
  {
    std::lock_guard lock(d->frame_mu);
    f.frame = d->frame_index.fetch_add(1, std::memory_order_relaxed);
    f.frame_start = d->last_present_end;
    f.acquire_wait_ns = d->acquire_wait_ns.exchange(0, std::memory_order_relaxed);
    plan_completion(d, st, t, first, e);
    if (timed != nullptr)
      d->new_completions.insert(d->new_completions.end(), timed->begin(), timed->end());
    const int64_t now = host_now_ns();
    f.source_present_ns = (call_start - enter) + (now - returned);
    d->new_frames.push_back(e);
    d->last_present_end = now;
  }
  if (f.no_complete == NoComplete::unavailable) say_no_complete(d, st);
  return r;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_AcquireNextImageKHR(VkDevice device, VkSwapchainKHR sc,
                                                         uint64_t timeout, VkSemaphore sem,
                                                         VkFence fence, uint32_t* index) {
  DeviceData* d = device_of(dispatch_key(device));
  const int64_t t0 = host_now_ns();
  const VkResult r = d->fn.AcquireNextImageKHR(device, sc, timeout, sem, fence, index);
  d->acquire_wait_ns.fetch_add(host_now_ns() - t0, std::memory_order_relaxed);
  return r;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_AcquireNextImage2KHR(VkDevice device,
                                                          const VkAcquireNextImageInfoKHR* info,
                                                          uint32_t* index) {
  DeviceData* d = device_of(dispatch_key(device));
  const int64_t t0 = host_now_ns();
  const VkResult r = d->fn.AcquireNextImage2KHR(device, info, index);
  d->acquire_wait_ns.fetch_add(host_now_ns() - t0, std::memory_order_relaxed);
  return r;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_CreateSwapchainKHR(VkDevice device,
                                                        const VkSwapchainCreateInfoKHR* info,
                                                        const VkAllocationCallbacks* alloc,
                                                        VkSwapchainKHR* out) {
  DeviceData* d = device_of(dispatch_key(device));
  if (!d->active) return d->fn.CreateSwapchainKHR(device, info, alloc, out);
  // The old swapchain is retired by this call, even when it fails; no wait
  // may be made on a retired swapchain, so its waiter stops first.
  if (info->oldSwapchain != VK_NULL_HANDLE) {
    if (SwapchainState* old = swapchain_of(d, info->oldSwapchain)) retire_swapchain(d, *old);
  }
  const VkResult r = d->fn.CreateSwapchainKHR(device, info, alloc, out);
  if (r != VK_SUCCESS) return r;
  auto st = std::make_unique<SwapchainState>();
  st->swapchain = *out;
  if (auto w = wayland_surfaces().find(reinterpret_cast<uint64_t>(info->surface))) {
    st->wl_surface = w->surface;
    st->feedback = w->feedback;
    st->no_feedback = w->why;
  }
  if (d->present_method == PresentMethod::present_wait && !st->feedback) {
    const VkSwapchainKHR sc = *out;
    st->waiter = std::make_unique<PresentWaiter>(
        [d, sc](uint64_t id, uint64_t timeout_ns) {
          const VkResult w = d->fn.WaitForPresentKHR(d->device, sc, id, timeout_ns);
          return w == VK_SUCCESS || w == VK_SUBOPTIMAL_KHR ? WaitOutcome::done
                 : w == VK_TIMEOUT                         ? WaitOutcome::timeout
                                                           : WaitOutcome::failed;
        },
        [d](uint64_t frame, int64_t ns, NoComplete why) {
          post_completion(d, {frame, ns, why});
        });
  }
  {
    std::lock_guard lock(d->swap_mu);
    d->swapchains[*out] = std::move(st);
  }
  uint64_t window = 0;
  {
    std::lock_guard lock(g_surface_mu);
    auto it = g_x11_windows.find(reinterpret_cast<uint64_t>(info->surface));
    if (it != g_x11_windows.end()) window = it->second;
  }
  if (window != 0) {
    WindowRecord w;
    w.swapchain = reinterpret_cast<uint64_t>(*out);
    w.window = window;
    w.system = WindowSystem::x11;
    const char* display = std::getenv("DISPLAY");
    set_text(w.display, display != nullptr ? display : "");
    RecordSender::process().send(w, RecordType::window, d->source);
  }
  return r;
}

VKAPI_ATTR void VKAPI_CALL layer_DestroySwapchainKHR(VkDevice device, VkSwapchainKHR sc,
                                                     const VkAllocationCallbacks* alloc) {
  DeviceData* d = device_of(dispatch_key(device));
  std::unique_ptr<SwapchainState> st;
  {
    std::lock_guard lock(d->swap_mu);
    auto it = d->swapchains.find(sc);
    if (it != d->swapchains.end()) {
      st = std::move(it->second);
      d->swapchains.erase(it);
    }
  }
  // The spec wants the swapchain to outlive every wait on it.
  if (st) retire_swapchain(d, *st);
  // The compositor's word on the last presents, while the surface is sure
  // to be alive.
  if (st && st->feedback) {
    std::vector<DisplayOutcome> got;
    st->feedback->drain(d->source, kFeedbackDrainNs, got);
    post_outcomes(d, got);
  }
  d->fn.DestroySwapchainKHR(device, sc, alloc);
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
