// The capture layer's per-instance and per-device data, shared by its files,
// and the registries that find them from a handle (defined in capture_layer.cpp).
#pragma once

#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "capture/capture_record.hpp"
#include "capture/present_waiter.hpp"
#include "capture/presentation_feedback.hpp"
#include "capture/queue_table.hpp"
#include "capture/span_budget.hpp"
#include "capture/vulkan_layer/result_buffer.hpp"
#include "capture/vulkan_layer/slot_timing.hpp"
#include "capture/wayland_surfaces.hpp"
#include "latlab/vulkan.hpp"

namespace latlab::capture::layer {

template <class T>
void* dispatch_key(T handle) {
  return *reinterpret_cast<void**>(handle);
}

template <class F>
F load(PFN_vkGetDeviceProcAddr gdpa, VkDevice d, const char* name) {
  return reinterpret_cast<F>(gdpa(d, name));
}

struct InstanceData {
  VkInstance instance = VK_NULL_HANDLE;
  PFN_vkGetInstanceProcAddr next_gipa = nullptr;
  PFN_vkDestroyInstance DestroyInstance = nullptr;
  PFN_vkCreateDevice CreateDevice = nullptr;
  PFN_vkGetPhysicalDeviceQueueFamilyProperties GetPhysicalDeviceQueueFamilyProperties = nullptr;
  PFN_vkGetPhysicalDeviceMemoryProperties GetPhysicalDeviceMemoryProperties = nullptr;
  PFN_vkGetPhysicalDeviceProperties GetPhysicalDeviceProperties = nullptr;
  PFN_vkEnumerateDeviceExtensionProperties EnumerateDeviceExtensionProperties = nullptr;
  PFN_vkGetPhysicalDeviceFeatures2 GetPhysicalDeviceFeatures2 = nullptr;  // or the KHR one
  // X11 surfaces: taken at vkCreateInstance (asked later, the loader's
  // terminator answers from its dispatch table, whose top is this layer).
  PFN_vkVoidFunction CreateXcbSurfaceKHR = nullptr;
  PFN_vkVoidFunction CreateXlibSurfaceKHR = nullptr;
  PFN_vkVoidFunction CreateWaylandSurfaceKHR = nullptr;
  PFN_vkDestroySurfaceKHR DestroySurfaceKHR = nullptr;
  uint32_t api_version = VK_API_VERSION_1_0;
};

struct DeviceFns {
  PFN_vkGetDeviceProcAddr GetDeviceProcAddr = nullptr;
  PFN_vkDestroyDevice DestroyDevice = nullptr;
  PFN_vkGetDeviceQueue GetDeviceQueue = nullptr;
  PFN_vkGetDeviceQueue2 GetDeviceQueue2 = nullptr;
  PFN_vkQueueSubmit QueueSubmit = nullptr;
  PFN_vkQueueSubmit2 QueueSubmit2 = nullptr;
  PFN_vkQueueSubmit2 QueueSubmit2KHR = nullptr;
  PFN_vkQueuePresentKHR QueuePresentKHR = nullptr;
  PFN_vkAcquireNextImageKHR AcquireNextImageKHR = nullptr;
  PFN_vkAcquireNextImage2KHR AcquireNextImage2KHR = nullptr;
  PFN_vkCreateSwapchainKHR CreateSwapchainKHR = nullptr;
  PFN_vkDestroySwapchainKHR DestroySwapchainKHR = nullptr;
  PFN_vkCreateQueryPool CreateQueryPool = nullptr;
  PFN_vkDestroyQueryPool DestroyQueryPool = nullptr;
  PFN_vkGetQueryPoolResults GetQueryPoolResults = nullptr;
  PFN_vkCreateCommandPool CreateCommandPool = nullptr;
  PFN_vkDestroyCommandPool DestroyCommandPool = nullptr;
  PFN_vkAllocateCommandBuffers AllocateCommandBuffers = nullptr;
  PFN_vkBeginCommandBuffer BeginCommandBuffer = nullptr;
  PFN_vkEndCommandBuffer EndCommandBuffer = nullptr;
  PFN_vkCmdWriteTimestamp CmdWriteTimestamp = nullptr;
  PFN_vkCmdResetQueryPool CmdResetQueryPool = nullptr;
  PFN_vkCreateFence CreateFence = nullptr;
  PFN_vkDestroyFence DestroyFence = nullptr;
  PFN_vkWaitForFences WaitForFences = nullptr;
  PFN_vkResetFences ResetFences = nullptr;
  PFN_vkWaitForPresentKHR WaitForPresentKHR = nullptr;
  PFN_vkGetPastPresentationTimingGOOGLE GetPastPresentationTimingGOOGLE = nullptr;
  ResultBufferFns results;  // the timestamps' way to the host
};

struct PendingSubmit {
  SubmitRecord rec;
  FamilyTiming* fam = nullptr;
  uint32_t slot = UINT32_MAX;  // UINT32_MAX: not bracketed (rec.no_span says why)
  uint8_t pair = kPairA;       // the pair this use writes
  bool resolved = false;
};

// A frame's present_complete, from a waiter or the display timing (the
// compositor's come as DisplayOutcome).
struct Completion {
  uint64_t frame = 0;
  int64_t ns = kNoTime;
  NoComplete why = NoComplete::none;
};

// A frame as the present hook hands it to the collector.
struct FrameEntry {
  FrameRecord rec;
  bool awaiting = false;     // its present_complete is still to come
  uint64_t feedback_id = 0;  // wp_presentation: the request its outcome answers (0: none)
};

// Per swapchain. The program synchronises its presents to a swapchain with
// that swapchain's retirement and destruction (the spec's external
// synchronisation), so the present hook uses its state without a lock;
// the map of states has one (DeviceData::swap_mu).
struct SwapchainState {
  VkSwapchainKHR swapchain = VK_NULL_HANDLE;
  uint64_t next_id = 1;  // the layer's present ids (VkPresentIdKHR / GOOGLE presentID)
  bool retired = false;  // a newer swapchain replaced it: no more waits
  std::unique_ptr<PresentWaiter> waiter;             // present_wait
  std::deque<std::pair<uint32_t, uint64_t>> timing;  // display timing: (presentID, frame)
  // A Wayland surface's: the compositor's feedback (null: none, `no_feedback` says why).
  wl::Proxy* wl_surface = nullptr;
  std::shared_ptr<PresentationFeedback> feedback;
  std::string no_feedback;
};

struct DeviceData {
  VkDevice device = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  InstanceData* instance = nullptr;
  PFN_vkSetDeviceLoaderData set_loader_data = nullptr;
  DeviceFns fn;
  uint64_t source = 0;
  bool active = false;       // a capture is listening: time and send
  bool late_copies = false;  // a CPU device: copies do not wait (kLateCopySlots)
  // Which submissions are timed (span_budget.hpp); null: every one.
  std::mutex budget_mu;
  std::unique_ptr<SpanBudget> budget;
  std::unique_ptr<VulkanAttachment> attachment;
  std::unique_ptr<ClockSync> clock;
  std::function<std::optional<MappedTime>(uint64_t)> mapper;
  std::map<uint32_t, std::unique_ptr<FamilyTiming>> families;
  std::shared_mutex queues_mu;
  std::unordered_map<VkQueue, FamilyTiming*> queues;

