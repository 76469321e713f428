// The GPU profiler on Vulkan: zones are recorded into VkCommandBuffers and
// timed by VulkanTimestampSlots (vulkan.hpp).
//
// On a program's own device, one object (Tracy's TracyVkContext):
//
//   auto gpu = latlab::vulkan::attach({.device = {.instance = instance,
//       .physical_device = physical, .device = device, .queue_family = family,
//       .api_version = VK_API_VERSION_1_0, .queue = queue, .queue_lock = lock},
//       .profiler = {.name = "graphics", .frames_in_flight = 2}});
//   if (!gpu) ... gpu.error().message
//   each frame, first thing in its first command buffer (outside a render pass):
//     (*gpu)->frame(cmd);                        // like TracyVkCollect(ctx, cmd)
//     { LATLAB_GPU_ZONE(*gpu, cmd, "shadows"); ... }
//   after the last fence: (*gpu)->finish(); (*gpu)->stat_table()
//
// The zones of a vulkan::Gpu (and of create_vulkan_profiler's bare
// profiler on latlab's own VulkanContext) take a VkCommandBuffer and nothing
// else: a cudaStream_t or a void* does not compile (TypedGpuProfiler in
// profiler.hpp).
//
// Zone begin: vkCmdWriteTimestamp(TOP_OF_PIPE), zone end: BOTTOM_OF_PIPE, so a
// zone spans from when its first command may start to when everything
// recorded before its end has finished (children lie inside their parent;
// siblings may overlap on the device). Keep at most frames_in_flight frames
// on the device (wait a frame's fence before submitting the one
// frames_in_flight after it): the reset of a frame's queries then always
// follows the wait for their previous frame. With host query reset (core in
// 1.2, VK_EXT_host_query_reset before) the resets are done on the host;
// without it frame(cmd) records them into `cmd`, which must run before the
// frame's zones on the queue (the same command buffer, or one submitted
// earlier to the same queue). Zones may sit inside render passes and be
// recorded from several threads either way.
//
// The queue: latlab never submits to the program's queue from a thread of
// its own. Where the device has no calibrated timestamps and a queue was
// handed over, the clock sync's bracketed samples are submitted in frame(),
// on the program's thread, under desc.device.queue_lock.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "latlab/clock_sync.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_attached.hpp"
#include "latlab/result.hpp"
#include "latlab/vulkan.hpp"

namespace latlab {

// A GpuProfiler whose zones record into VkCommandBuffers.
using VulkanGpuProfiler = TypedGpuProfiler<VkCommandBuffer>;

// The profiler on VulkanTimestampSlots of GpuProfiler::slots_needed(desc)
// slots. Errors (with what to do): the queue cannot write timestamps, the
// device has no host query reset, the query pool cannot be created.
inline Result<std::unique_ptr<VulkanGpuProfiler>> create_vulkan_profiler(
    const VulkanContext& ctx, GpuProfilerDesc desc = {}) {
  auto slots = VulkanTimestampSlots::create(
      ctx, {.count = GpuProfiler::slots_needed(desc), .require_host_reset = true});
  if (!slots) return slots.error();
  return VulkanGpuProfiler::create(std::move(slots.value()), std::move(desc));
}

namespace vulkan {

// What vulkan::attach needs: the program's device (VulkanAttachDesc: its
// instance, physical device, device, queue family, and optionally the queue
// and the lock it holds around that queue's use, for the bracketed
// calibration) and the profiler's shape.
struct AttachDesc {
  VulkanAttachDesc device;
  GpuProfilerDesc profiler;
  CalibratorDesc clock = {};  // the clock sync's calibration and refresh
};

// One owner of everything latlab keeps on a Vulkan device: the attachment,
// the profiler's timestamp slots, the clock sync and the profiler (with the
// trace, stats and teardown of AttachedProfiler). Zones take a
// VkCommandBuffer.
//
// Threads: frame() from the thread that owns frames and uses the queue
// handed over; zones from any thread once frame() has run for the frame.
// Ownership: the program's device must outlive it; destroy it only after
// the device finished every command buffer it recorded into.
// Holds the attachment vulkan::attach made, as Gpu's first base: destroyed
// after the profiler, its slots and the clock sync that use it.
struct OwnedAttachment {
  std::unique_ptr<VulkanAttachment> attachment;
};

class Gpu final : private OwnedAttachment, public AttachedProfiler<VkCommandBuffer> {
 public:
  // Attaches to the program's device. Errors (with what to do): a null
  // handle, the queue family cannot write timestamps, the query pool cannot
  // be created.
  static Result<std::unique_ptr<Gpu>> attach(const AttachDesc& desc) {
    auto device = VulkanAttachment::create(desc.device);
    if (!device) return device.error();
    const VulkanAttachment& d = *device.value();
    return make(std::move(device.value()), d, desc.profiler, desc.clock);
  }
  // The same on an attachment the program keeps (to read its capabilities
  // first, say), or on latlab's own VulkanContext; either must outlive it.
  static Result<std::unique_ptr<Gpu>> attach(const VulkanAttachment& device,
                                             GpuProfilerDesc desc = {}, CalibratorDesc clock = {}) {
    return make(nullptr, device, std::move(desc), clock);
  }
  static Result<std::unique_ptr<Gpu>> attach(const VulkanContext& ctx, GpuProfilerDesc desc = {}) {
    return make(nullptr, ctx.attachment(), std::move(desc), {});
  }
  ~Gpu() = default;

