// The Vulkan timing library of latlab (latlab::vulkan): attach to a
// program's own device (VulkanAttachment), device bootstrap (VulkanContext),
// device reports (enumerate_vulkan_devices), the backend seam's timestamp
// slots on a VkQueryPool (VulkanTimestampSlots, which the timestamp query pool and
// the profiler run on), calibration, and a ring of per-frame command buffers
// and fences (VulkanFrameRing). The benchmark rig (reference workloads, the
// latency device) is latlab/bench/vulkan_rig.hpp (latlab::vulkan_rig).
//
// Clocks: device timestamps are raw ticks; tick_format() converts them to ns.
// Host times are host_now_ns() (CLOCK_MONOTONIC), the run's one host clock.
//
// Ownership: every object is created by a factory returning an owning
// unique_ptr. Objects made from a VulkanContext keep a reference to it: the
// context must outlive them. Thread safety is stated per class.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "latlab/calibrator.hpp"
#include "latlab/clock_model.hpp"
#include "latlab/clock_sync.hpp"
#include "latlab/result.hpp"
#include "latlab/core/capability.hpp"
#include "latlab/tick_format.hpp"
#include "latlab/timestamp_query_pool.hpp"
#include "latlab/timestamp_slots.hpp"

namespace latlab {

// ---------------------------------------------------------------------------
// Device reports

struct VulkanQueueFamilyReport {
  uint32_t index = 0;
  VkQueueFlags flags = 0;
  std::string flags_text;  // e.g. "graphics|compute|transfer"
  uint32_t queue_count = 0;
  uint32_t timestamp_valid_bits = 0;  // 0: this family cannot write timestamps
};

struct VulkanDeviceReport {
  uint32_t index = 0;  // position in vkEnumeratePhysicalDevices (what --device takes)
  std::string name;
  std::string type;  // "discrete", "integrated", "virtual", "cpu", "other"
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  std::string driver_name;  // VkPhysicalDeviceDriverProperties; "" when not reported
  std::string driver_info;
  uint32_t driver_id = 0;       // VkDriverId; 0 when not reported
  uint32_t driver_version = 0;  // raw, vendor-encoded
  uint32_t api_version = 0;
  std::string api_version_text;      // "1.3.230"
  double timestamp_period_ns = 0.0;  // ns per tick
  bool timestamp_compute_and_graphics = false;
  std::vector<VulkanQueueFamilyReport> queue_families;
  bool host_query_reset = false;           // feature (Vulkan 1.2 or VK_EXT_host_query_reset)
  bool calibrated_timestamps = false;      // VK_EXT/KHR_calibrated_timestamps offered
  std::vector<std::string> time_domains;   // calibrateable: "device", "clock_monotonic", ...
  std::vector<MissingCapability> missing;  // what latlab cannot use on it, and why
  std::string device_uuid;  // VkPhysicalDeviceIDProperties::deviceUUID as text; "" before 1.1
  std::string pci_bus_id;   // "0000:18:00.0" from VK_EXT_pci_bus_info; "" when not offered
};

// Every Vulkan device the loader sees. An empty vector when there is no
// driver or no device (not an error); an Error when the loader fails otherwise.
Result<std::vector<VulkanDeviceReport>> enumerate_vulkan_devices();

// Name of a time domain as the reports spell it ("clock_monotonic", ...).
std::string time_domain_name(VkTimeDomainEXT domain);

// ---------------------------------------------------------------------------
// Context

struct VulkanContextDesc {
  // Index ("0") or case-insensitive name substring. Empty: the first discrete
  // GPU, else the first device. Default empty.
  std::string device;
  // Enable VK_LAYER_KHRONOS_validation and a VK_EXT_debug_utils messenger
  // (errors are counted, see validation_error_count()). Creation fails when
  // the layer is not installed. Default off.
  bool validation = false;
  // Highest Vulkan API version asked for; at least 1.1. Default 1.3.
  uint32_t max_api_version = VK_API_VERSION_1_3;
  // Use host query reset when the device has it. false forces query pools to
  // reset in the command buffer (exercises that path). Default true.
  bool host_query_reset = true;
  // Use VK_EXT_calibrated_timestamps (device + CLOCK_MONOTONIC) when offered.
  // false forces bracketed, estimated calibration pairs (exercises that
  // path). Default true.
  bool calibrated_timestamps = true;
  // Enable what a present path needs where offered: VK_KHR_surface and
  // VK_KHR_xcb_surface and VK_KHR_wayland_surface on the instance,
  // VK_KHR_swapchain on the device (VulkanContext::xcb_surface_enabled,
  // wayland_surface_enabled, swapchain_enabled). Default off.
  bool present = false;
  // Also open one queue of every other queue family that can write
  // timestamps (timestampValidBits > 0), for work spread over queues
  // (VulkanContext::queues()). queue() stays the queue chosen as without it.
  // Default off: one queue.
  bool all_timing_queues = false;
};

// One queue the context opened (queue 0 of its family).
struct VulkanQueueInfo {
  uint32_t family = 0;
  VkQueue queue = VK_NULL_HANDLE;
  VkQueueFlags flags = 0;
  std::string flags_text;  // e.g. "graphics|compute|transfer"
  TickFormat ticks;        // the device's period and this family's valid bits
  bool primary = false;    // the context's queue()
};

// Binary semaphores a submission waits on and signals.
struct VulkanSubmitSync {
  std::span<const VkSemaphore> wait{};                  // waited for before `wait_stages`
  std::span<const VkPipelineStageFlags> wait_stages{};  // one per wait semaphore
  std::span<const VkSemaphore> signal{};                // signalled when the work completes
};

// What the context can and cannot do, each missing piece with its reason.
struct VulkanCapabilities {
  bool timestamps = false;  // the queue family writes timestamps (valid bits > 0)
  uint32_t timestamp_valid_bits = 0;
  bool host_query_reset = false;       // vkResetQueryPool usable from the host
  bool calibrated_timestamps = false;  // VK_EXT_calibrated_timestamps enabled
  // The driver waits for the whole device to go idle inside
  // vkGetQueryPoolResults, even for available queries and without the WAIT
  // flag (lavapipe, Mesa 22.3): results stay right, but a read stalls the
  // caller while work is in flight. Reported in `missing`.
  bool query_reads_wait_idle = false;
  std::vector<std::string> time_domains;  // calibrateable domains the device offers
  // How sample_calibration() pairs device and host clock:
  // "vkGetCalibratedTimestampsEXT(device, clock_monotonic)" or
  // "bracketed submit (estimated)"; "" when the device cannot time at all.
  std::string calibration_method;
  std::string calibration_domain;      // host domain of the pairs: "CLOCK_MONOTONIC" or ""
  bool calibration_estimated = false;  // pairs are bracketed estimates
  std::vector<MissingCapability> missing;
};

// ---------------------------------------------------------------------------
// Attach: latlab on a program's own device
//
// A program that created its VkInstance, VkPhysicalDevice and VkDevice itself
// (its own extensions, features and debug callback) attaches latlab with
// VulkanAttachment::create and gets the timestamp slots the profiler and the
// timestamp query pool run on (VulkanTimestampSlots::create(attachment, ...)) and
// calibration pairs (sample_calibration, start_clock_sync). latlab creates
// nothing on the device but its query pools and, for a bracketed calibration,
// one command pool, query pool and fence; it never submits to a queue of the
// program's unless handed one with its lock, and then only on the program's
// own thread (see the queue-lock contract). VulkanContext (latlab's own
// device) is built on this same path.
//
// What latlab would like enabled (vulkan_attach_wishes lists what the device
// offers of it):
//  * host query reset (Vulkan 1.2 hostQueryReset, or VK_EXT_host_query_reset):
//    queries are reset on the host when reused. Without it they are reset in
//    the program's command buffers (vkCmdResetQueryPool, outside render
//    passes: VulkanTimestampSlots::record_pending_resets).
//  * calibrated timestamps (VK_KHR_ or VK_EXT_calibrated_timestamps with the
//    device and CLOCK_MONOTONIC domains): calibration pairs from the driver,
//    no queue touched. Without it, pairs are bracketed estimates that submit
//    a timestamp to a queue the program hands over (VulkanAttachDesc::queue
//    and queue_lock); with neither, calibration is unavailable (the reason is
//    in VulkanCapabilities::missing) and zones keep device durations only.
//
// Vulkan cannot be asked what a device was created with: the program says
// what it enabled (host_query_reset, calibrated_timestamps), or hands its
// VkDeviceCreateInfo to vulkan_attach_enabled, which reads it.

// The queue-lock contract: latlab calls it with a function that calls
// vkQueueSubmit on VulkanAttachDesc::queue; the program runs that function
// while holding whatever serialises its own submissions to that queue from
// other threads of its own (Vulkan requires external synchronisation of a
// queue), e.g.
//   [&m](const std::function<void()>& submit) { std::lock_guard l(m); submit(); }
// Called only on the program's own threads, inside its calls of
// start_clock_sync, sample_calibration and run_pending_calibration
// (vulkan::Gpu::frame), never from a thread of latlab's: a program
// that uses its queue from one thread needs no lock at all (an empty one is
// fine), and its vkQueueWaitIdle and vkDeviceWaitIdle need none. Do not hold
// that lock while making those calls.
using VulkanQueueLock = std::function<void(const std::function<void()>& submit)>;

struct VulkanAttachDesc {
  VkInstance instance = VK_NULL_HANDLE;               // required
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;  // required
  VkDevice device = VK_NULL_HANDLE;  // required by VulkanAttachment::create; unused by the wishes
  // The queue family whose queues run the command buffers latlab's
  // timestamps are recorded into (its timestampValidBits give the ticks).
  // Default 0.
  uint32_t queue_family = 0;
  // The apiVersion the program created its instance with
  // (VkApplicationInfo::apiVersion; 0 means 1.0): Vulkan 1.2's
  // vkResetQueryPool is used only when both it and the device are 1.2 or
  // newer; below 1.1 the extensions give what latlab uses (see
  // vulkan_attach_wishes). Default 1.1.
  uint32_t api_version = VK_API_VERSION_1_1;
  // What the program enabled at vkCreateDevice (vulkan_attach_enabled reads a
  // VkDeviceCreateInfo into these). Default off.
  bool host_query_reset = false;       // hostQueryReset = VK_TRUE (1.2 feature or the EXT's)
  bool calibrated_timestamps = false;  // VK_KHR_ or VK_EXT_calibrated_timestamps enabled
  // Optional: the program's loader entry points (volk's, a dispatch of its
  // own). Null: the Vulkan loader's that latlab links. Every call latlab
  // makes on the device goes through the device-level functions these give.
  PFN_vkGetInstanceProcAddr get_instance_proc_addr = nullptr;
  PFN_vkGetDeviceProcAddr get_device_proc_addr = nullptr;
  // Optional: a queue of `queue_family` latlab may submit its calibration
  // timestamp to (a few times a second at most, see ClockSync), and the lock
  // the program holds around its own submissions to it. Used only without
  // calibrated timestamps; both or neither. Default none: then, without
  // calibrated timestamps, calibration is unavailable.
  VkQueue queue = VK_NULL_HANDLE;
  VulkanQueueLock queue_lock = {};
};

// What latlab would like a program to enable at vkCreateDevice, as far as
// the device offers it.
struct VulkanAttachWishes {
  // Add to VkDeviceCreateInfo::ppEnabledExtensionNames (static strings):
  // VK_KHR_calibrated_timestamps (else VK_EXT_calibrated_timestamps) and,
  // where the device or desc.api_version is below 1.2 and the device has it,
  // VK_EXT_host_query_reset.
  std::vector<const char*> extensions;
  // Set hostQueryReset = VK_TRUE: in the program's own
  // VkPhysicalDeviceVulkan12Features or VkPhysicalDeviceHostQueryResetFeatures
  // if it chains one, else by chaining `host_query_reset_features` (its
  // pNext is null: link it into the VkDeviceCreateInfo's chain).
  bool host_query_reset = false;
  VkPhysicalDeviceHostQueryResetFeatures host_query_reset_features{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES, nullptr, VK_TRUE};
  // What the device cannot give latlab, with what that costs.
  std::vector<MissingCapability> unavailable;
};

// Reads desc.instance and desc.physical_device (through
// desc.get_instance_proc_addr) before the program creates its device.
// desc.api_version must be the instance's apiVersion. Never names an
// extension whose dependencies are not met: on a Vulkan 1.0 instance both
// extensions need VK_KHR_get_physical_device_properties2 enabled on the
// instance (vulkan_attach_instance_extensions); without it `extensions` is
// empty and `unavailable` says why. Error when the handles give no entry
// points.
Result<VulkanAttachWishes> vulkan_attach_wishes(const VulkanAttachDesc& desc);

// What latlab would like enabled at vkCreateInstance for an instance of
// `api_version`: VK_KHR_get_physical_device_properties2 below Vulkan 1.1,
// where the loader offers it (the device extensions of VulkanAttachWishes
// depend on it there); nothing at 1.1 and above. `gipa` null: the loader's.
std::vector<const char*> vulkan_attach_instance_extensions(
    uint32_t api_version, PFN_vkGetInstanceProcAddr gipa = nullptr);

// Sets desc.host_query_reset and desc.calibrated_timestamps from what `info`
// enables (ppEnabledExtensionNames; hostQueryReset in a
// VkPhysicalDeviceHostQueryResetFeatures or VkPhysicalDeviceVulkan12Features
// of its pNext chain).
void vulkan_attach_enabled(const VkDeviceCreateInfo& info, VulkanAttachDesc& desc);

// latlab's timing on a device it does not own: the device's report and
// capabilities, its tick format, and calibration pairs. Makes the objects
// of the bracketed calibration only when it will use it (no calibrated
// timestamps, a queue handed over).
//
// Threads: everything is safe from any thread; sample_calibration()
// serialises itself. Ownership: borrows the program's handles; the device
// must outlive the attachment, and the attachment every ClockSync started
// on it. Slots made from it only need the device.
class VulkanAttachment {
 public:
  // Error (with what to do): a null handle, queue_family out of range,
  // entry points missing, or the calibration's objects cannot be created.
  // Any Vulkan version (1.0 too: see vulkan_attach_wishes). A family that cannot time is not an
  // error: capabilities().timestamps is false (with the reason).
  static Result<std::unique_ptr<VulkanAttachment>> create(const VulkanAttachDesc& desc);
  ~VulkanAttachment();  // destroys latlab's calibration objects (the device must still exist)
  VulkanAttachment(const VulkanAttachment&) = delete;
  VulkanAttachment& operator=(const VulkanAttachment&) = delete;

