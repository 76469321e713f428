// The GPU profiler on Vulkan: zones are recorded into VkCommandBuffers and
// timed by the backend's VulkanTimestampSlots (vulkan.hpp).
//
//   auto prof = create_vulkan_profiler(ctx, {.name = "graphics"}).value();
//   LATLAB_GPU_ZONE(prof, cmd, "shadows");  // cmd: a VkCommandBuffer
//
// Both profilers here are VulkanGpuProfilers: their zones take a
// VkCommandBuffer and nothing else (a cudaStream_t or a void* does not
// compile; see TypedGpuProfiler in profiler.hpp).
//
// Zone begin: vkCmdWriteTimestamp(TOP_OF_PIPE), zone end: BOTTOM_OF_PIPE, so a
// zone spans from when its first command may start to when everything
// recorded before its end has finished (children lie inside their parent;
// siblings may overlap on the device). Record zones outside or inside render
// passes alike: the profiler's slots are reset on the host (vkResetQueryPool)
// when next_frame() reuses them for a new frame, so the device must have host
// query reset (core in Vulkan 1.2; lavapipe and NVIDIA have it), and no reset
// is ever recorded. Keep at most frames_in_flight frames on the device (wait a
// frame's fence before submitting the one frames_in_flight after it): the
// reset then always follows the wait for the queries' previous frame.
//
// Ownership: the profiler shares its slots, which refer to the context: the
// context must outlive the profiler; destroy the profiler only after the
// device finished every command buffer it recorded into.
//
// On a program's own device (VulkanAttachment, see vulkan.hpp), VulkanProfiler:
//
//   auto gpu = VulkanProfiler::create(*attachment, {.name = "graphics"}).value();
//   auto clock = start_clock_sync(*attachment);
//   gpu->profiler().set_clock_mapper(clock->mapper());
//   each frame, first thing in its first command buffer (outside a render pass):
//     gpu->new_frame(cmd);                   // like TracyVkCollect(ctx, cmd)
//     { LATLAB_GPU_ZONE(gpu, cmd, "shadows"); ... }
//
// Where the program did not enable host query reset, new_frame records the
// resets the frame's queries need into `cmd` (vkCmdResetQueryPool); that
// command buffer must run before the frame's zones on the queue (the same
// one, or one submitted earlier to the same queue). Zones may then sit inside
// render passes and be recorded from several threads, as with host reset.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "latlab/profiler.hpp"
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

// The profiler on a program's device, with the slots it records into.
// Threads: new_frame() from the thread that owns frames (the profiler's
// next_frame rules); zones from any thread once new_frame has run for the
// frame. Ownership: the attachment (and the device) must outlive it;
// destroy it only after the device finished every command buffer it
// recorded into.
class VulkanProfiler {
 public:
  // The slots (GpuProfiler::slots_needed(desc)) on the attachment's queue
  // family, host-reset where the program enabled host query reset. Errors:
  // the family cannot write timestamps, the query pool cannot be created.
  static Result<std::unique_ptr<VulkanProfiler>> create(const VulkanAttachment& device,
                                                        GpuProfilerDesc desc = {}) {
    auto slots = VulkanTimestampSlots::create(device, {.count = GpuProfiler::slots_needed(desc)});
    if (!slots) return slots.error();
    if (!slots.value()->can_time()) {
      return make_error("GPU profiler: the queue family " + std::to_string(device.queue_family()) +
                        " of '" + device.device_name() +
                        "' cannot write timestamps (0 valid bits)");
    }
    auto prof = VulkanGpuProfiler::create(slots.value(), std::move(desc));
    if (!prof) return prof.error();
    return std::unique_ptr<VulkanProfiler>(
        new VulkanProfiler(device, std::move(slots.value()), std::move(prof.value())));
  }

  VulkanGpuProfiler& profiler() const { return *profiler_; }
  VulkanTimestampSlots& slots() const { return *slots_; }

  // Once per frame, before its zones: closes the previous frame and collects
  // what is ready (GpuProfiler::next_frame), then records the resets the new
  // frame's queries are owed into `cmd` (a command buffer in the recording
  // state, outside a render pass, run before the frame's zones on their
  // queue). With host query reset nothing is recorded and `cmd` may be
  // VK_NULL_HANDLE. A bracketed calibration sample the clock sync's refresh
  // asked for is submitted here, on this thread, under the queue lock
  // (VulkanAttachment::run_pending_calibration). Returns the new frame's id.
  uint64_t new_frame(VkCommandBuffer cmd) {
    device_->run_pending_calibration();
    const uint64_t id = profiler_->next_frame();
    if (cmd != VK_NULL_HANDLE) slots_->record_pending_resets(cmd);
    return id;
  }

 private:
  VulkanProfiler(const VulkanAttachment& device, std::shared_ptr<VulkanTimestampSlots> slots,
                 std::unique_ptr<VulkanGpuProfiler> prof)
      : device_(&device), slots_(std::move(slots)), profiler_(std::move(prof)) {}
  const VulkanAttachment* device_;
  std::shared_ptr<VulkanTimestampSlots> slots_;
  std::unique_ptr<VulkanGpuProfiler> profiler_;  // declared after slots_: destroyed first
};

namespace detail {
// LATLAB_GPU_ZONE(gpu, cmd, "name") with a VulkanProfiler: typed as its profiler.
inline VulkanGpuProfiler* profiler_ptr(VulkanProfiler& p) { return &p.profiler(); }
inline VulkanGpuProfiler* profiler_ptr(VulkanProfiler* p) {
  return p != nullptr ? &p->profiler() : nullptr;
}
inline VulkanGpuProfiler* profiler_ptr(const std::unique_ptr<VulkanProfiler>& p) {
  return p ? &p->profiler() : nullptr;
}
}  // namespace detail

}  // namespace latlab
