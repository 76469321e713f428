// The GPU profiler on Vulkan: zones are recorded into VkCommandBuffers and
// timed by the backend's VulkanTimestampSlots (vulkan.hpp).
//
//   auto prof = create_vulkan_profiler(ctx, {.name = "graphics"}).value();
//   LATLAB_GPU_ZONE(prof, cmd, "shadows");  // cmd: a VkCommandBuffer
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
#pragma once

#include <memory>

#include "latlab/profiler.hpp"
#include "latlab/result.hpp"
#include "latlab/vulkan.hpp"

namespace latlab {

// The profiler on VulkanTimestampSlots of GpuProfiler::slots_needed(desc)
// slots. Errors (with what to do): the queue cannot write timestamps, the
// device has no host query reset, the query pool cannot be created.
inline Result<std::unique_ptr<GpuProfiler>> create_vulkan_profiler(const VulkanContext& ctx,
                                                                   GpuProfilerDesc desc = {}) {
  auto slots = VulkanTimestampSlots::create(
      ctx, {.count = GpuProfiler::slots_needed(desc), .require_host_reset = true});
  if (!slots) return slots.error();
  return GpuProfiler::create(std::move(slots.value()), std::move(desc));
}

}  // namespace latlab