  // Once per frame, first thing in its first command buffer (outside a
  // render pass), like TracyVkCollect: closes the previous frame if it holds
  // a zone, collects what is ready (never waits), and records into `cmd` the
  // query resets the new frame is owed where the program did not enable host
  // query reset (with it, `cmd` may be VK_NULL_HANDLE). `cmd` must run
  // before the frame's zones on their queue. A calibration sample the clock
  // sync's refresh asked for is submitted here, on this thread, under the
  // queue lock (which the caller must not hold). Returns the frame's id.
  uint64_t frame(VkCommandBuffer cmd) {
    device_->run_pending_calibration();
    const uint64_t id = profiler().next_frame();
    if (cmd != VK_NULL_HANDLE) slots_->record_pending_resets(cmd);
    return id;
  }

  const VulkanAttachment& device() const { return *device_; }
  VulkanTimestampSlots& slots() const { return *slots_; }

 private:
  static Result<std::unique_ptr<Gpu>> make(std::unique_ptr<VulkanAttachment> owned,
                                           const VulkanAttachment& device, GpuProfilerDesc desc,
                                           const CalibratorDesc& clock_desc) {
    auto slots = VulkanTimestampSlots::create(device, {.count = GpuProfiler::slots_needed(desc)});
    if (!slots) return slots.error();
    if (!slots.value()->can_time()) {
      return make_error("GPU profiler: the queue family " + std::to_string(device.queue_family()) +
                        " of '" + device.device_name() +
                        "' cannot write timestamps (0 valid bits)");
    }
    auto prof = VulkanGpuProfiler::create(slots.value(), std::move(desc));
    if (!prof) return prof.error();
    std::unique_ptr<ClockSync> clock = start_clock_sync(device, clock_desc);
    return std::unique_ptr<Gpu>(new Gpu(std::move(owned), device, std::move(slots.value()),
                                        std::move(prof.value()), std::move(clock)));
  }
  Gpu(std::unique_ptr<VulkanAttachment> owned, const VulkanAttachment& device,
      std::shared_ptr<VulkanTimestampSlots> slots, std::unique_ptr<VulkanGpuProfiler> prof,
      std::unique_ptr<ClockSync> clock)
      : OwnedAttachment{std::move(owned)},
        AttachedProfiler(std::move(prof), std::move(clock)),
        device_(&device),
        slots_(std::move(slots)) {}
  const VulkanAttachment* device_;
  std::shared_ptr<VulkanTimestampSlots> slots_;
};

// latlab::vulkan::attach(desc): Gpu::attach.
inline Result<std::unique_ptr<Gpu>> attach(const AttachDesc& desc) { return Gpu::attach(desc); }
inline Result<std::unique_ptr<Gpu>> attach(const VulkanContext& ctx, GpuProfilerDesc desc = {}) {
  return Gpu::attach(ctx, std::move(desc));
}

}  // namespace vulkan

}  // namespace latlab
