// `latlab profile --queues all`: the rig, recording and running its frames
// (profile_queues_rig.hpp).
#include "profile_queues_rig.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "latlab/host_clock.hpp"
// This command exists to show the profiler: its zones stay in whatever
// LATLAB_ENABLE_PROFILER the build chose for user code.
#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "interrupt_scope.hpp"
#include "latlab/bench/vulkan_rig.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_queues.hpp"
#include "latlab/profiler_trace.hpp"
#include "latlab/vulkan.hpp"

namespace latlab::cli {

// The zones of one reference frame (the tree in latlab/core/profile_rig.hpp)
// on the graphics command buffer of --queues all.
void record_reference_frame(VulkanGpuProfiler& prof, VulkanComputeWorkload& compute,
                            VulkanFragmentWorkload& fragment, VkCommandBuffer cmd, uint32_t c) {
  const uint32_t c2 = std::min<uint32_t>(4096, 2 * c);
  LATLAB_GPU_ZONE(prof, cmd, "frame");
  {
    LATLAB_GPU_ZONE(prof, cmd, "simulate");
    compute.record_pass(cmd, c, 0);
  }
  {
    LATLAB_GPU_ZONE(prof, cmd, "lighting");
    {
      LATLAB_GPU_ZONE(prof, cmd, "lighting.direct");
      compute.record_pass(cmd, c2, 1);
    }
    {
      LATLAB_GPU_ZONE(prof, cmd, "lighting.indirect");
      compute.record_pass(cmd, c, 2);
    }
  }
  {
    LATLAB_GPU_ZONE(prof, cmd, "post");
    {
      LATLAB_GPU_ZONE(prof, cmd, "post.bloom");
      fragment.record_pass(cmd, c, 0);
    }
    {
      LATLAB_GPU_ZONE(prof, cmd, "post.tonemap");
      fragment.record_pass(cmd, c, 1);
    }
  }
}

}  // namespace latlab::cli