  VkInstance instance() const;
  VkPhysicalDevice physical_device() const;
  VkDevice device() const;
  uint32_t queue_family() const;
  uint32_t api_version() const;  // used version: min(desc.api_version, device)
  const VkPhysicalDeviceProperties& properties() const;
  std::string device_name() const;
  // The device as enumerate_vulkan_devices reports it (its index is 0:
  // the attachment does not know the program's list).
  const VulkanDeviceReport& report() const;
  // Period and valid bits of queue_family()'s timestamps.
  const TickFormat& tick_format() const;
  // The same for another family of the device.
  TickFormat tick_format(uint32_t family) const;
  // What latlab can do on the device as the program created it; every
  // missing piece with its reason (host query reset or calibrated timestamps
  // offered but not enabled, no queue handed for calibration, ...).
  const VulkanCapabilities& capabilities() const;

  // One calibration pair: see VulkanContext::sample_calibration. With
  // calibrated timestamps: the driver's pair, no queue touched. Otherwise
  // the bracketed estimate, submitted to desc.queue under desc.queue_lock
  // (blocks until its fence). Error with the reason when neither is
  // possible. Thread-safe.
  Result<CalibrationPair> sample_calibration() const;

  // Submits the bracketed calibration sample a ClockSync's refresh is
  // waiting for, if any, on the calling thread under desc.queue_lock (which
  // the caller must not hold); otherwise returns at once (an atomic
  // increment and load). vulkan::Gpu::frame calls it: a program with
  // a vulkan::Gpu never calls it. Call it from the thread that uses the
  // queue handed over (the frame loop), once a frame: latlab never submits
  // to that queue from a thread of its own.
  void run_pending_calibration() const;