  // Frame state, shared by the program's threads and the collector.
  std::mutex frame_mu;
  // Written under frame_mu; the budget reads it under budget_mu.
  std::atomic<uint64_t> frame_index{0};
  int64_t last_present_end = kNoTime;
  std::vector<PendingSubmit> new_submits;
  std::vector<FrameEntry> new_frames;
  std::vector<Completion> new_completions;
  std::vector<DisplayOutcome> new_outcomes;  // wp_presentation, by feedback id
  std::atomic<uint64_t> next_feedback_id{1};
  std::atomic<int64_t> acquire_wait_ns{0};
  std::condition_variable wake;
  bool stop = false;
  std::thread collector;
  // What the layer added to the program's vkCreateDevice (ns; kNoTime
  // until it returns): the attach, calibration, probe, slots.
  std::atomic<int64_t> setup_ns{kNoTime};
  uint64_t frames_sent = 0;
  uint64_t submits_sent = 0;

  // present_complete (plan_present). layer_present_ids: the layer chains
  // its own VkPresentIdKHR (the program did not enable present ids).
  PresentMethod present_method = PresentMethod::none;
  std::string no_present_method;              // why present_method is none
  std::atomic<bool> no_complete_said{false};  // its Unavailable record was sent
  bool layer_present_ids = false;
  std::atomic<bool> timing_clock_warned{false};
  std::mutex swap_mu;
  std::unordered_map<VkSwapchainKHR, std::unique_ptr<SwapchainState>> swapchains;
};

// Per instance and per device, by the loader's dispatch key; under g_mu.
extern std::shared_mutex g_mu;
extern std::unordered_map<void*, std::unique_ptr<InstanceData>> g_instances;
extern std::unordered_map<void*, std::unique_ptr<DeviceData>> g_devices;
// X11 windows of the surfaces the program made (VkSurfaceKHR -> XID): a
// swapchain on one is reported in a WindowRecord for the screen observer.
extern std::mutex g_surface_mu;
extern std::unordered_map<uint64_t, uint64_t> g_x11_windows;

// Wayland surfaces the program made (VkSurfaceKHR -> wl_surface and its
// display's feedback). Never destroyed: see WaylandSurfaces.
WaylandSurfaces& wayland_surfaces();

// The device registered under the loader's dispatch key; null when none.
DeviceData* device_of(void* key);

// The submit path's lookup (queue_table.hpp); past its capacity, the
// locked maps.
struct QueueTiming {
  DeviceData* device = nullptr;
  FamilyTiming* family = nullptr;
};
extern QueueTable<VkQueue, QueueTiming, 256> g_queue_table;

// The family timing remember_queue stored for `queue` (null: none); under queues_mu.
FamilyTiming* family_of(DeviceData* d, VkQueue queue);

// A queue's device and timing: the lock-free table, else the locked maps.
inline std::pair<DeviceData*, FamilyTiming*> device_and_family(VkQueue queue) {
  if (const QueueTiming* t = g_queue_table.find(queue)) return {t->device, t->family};
  DeviceData* d = device_of(dispatch_key(queue));
  return {d, d == nullptr ? nullptr : family_of(d, queue)};
}

// Sends an UnavailableRecord for `source`.
void send_unavailable(uint64_t source, std::string_view name, std::string_view reason);

// The first structure of `type` in a pNext chain, or nullptr.
template <class T>
const T* chain_find(const void* next, VkStructureType type) {
  for (auto* s = static_cast<const VkBaseInStructure*>(next); s != nullptr; s = s->pNext) {
    if (s->sType == type) return reinterpret_cast<const T*>(s);
  }
  return nullptr;
}

}  // namespace latlab::capture::layer