namespace latlab::cli::queues {

namespace {

// Queue flag bits of extensions (VK_KHR_video_decode_queue,
// VK_KHR_video_encode_queue, VK_NV_optical_flow), by value: older headers
// lack some of the names.
constexpr VkQueueFlags kVideoDecodeBit = 0x20;
constexpr VkQueueFlags kVideoEncodeBit = 0x40;
constexpr VkQueueFlags kOpticalFlowBit = 0x100;

Result<Buffer> make_buffer(const VulkanContext& ctx, VkDeviceSize bytes,
                           const std::vector<uint32_t>& families) {
  VkBufferCreateInfo bci{};
  bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bci.size = bytes;
  bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  // Used on two families without ownership transfers: concurrent.
  bci.sharingMode = families.size() > 1 ? VK_SHARING_MODE_CONCURRENT : VK_SHARING_MODE_EXCLUSIVE;
  bci.queueFamilyIndexCount = families.size() > 1 ? static_cast<uint32_t>(families.size()) : 0;
  bci.pQueueFamilyIndices = families.size() > 1 ? families.data() : nullptr;
  Buffer out;
  if (const VkResult r = vkCreateBuffer(ctx.device(), &bci, nullptr, &out.buffer); r != VK_SUCCESS)
    return make_error(fmt::format("vkCreateBuffer failed ({})", static_cast<int>(r)));
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(ctx.device(), out.buffer, &req);
  auto type = ctx.find_memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (!type) type = ctx.find_memory_type(req.memoryTypeBits, 0);
  if (!type) {
    vkDestroyBuffer(ctx.device(), out.buffer, nullptr);
    return type.error();
  }
  VkMemoryAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = *type;
  if (const VkResult r = vkAllocateMemory(ctx.device(), &ai, nullptr, &out.memory);
      r != VK_SUCCESS) {
    vkDestroyBuffer(ctx.device(), out.buffer, nullptr);
    return make_error(fmt::format("vkAllocateMemory failed ({})", static_cast<int>(r)));
  }
  vkBindBufferMemory(ctx.device(), out.buffer, out.memory, 0);
  return out;
}

void memory_barrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                    VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
  VkMemoryBarrier mb{};
  mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  mb.srcAccessMask = src_access;
  mb.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

// The first opened family other than the context's queue's whose flags
// include `want` and none of `avoid`; nullopt if none.
std::optional<uint32_t> dedicated_family(const VulkanContext& ctx, VkQueueFlags want,
                                         VkQueueFlags avoid) {
  for (const auto& q : ctx.queues()) {
    if (q.primary) continue;
    if ((q.flags & want) == want && (q.flags & avoid) == 0) return q.family;
  }
  return std::nullopt;
}

void record_upload(QueuesRig& rig, VulkanGpuProfiler& prof, VkCommandBuffer cmd, uint32_t slot,
                   uint64_t frame) {
  const VkDeviceSize at = rig.region_bytes * slot;
  LATLAB_GPU_COMMAND_BUFFER(prof, cmd, "upload");
  {
    LATLAB_GPU_ZONE(prof, cmd, "upload.fill");
    vkCmdFillBuffer(cmd, rig.staging.buffer, at, rig.region_bytes, static_cast<uint32_t>(frame));
    memory_barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
  }
  {
    LATLAB_GPU_ZONE(prof, cmd, "upload.copy");
    const VkBufferCopy region{at, at, rig.region_bytes};
    vkCmdCopyBuffer(cmd, rig.staging.buffer, rig.upload.buffer, 1, &region);
  }
}

void record_async(QueuesRig& rig, VulkanGpuProfiler& prof, VkCommandBuffer cmd, uint32_t slot,
                  uint32_t c) {
  LATLAB_GPU_COMMAND_BUFFER(prof, cmd, "async compute");
  {
    LATLAB_GPU_ZONE(prof, cmd, "async.consume");
    // The previous frame's passes wrote the target: copy after them, pass
    // after the copy. The copy overwrites the whole workload buffer (made and
    // warmed on the context's queue, exclusive, never handed over), so no
    // read sees contents another family left.
    memory_barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
    const VkBufferCopy region{rig.region_bytes * slot, 0, rig.region_bytes};
    vkCmdCopyBuffer(cmd, rig.upload.buffer, rig.async_compute->buffer(), 1, &region);
    memory_barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  }
  {
    LATLAB_GPU_ZONE(prof, cmd, "async.simulate");
    rig.async_compute->record_pass(cmd, std::min<uint32_t>(4096, 2 * c), 3);
  }
}

}  // namespace

std::string queue_family_name(const VulkanQueueInfo& q) {
  return fmt::format("queue family {} ({})", q.family, q.flags_text);
}

std::string queue_track_name(const VulkanQueueInfo& q) {
  return fmt::format("vulkan queue family {} ({})", q.family, q.flags_text);
}

// Picks the families of the roles, opens a profiler per family used.
Result<void> plan_queues(const VulkanContext& ctx, const QueuesProfileRequest& req,
                         QueuesRig& rig) {
  const uint32_t primary = ctx.queue_family();
  const auto compute = dedicated_family(ctx, VK_QUEUE_COMPUTE_BIT, VK_QUEUE_GRAPHICS_BIT);
  const auto transfer =
      dedicated_family(ctx, VK_QUEUE_TRANSFER_BIT, VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT);
  auto add_role = [&](Role role, std::string label, uint32_t family, std::string note) {
    rig.roles.push_back(RoleRig{.role = role,
                                .label = std::move(label),
                                .note = std::move(note),
                                .family = family,
                                .queue = nullptr,
                                .ring = nullptr});
  };
  add_role(Role::upload, "upload", transfer.value_or(primary),
           transfer ? "" : "no other transfer-only family that can time: on the context's queue");
  add_role(Role::async_compute, "async compute", compute.value_or(primary),
           compute
               ? ""
               : "no other compute family without graphics that can time: on the context's queue");
  add_role(Role::graphics, "graphics", primary, "");
  for (const auto& q : ctx.queues()) {
    const bool used = std::any_of(rig.roles.begin(), rig.roles.end(),
                                  [&](const RoleRig& r) { return r.family == q.family; });
    // vkCmdWriteTimestamp needs a queue of graphics, compute, transfer,
    // video or optical flow work; a sparse-binding-only family gets no role.
    constexpr VkQueueFlags kRecords = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT |
                                      VK_QUEUE_TRANSFER_BIT | kVideoDecodeBit | kVideoEncodeBit |
                                      kOpticalFlowBit;
    if (!used && (q.flags & kRecords) != 0) {
      add_role(Role::marker, "marker", q.family,
               "no role for this family: a command buffer with its begin/end timestamps only");
    } else if (!used) {
      rig.idle.push_back({queue_family_name(q),
                          "opened, but its queues record no timestamps (no graphics, compute, "
                          "transfer, video or optical flow work)"});
    }
  }
  for (auto& role : rig.roles) {
    QueueRig* q = rig.queue_of(role.family);
    if (q == nullptr) {
      auto owned = std::make_unique<QueueRig>();
      owned->info = ctx.find_queue(role.family);
      owned->name = rig.track_prefix + queue_track_name(*owned->info);
      const GpuProfilerDesc pdesc{.name = owned->name,
                                  .max_zones_per_frame = 64,
                                  .frames_in_flight = req.frames_in_flight,
                                  .stat_window_frames = req.frames,
                                  .cpu_zone_times = !req.trace.empty()};
      auto slots = VulkanTimestampSlots::create(ctx, {.count = GpuProfiler::slots_needed(pdesc),
                                                      .require_host_reset = true,
                                                      .queue_family = role.family});
      if (!slots) return slots.error();
      owned->slots = slots.value();
      auto prof = VulkanGpuProfiler::create(owned->slots, pdesc);
      if (!prof) return prof.error();
      owned->prof = std::move(prof.value());
      q = owned.get();
      rig.queues.push_back(std::move(owned));
    }
    role.queue = q;
    q->roles.push_back(role.label);
    auto ring = VulkanFrameRing::create(ctx, req.frames_in_flight, role.family);
    if (!ring) return ring.error();
    role.ring = std::move(ring.value());
  }
  return {};
}

// The buffers, workloads and semaphores of the roles.
Result<void> make_work(const VulkanContext& ctx, const QueuesProfileRequest& req, QueuesRig& rig) {
  auto compute = VulkanComputeWorkload::create(ctx, {req.width, req.height});
  if (!compute) return compute.error();
  rig.compute = std::move(compute.value());
  auto fragment = VulkanFragmentWorkload::create(ctx, {req.width, req.height});
  if (!fragment) return fragment.error();
  rig.fragment = std::move(fragment.value());
  auto async = VulkanComputeWorkload::create(ctx, {req.width, req.height});
  if (!async) return async.error();
  rig.async_compute = std::move(async.value());
  rig.region_bytes = VkDeviceSize{req.width} * req.height * 16;  // the workload's vec4 buffer
  const VkDeviceSize bytes = rig.region_bytes * req.frames_in_flight;
  uint32_t upload_family = 0, async_family = 0;
  for (const auto& r : rig.roles) {
    if (r.role == Role::upload) upload_family = r.family;
    if (r.role == Role::async_compute) async_family = r.family;
  }
  auto staging = make_buffer(ctx, bytes, {upload_family});
  if (!staging) return staging.error();
  rig.staging = *staging;
  std::vector<uint32_t> both{upload_family};
  if (async_family != upload_family) both.push_back(async_family);
  auto upload = make_buffer(ctx, bytes, both);
  if (!upload) return upload.error();
  rig.upload = *upload;
  for (uint32_t i = 0; i < req.frames_in_flight; ++i) {
    VkSemaphoreCreateInfo sci{};
    sci.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
    VkSemaphore s = VK_NULL_HANDLE;
    if (const VkResult r = vkCreateSemaphore(ctx.device(), &sci, nullptr, &s); r != VK_SUCCESS)
      return make_error(fmt::format("vkCreateSemaphore failed ({})", static_cast<int>(r)));
    rig.uploaded.push_back(s);
  }
  return {};
}

// Records and submits every role's command buffer for --frames frames,
// frames_in_flight at once, then waits for all; CPU spans go to `trace`.
// An interrupt stops it after the frame it is in.
Result<void> run_frames(const QueuesProfileRequest& req, QueuesRig& rig, ChromeTraceWriter* trace) {
  const std::atomic<bool>* stop = InterruptScope::flag();
  for (uint64_t frame = 0; frame < req.frames && !stop->load(); ++frame) {
    const auto slot = static_cast<uint32_t>(frame % req.frames_in_flight);
    const int64_t w0 = host_now_ns();
    bool waited_any = false;
    for (auto& r : rig.roles) {
      if (!r.ring->in_flight(slot)) continue;
      waited_any = true;
      auto waited = r.ring->wait(slot);
      if (!waited) return waited.error();
    }
    if (waited_any && trace != nullptr)
      trace->add_span("CPU main", "fence wait", w0, host_now_ns());
    if (frame > 0) {
      for (auto& q : rig.queues) q->prof->next_frame();
    }
    for (auto& r : rig.roles) {
      const int64_t r0 = host_now_ns();
      auto cmd_r = r.ring->begin(slot);
      if (!cmd_r) return cmd_r.error();
      const VkCommandBuffer cmd = cmd_r.value();
      VulkanGpuProfiler& prof = *r.queue->prof;
      VulkanSubmitSync sync;
      const std::array<VkPipelineStageFlags, 1> stages{VK_PIPELINE_STAGE_TRANSFER_BIT};
      switch (r.role) {
        case Role::upload:
          record_upload(rig, prof, cmd, slot, frame);
          sync.signal = {&rig.uploaded[slot], 1};
          break;
        case Role::async_compute:
          record_async(rig, prof, cmd, slot, req.complexity);
          sync.wait = {&rig.uploaded[slot], 1};
          sync.wait_stages = stages;
          break;
        case Role::graphics: {
          LATLAB_GPU_COMMAND_BUFFER(prof, cmd, "graphics");
          record_reference_frame(prof, *rig.compute, *rig.fragment, cmd, req.complexity);
          break;
        }
        case Role::marker: {
          LATLAB_GPU_COMMAND_BUFFER(prof, cmd, "marker");
          break;
        }
      }
      const int64_t s0 = host_now_ns();
      if (auto s = r.ring->submit(slot, sync); !s) return s.error();
      if (trace != nullptr) {
        trace->add_span("CPU main", "record " + r.label, r0, s0);
        trace->add_span("CPU main", "submit " + r.label, s0, host_now_ns());
      }
    }
  }
  for (auto& r : rig.roles) {
    if (auto w = r.ring->wait_all(); !w) return w.error();
  }
  return {};
}

}  // namespace latlab::cli::queues