  // Host query reset entry point; null when the program did not enable it.
  PFN_vkResetQueryPoolEXT reset_query_pool_fn() const;

  struct Impl;  // private state (src/backends/vulkan/vulkan_attach_parts.hpp)
  const Impl& impl() const { return *impl_; }

 private:
  friend class VulkanContext;  // marks its own queue as submittable from any thread
  explicit VulkanAttachment(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The calibrator and its refresh on the attached device (see
// clock_sync.hpp): prof->set_clock_mapper(clock->mapper()). Never fails:
// without a way to calibrate the ClockSync is unavailable, with the reason.
// The attachment must outlive it. With calibrated timestamps no queue is
// touched. With the bracketed estimate, the start-up samples are submitted
// on the calling thread (under desc.queue_lock); the refresh thread's are
// submitted by the program's thread in its next run_pending_calibration()
// (vulkan::Gpu::frame): without such calls the refresh fails and the
// last fit stays.
std::unique_ptr<ClockSync> start_clock_sync(const VulkanAttachment& device,
                                            const CalibratorDesc& desc = {});

// Instance, physical device, logical device and one queue that can time
// (with VulkanContextDesc::all_timing_queues, one queue of every family that
// can time; all share the device's one calibration).
//
// Threads: the accessors are safe from any thread. Queues are shared:
// submit through submit()/run_one_shot(), or hold queue_mutex() (of that
// family) around your own vkQueueSubmit. validation_* and
// sample_calibration() are thread-safe.
class VulkanContext {
 public:
  static Result<std::unique_ptr<VulkanContext>> create(const VulkanContextDesc& desc = {});
  ~VulkanContext();
  VulkanContext(const VulkanContext&) = delete;
  VulkanContext& operator=(const VulkanContext&) = delete;

  VkInstance instance() const;
  VkPhysicalDevice physical_device() const { return physical_; }
  VkDevice device() const;
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return family_; }
  uint32_t device_index() const { return device_index_; }
  uint32_t api_version() const { return api_version_; }  // used version: min(instance, device)
  const VkPhysicalDeviceProperties& properties() const { return props_; }
  std::string device_name() const { return props_.deviceName; }
  const VulkanDeviceReport& report() const { return report_; }
  // Tick period and valid bits of the chosen queue's timestamps.
  const TickFormat& tick_format() const { return ticks_; }
  const VulkanCapabilities& capabilities() const { return caps_; }

  // Every opened queue, queue() first; more than one only with
  // VulkanContextDesc::all_timing_queues on a device with several families
  // that can time.
  const std::vector<VulkanQueueInfo>& queues() const { return queues_; }
  // The opened queue of `family`; null when the context did not open one.
  const VulkanQueueInfo* find_queue(uint32_t family) const;
  // Queue families the context did not open, each with the reason
  // (name "queue family N (flags)": cannot time, or not asked for).
  const std::vector<MissingCapability>& unopened_queue_families() const { return unopened_; }

  // Validation-layer messages of ERROR severity seen so far (0 without validation).
  uint64_t validation_error_count() const;
  // Validation messages (errors and warnings, "[error] ..."), oldest first, bounded.
  std::vector<std::string> validation_messages() const;

  // Guards the queue: hold it around any vkQueueSubmit/vkQueueWaitIdle.
  std::mutex& queue_mutex() const { return queue_mutex_; }
  // The mutex of the opened queue of `family` (queue_mutex() for queue()'s
  // family, or for a family without an opened queue).
  std::mutex& queue_mutex(uint32_t family) const;
  // vkQueueSubmit of one command buffer signalling `fence` (may be null).
  Result<void> submit(VkCommandBuffer cmd, VkFence fence) const;
  // The same on the opened queue of `family`, waiting on and signalling the
  // semaphores of `sync`. Error when no queue of `family` is open.
  Result<void> submit(uint32_t family, VkCommandBuffer cmd, VkFence fence,
                      const VulkanSubmitSync& sync = {}) const;
  // Records `record` into a fresh command buffer, submits it and waits for
  // its fence (blocks). For set-up work, not for frames. Any thread.
  Result<void> run_one_shot(const std::function<void(VkCommandBuffer)>& record) const;

  // One calibration pair now: device ticks and host-clock (CLOCK_MONOTONIC)
  // ns taken together. With VK_EXT_calibrated_timestamps offering the device
  // and CLOCK_MONOTONIC domains: vkGetCalibratedTimestampsEXT, max deviation
  // as the driver reports it; the queue is not touched. Otherwise an
  // estimate: a timestamp written by a tiny submitted command buffer,
  // bracketed by host reads before the submit and after its fence; the pair
  // is (ticks, bracket midpoint), max deviation half the bracket, estimated.
  // Never CLOCK_MONOTONIC_RAW (not the run's host clock). Blocks for the
  // estimated submit; error when the device cannot time. Thread-safe.
  Result<CalibrationPair> sample_calibration() const;

  // A memory type index among `type_bits` with all of `want` (error if none).
  Result<uint32_t> find_memory_type(uint32_t type_bits, VkMemoryPropertyFlags want) const;

  // VulkanContextDesc::present: the instance has VK_KHR_xcb_surface or
  // VK_KHR_wayland_surface, the device VK_KHR_swapchain.
  bool xcb_surface_enabled() const { return xcb_surface_; }
  bool wayland_surface_enabled() const { return wayland_surface_; }
  bool swapchain_enabled() const { return swapchain_; }

  // Host query reset entry point (core 1.2 or EXT); null when unavailable.
  PFN_vkResetQueryPoolEXT reset_query_pool_fn() const { return attachment_->reset_query_pool_fn(); }

  // latlab's timing on this context's device: the same attach path a
  // program's own device takes (timestamp slots, calibration). Queue
  // submissions of its calibration go through queue_mutex().
  const VulkanAttachment& attachment() const { return *attachment_; }

 private:
  VulkanContext() = default;
  struct Validation;  // messenger state, address-stable for the callback
  struct Owned;       // instance, messenger, device
  struct OneShot;     // command pool for run_one_shot
  // create()'s steps, in order.
  Result<void> open_instance(const VulkanContextDesc& desc);
  Result<void> open_device(const VulkanContextDesc& desc);
  Result<void> attach(const VulkanContextDesc& desc);
  VulkanAttachDesc attach_desc() const;  // instance, physical device, queue family, API

  // Members go in reverse order: the attachment and the one-shot pool
  // before the device (owned_), and the messenger before the state its
  // callback writes (validation_).
  std::unique_ptr<Validation> validation_;
  std::unique_ptr<Owned> owned_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t family_ = 0;
  uint32_t device_index_ = 0;
  uint32_t api_version_ = 0;
  uint32_t instance_api_ = 0;  // the version the instance was created at
  bool xcb_surface_ = false;
  bool wayland_surface_ = false;
  bool swapchain_ = false;
  bool host_reset_ = false;      // enabled at vkCreateDevice
  bool calibrated_ext_ = false;  // calibrated timestamps offered (enabled by the wishes)
  VkPhysicalDeviceProperties props_{};
  VkPhysicalDeviceMemoryProperties memory_{};
  VulkanDeviceReport report_;
  TickFormat ticks_;
  VulkanCapabilities caps_;
  std::unique_ptr<OneShot> one_shot_;
  std::unique_ptr<VulkanAttachment> attachment_;
  mutable std::mutex queue_mutex_;
  std::vector<VulkanQueueInfo> queues_;                           // queues_[0] is queue_
  std::vector<std::unique_ptr<std::mutex>> extra_queue_mutexes_;  // one per queues_[1..]
  std::vector<MissingCapability> unopened_;
};

// ---------------------------------------------------------------------------
// Timestamp slots

struct VulkanTimestampSlotsDesc {
  // Timestamp queries in the VkQueryPool (>= 2). Default 8192 (the
  // profiler's defaults: 1024 zones a frame, 3 frames in flight).
  uint32_t count = 8192;
  // Refuse a device without host query reset (create_vulkan_profiler on a
  // VulkanContext sets it, so its zones may sit inside render passes with
  // nothing else to call). Default off: resets then go into the command
  // buffers (record_pending_resets, or the next one that writes the slot).
  bool require_host_reset = false;
  // The queue family whose queue writes the slots (on a VulkanContext, an
  // opened queue of the context): its timestampValidBits give
  // tick_format(). Default: the context's queue(), or the attachment's
  // queue_family().
  std::optional<uint32_t> queue_family = std::nullopt;
};

// The backend seam's TimestampSlots on one VkQueryPool: the only owner of
// Vulkan timestamp queries in latlab. The timestamp query pool
// (TimestampQueryPool::create(slots, ...)) and the profiler
// (GpuProfiler::create(slots, ...)) run on it.
//
// Writes: vkCmdWriteTimestamp, TOP_OF_PIPE for a begin edge, BOTTOM_OF_PIPE
// for an end edge. Reads: vkGetQueryPoolResults(64-bit, WITH_AVAILABILITY),
// never the WAIT flag (lavapipe in Mesa 22.3 waits for idle inside that call
// anyway: VulkanCapabilities::query_reads_wait_idle).
//
// Resets: on the host (vkResetQueryPool) when the device has host query
// reset and the slots' previous use is done; otherwise the reset is recorded
// into a command buffer: every reset owed at once by record_pending_resets(cmd)
// (call it at the start of a frame, outside a render pass, in a command
// buffer the queue runs before the frame's writes), else, for a slot still
// owed one, by the write itself (vkCmdResetQueryPool before the timestamp,
// so such a write must be outside a render pass). The queue orders the
// reset after the previous use. Until that reset has run, the old value
// still reads as available; it is recognised by its tick value and read as
// unavailable.
//
// Threads: write() from any recording thread, each with its own command
// buffer, while no reset is owed (host-reset slots, or after
// record_pending_resets); a write that records a reset itself must not race
// another write; read/reset/record_pending_resets from one thread at a time.
// The device (the context, or the program's device) must outlive the slots;
// they use nothing else of the context or attachment after create(). The
// destructor waits for the device to go idle
// (vkDeviceWaitIdle) before vkDestroyQueryPool, so letting the last owner go
// (TimestampQueryPool::dispose, a profiler's destruction) is safe while
// frames that wrote the slots are still in flight; like vkDeviceWaitIdle, it
// must not run while another thread submits to this device's queues.
class VulkanTimestampSlots final : public TimestampSlots {
 public:
  // Error when the VkQueryPool cannot be created, or (require_host_reset)
  // the queue cannot time or the device has no host query reset. On a queue
  // with 0 valid bits and without require_host_reset, the slots are made but
  // can_time() is false (users time nothing).
  static Result<std::shared_ptr<VulkanTimestampSlots>> create(
      const VulkanContext& ctx, const VulkanTimestampSlotsDesc& desc = {});
  // The same on a program's device (the one path: the context's overload
  // checks its queue and comes here).
  static Result<std::shared_ptr<VulkanTimestampSlots>> create(
      const VulkanAttachment& device, const VulkanTimestampSlotsDesc& desc = {});
  ~VulkanTimestampSlots() override;

  uint32_t slot_count() const override { return count_; }
  TickFormat tick_format() const override { return ticks_; }
  bool can_time() const override { return pool_ != VK_NULL_HANDLE; }
  // `stream` is a VkCommandBuffer in the recording state.
  void write(GpuCommandStream stream, uint32_t slot, TimestampEdge edge) override;
  void read(uint32_t first, std::span<SlotReading> out) override;
  void reset(uint32_t first, uint32_t count, bool previous_use_done) override;

  // Records every reset still owed (only without host resets) into `cmd`,
  // outside a render pass, before the writes that follow it in queue order.
  // Returns the slots reset (0: nothing was owed; always 0 with host reset).
  uint32_t record_pending_resets(VkCommandBuffer cmd);
  // Slots whose reset is owed and not yet recorded.
  uint32_t pending_resets() const { return pending_count_.load(std::memory_order_relaxed); }

  VkQueryPool handle() const { return pool_; }
  bool uses_host_reset() const { return host_reset_ != nullptr; }
  // vkGetQueryPoolResults calls that failed (device lost, out of memory):
  // their slots read as unavailable.
  uint64_t read_errors() const { return read_errors_.load(std::memory_order_relaxed); }

 private:
  VulkanTimestampSlots(const VulkanAttachment& device, uint32_t count);
  uint32_t record_resets(VkCommandBuffer cmd, uint32_t first, uint32_t count);
  // write()'s rare path, out of line so that write() needs no stack frame.
  [[gnu::noinline]] void write_after_resets(VkCommandBuffer cmd, uint32_t slot, TimestampEdge edge);
  void remember_stale(uint32_t first, uint32_t count);
  void mark_stale(uint32_t slot, bool valid, uint64_t value);

  // The device's entry points (vk_dispatch.hpp): write() calls the driver
  // directly, not through the loader's trampoline.
  PFN_vkCmdWriteTimestamp cmd_write_timestamp_ = nullptr;
  VkQueryPool pool_ = VK_NULL_HANDLE;
  uint32_t count_ = 0;
  // Slots whose command-buffer reset is owed and not recorded: write() takes
  // its rare path while it is not 0.
  std::atomic<uint32_t> pending_count_{0};
  VkDevice device_ = VK_NULL_HANDLE;
  PFN_vkResetQueryPoolEXT host_reset_ = nullptr;
  PFN_vkCmdResetQueryPool cmd_reset_query_pool_ = nullptr;
  PFN_vkGetQueryPoolResults get_query_pool_results_ = nullptr;
  PFN_vkDestroyQueryPool destroy_query_pool_ = nullptr;
  PFN_vkDeviceWaitIdle device_wait_idle_ = nullptr;
  TickFormat ticks_;
  std::atomic<uint64_t> read_errors_{0};
  // Slots whose reset is recorded, not done: a reset owed to the next write,
  // and the old value still there until it runs.
  struct Owed {
    bool reset_pending = false;  // a command-buffer reset is owed, not recorded
    bool stale_valid = false;    // the query may still hold `stale` from its previous use
    uint64_t stale = 0;
  };
  std::vector<Owed> owed_;
  uint32_t stale_count_ = 0;       // slots with stale_valid: reads skip the check at 0
  std::vector<uint64_t> scratch_;  // remember_stale's reads (value, availability), grown once
};

// A timestamp query pool on its own VulkanTimestampSlots of desc.max_queries slots.
Result<std::unique_ptr<TimestampQueryPool>> create_vulkan_query_pool(const VulkanContext& ctx,
                                                                     const QueryPoolDesc& desc);
Result<std::unique_ptr<TimestampQueryPool>> create_vulkan_query_pool(const VulkanAttachment& device,
                                                                     const QueryPoolDesc& desc);

// ---------------------------------------------------------------------------
// Frames in flight

// A ring of primary command buffers, each with its fence, for frames in
// flight, on one queue of the context. Slot i is free again once wait() saw
// its fence. Not thread-safe.
namespace vk {
struct FrameRingObjects;  // src/backends/vulkan/vulkan_frame_ring.cpp
}  // namespace vk

class VulkanFrameRing {
 public:
  // `queue_family`: an opened queue of the context; default its queue().
  static Result<std::unique_ptr<VulkanFrameRing>> create(const VulkanContext& ctx, uint32_t slots,
                                                         std::optional<uint32_t> queue_family = {});
  ~VulkanFrameRing();  // waits for every slot still in flight
  VulkanFrameRing(const VulkanFrameRing&) = delete;
  VulkanFrameRing& operator=(const VulkanFrameRing&) = delete;

  uint32_t size() const { return static_cast<uint32_t>(slots_.size()); }
  bool in_flight(uint32_t slot) const { return slots_[slot].in_flight; }
  VkFence fence(uint32_t slot) const;
  // Resets and begins slot's command buffer (one-time submit; `reusable`:
  // without the one-time flag, for submit_recorded). Error when the slot is
  // still in flight (wait() first) or the driver fails.
  Result<VkCommandBuffer> begin(uint32_t slot, bool reusable = false);
  // Ends the command buffer and submits it with the slot's fence (and the
  // semaphores of `sync`, which must outlive the call only).
  Result<void> submit(uint32_t slot, const VulkanSubmitSync& sync = {});
  uint32_t queue_family() const { return family_; }
  // Ends the command buffer without submitting it (begin(slot, true) first).
  Result<void> end(uint32_t slot);
  // Submits the slot's command buffer as last recorded and ended (reusable)
  // again, with the slot's fence. Records nothing.
  Result<void> submit_recorded(uint32_t slot);
  // Blocks (vkWaitForFences, no spinning) until the slot's work completed or
  // `timeout_ns` passed. true: completed (the slot is free); false: timeout.
  Result<bool> wait(uint32_t slot, uint64_t timeout_ns = UINT64_MAX);
  // Waits for every slot in flight.
  Result<void> wait_all(uint64_t timeout_ns = UINT64_MAX);

 private:
  explicit VulkanFrameRing(const VulkanContext& ctx);
  Result<void> submit_slot(uint32_t slot, const VulkanSubmitSync& sync);
  struct Slot {
    VkCommandBuffer cmd = VK_NULL_HANDLE;  // freed with the pool
    bool in_flight = false;
  };
  const VulkanContext& ctx_;
  uint32_t family_ = 0;
  std::unique_ptr<vk::FrameRingObjects> o_;  // the pool and one fence per slot (private)
  std::vector<Slot> slots_;
};

}  // namespace latlab
