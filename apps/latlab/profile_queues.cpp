// latlab profile --queues all: the reference frame spread over one queue of
// every Vulkan queue family that can time, each queue its own profiler (its
// own timestamp slots and valid bits) and its own track, all on the host
// clock through the device's one clock model.
//
// A frame is three command buffers, each timed as a whole ("cmdbuf <role>")
// and by its zones:
//   upload         upload.fill, upload.copy: fill a staging region and copy
//                  it to the frame's upload region (dedicated transfer family)
//   async compute  async.consume, async.simulate: copy the upload into its
//                  buffer and run a compute pass on it (dedicated compute
//                  family); waits for the upload through a semaphore
//   graphics       the single-queue frame's zones (profile.cpp) on the
//                  context's queue, overlapping the two above
// A role whose family the device lacks runs on the context's queue (said in
// the output). Families that can time but have no role (e.g. video) get a
// command buffer with its timestamps only ("cmdbuf marker").
#include "profile_queues.hpp"

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

#include "command.hpp"
#include "device_list.hpp"
#include "latlab/calibrator.hpp"
#include "latlab/host_clock.hpp"
// This command exists to show the profiler: its zones stay in whatever
// LATLAB_ENABLE_PROFILER the build chose for user code.
#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/profiler.hpp"
#include "latlab/profiler_queues.hpp"
#include "latlab/profiler_trace.hpp"
#include "latlab/vulkan.hpp"
#include "profile_report.hpp"

namespace latlab::cli {

namespace {

constexpr uint64_t kGraphicsZones = 9;  // cmdbuf + the 8 of the reference frame
constexpr uint64_t kUploadZones = 3;
constexpr uint64_t kAsyncZones = 3;
constexpr uint64_t kMarkerZones = 1;
// Queue flag bits of extensions (VK_KHR_video_decode_queue,
// VK_KHR_video_encode_queue, VK_NV_optical_flow), by value: older headers
// lack some of the names.
constexpr VkQueueFlags kVideoDecodeBit = 0x20;
constexpr VkQueueFlags kVideoEncodeBit = 0x40;
constexpr VkQueueFlags kOpticalFlowBit = 0x100;

int fail(const std::string& message, int code) {
  std::fprintf(stderr, "latlab profile: %s\n", message.c_str());
  return code;
}

std::string queue_family_name(const VulkanQueueInfo& q) {
  return fmt::format("queue family {} ({})", q.family, q.flags_text);
}

std::string queue_track_name(const VulkanQueueInfo& q) {
  return fmt::format("vulkan queue family {} ({})", q.family, q.flags_text);
}

// One opened queue the frame uses: its profiler on its own slots.
struct QueueRig {
  const VulkanQueueInfo* info = nullptr;
  std::string name;                // the track: "vulkan queue family N (flags)"
  std::vector<std::string> roles;  // what runs on it
  std::shared_ptr<VulkanTimestampSlots> slots;
  std::unique_ptr<GpuProfiler> prof;
};

enum class Role { upload, async_compute, graphics, marker };

// One command buffer of the frame: a ring on its queue.
struct RoleRig {
  Role role = Role::graphics;
  std::string label;  // "upload", "async compute", "graphics", "marker"
  std::string note;   // why it runs where it runs; empty when on its own family
  uint32_t family = 0;
  QueueRig* queue = nullptr;
  std::unique_ptr<VulkanFrameRing> ring;
};

// Each role's command-buffer span on the host clock, per frame, from the
// profilers' frame sinks: how much the queues overlapped, and whether the
// semaphore's order shows on the one host clock.
struct CommandBufferSpans {
  struct Span {
    bool mapped = false;
    int64_t begin_ns = 0;
    int64_t end_ns = 0;
  };
  std::vector<std::string> zone_names;   // "cmdbuf <role>", per role
  std::vector<std::vector<Span>> spans;  // [role][frame]

  void add(const ProfilerFrame& f) {
    for (const ProfilerZone& z : f.zones) {
      if (!z.ok() || !z.host_mapped || !is_command_buffer_zone(z.name)) continue;
      for (size_t r = 0; r < zone_names.size(); ++r) {
        if (zone_names[r] != z.name || f.frame_id >= spans[r].size()) continue;
        spans[r][f.frame_id] = {true, z.gpu_begin_host_ns, z.gpu_end_host_ns};
      }
    }
  }
};

// A device-local buffer with its memory.
struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
};

// Everything of the run, destroyed in order: rings first (they wait for
// their work), then the semaphores and buffers that work used, the
// workloads, the profilers, their slots.
struct QueuesRig {
  const VulkanContext* ctx = nullptr;
  std::vector<std::unique_ptr<QueueRig>> queues;
  std::unique_ptr<VulkanComputeWorkload> compute;        // graphics role
  std::unique_ptr<VulkanFragmentWorkload> fragment;      // graphics role
  std::unique_ptr<VulkanComputeWorkload> async_compute;  // async compute role
  Buffer staging;                                        // upload source, a region per frame slot
  Buffer upload;                                         // upload target, a region per frame slot
  VkDeviceSize region_bytes = 0;
  std::vector<VkSemaphore> uploaded;  // per frame slot: upload -> async compute
  std::vector<RoleRig> roles;
  CommandBufferSpans cmdbuf_spans;
  std::string track_prefix;             // "[d] " before queue names when several devices run
  std::vector<MissingCapability> idle;  // opened families the frame cannot use, and why

  QueuesRig() = default;
  QueuesRig(const QueuesRig&) = delete;
  QueuesRig& operator=(const QueuesRig&) = delete;
  ~QueuesRig() {
    for (auto& r : roles) r.ring.reset();
    if (ctx == nullptr) return;
    const VkDevice dev = ctx->device();
    for (VkSemaphore s : uploaded) vkDestroySemaphore(dev, s, nullptr);
    for (Buffer* b : {&staging, &upload}) {
      if (b->buffer != VK_NULL_HANDLE) vkDestroyBuffer(dev, b->buffer, nullptr);
      if (b->memory != VK_NULL_HANDLE) vkFreeMemory(dev, b->memory, nullptr);
    }
  }

  QueueRig* queue_of(uint32_t family) {
    for (auto& q : queues) {
      if (q->info->family == family) return q.get();
    }
    return nullptr;
  }
};

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
      auto prof = GpuProfiler::create(owned->slots, pdesc);
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

void record_upload(QueuesRig& rig, GpuProfiler& prof, VkCommandBuffer cmd, uint32_t slot,
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

void record_async(QueuesRig& rig, GpuProfiler& prof, VkCommandBuffer cmd, uint32_t slot,
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

// Records and submits every role's command buffer for --frames frames,
// frames_in_flight at once, then waits for all; CPU spans go to `trace`.
Result<void> run_frames(const QueuesProfileRequest& req, QueuesRig& rig, ChromeTrace* trace) {
  for (uint64_t frame = 0; frame < req.frames; ++frame) {
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
      GpuProfiler& prof = *r.queue->prof;
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

uint64_t expected_zones(const QueuesRig& rig, uint32_t frames) {
  uint64_t per_frame = 0;
  for (const auto& r : rig.roles) {
    switch (r.role) {
      case Role::upload:
        per_frame += kUploadZones;
        break;
      case Role::async_compute:
        per_frame += kAsyncZones;
        break;
      case Role::graphics:
        per_frame += kGraphicsZones;
        break;
      case Role::marker:
        per_frame += kMarkerZones;
        break;
    }
  }
  return per_frame * frames;
}

ProfilerCounters sum_counters(const QueuesRig& rig) {
  ProfilerCounters t;
  for (const auto& q : rig.queues) {
    const ProfilerCounters c = q->prof->counters();
    t.frames_collected += c.frames_collected;
    t.frames_without_queries += c.frames_without_queries;
    t.zones_ok += c.zones_ok;
    t.zones_dropped += c.zones_dropped;
    t.zones_invalid += c.zones_invalid;
  }
  return t;
}

size_t role_index(const QueuesRig& rig, Role role) {
  for (size_t i = 0; i < rig.roles.size(); ++i) {
    if (rig.roles[i].role == role) return i;
  }
  return rig.roles.size();
}

// Per frame, how long `a`'s command buffer overlapped `b`'s on the host
// clock: frames with both mapped, how many overlapped, the mean overlap
// (null without frames).
nlohmann::json overlap_json(const QueuesRig& rig, Role a, Role b) {
  const size_t ia = role_index(rig, a), ib = role_index(rig, b);
  const auto& sa = rig.cmdbuf_spans.spans[ia];
  const auto& sb = rig.cmdbuf_spans.spans[ib];
  uint64_t frames = 0, overlapping = 0;
  double sum_ns = 0;
  for (size_t f = 0; f < sa.size() && f < sb.size(); ++f) {
    if (!sa[f].mapped || !sb[f].mapped) continue;
    ++frames;
    const int64_t o =
        std::min(sa[f].end_ns, sb[f].end_ns) - std::max(sa[f].begin_ns, sb[f].begin_ns);
    if (o > 0) {
      ++overlapping;
      sum_ns += static_cast<double>(o);
    }
  }
  return {{"role", rig.roles[ia].label},
          {"with", rig.roles[ib].label},
          {"same_queue", rig.roles[ia].family == rig.roles[ib].family},
          {"frames", frames},
          {"frames_overlapping", overlapping},
          {"avg_overlap_ms", frames > 0 ? nlohmann::json(sum_ns / static_cast<double>(frames) / 1e6)
                                        : nlohmann::json()}};
}

// The semaphore on the host clock: frames where async compute began before
// the upload ended (by more than the clock model's bound, `error_ns`).
nlohmann::json semaphore_order_json(const QueuesRig& rig, int64_t error_ns) {
  const auto& up = rig.cmdbuf_spans.spans[role_index(rig, Role::upload)];
  const auto& as = rig.cmdbuf_spans.spans[role_index(rig, Role::async_compute)];
  uint64_t frames = 0, out_of_order = 0;
  for (size_t f = 0; f < up.size() && f < as.size(); ++f) {
    if (!up[f].mapped || !as[f].mapped) continue;
    ++frames;
    if (as[f].begin_ns + error_ns < up[f].end_ns) ++out_of_order;
  }
  return {{"frames", frames},
          {"async_began_before_upload_ended", out_of_order},
          {"tolerance_ns", error_ns}};
}

nlohmann::json json_output(const QueuesProfileRequest& req, const VulkanContext& ctx,
                           const QueuesRig& rig, const std::string& mapping,
                           const std::shared_ptr<const ClockFit>& fit) {
  nlohmann::json queues = nlohmann::json::array();
  nlohmann::json zones = nlohmann::json::array();
  for (const auto& q : rig.queues) {
    queues.push_back({{"family", q->info->family},
                      {"flags", q->info->flags_text},
                      {"valid_bits", q->info->ticks.valid_bits},
                      {"track", q->name},
                      {"roles", q->roles},
                      {"counters", profile_counters_json(q->prof->counters())}});
    const auto stats = q->prof->stats();
    nlohmann::json table = profile_stats_json(stats);
    for (size_t i = 0; i < stats.size(); ++i) {
      table[i]["queue"] = q->name;
      table[i]["queue_family"] = q->info->family;
      table[i]["command_buffer"] = is_command_buffer_zone(stats[i].name.c_str());
      zones.push_back(table[i]);
    }
  }
  nlohmann::json roles = nlohmann::json::array();
  for (const auto& r : rig.roles) {
    roles.push_back({{"role", r.label},
                     {"queue_family", r.family},
                     {"command_buffer_zone", std::string(kCommandBufferZonePrefix) + r.label},
                     {"note", r.note.empty() ? nlohmann::json() : nlohmann::json(r.note)}});
  }
  nlohmann::json unavailable = nlohmann::json::array();
  for (const auto& m : ctx.unopened_queue_families())
    unavailable.push_back({{"name", m.name}, {"reason", m.reason}});
  for (const auto& m : rig.idle) unavailable.push_back({{"name", m.name}, {"reason", m.reason}});
  nlohmann::json out = {
      {"device", ctx.device_name()},
      {"host_clock", kHostClockName},
      {"settings",
       {{"frames", req.frames},
        {"complexity", req.complexity},
        {"size", fmt::format("{}x{}", req.width, req.height)},
        {"frames_in_flight", req.frames_in_flight},
        {"queues", req.all_queues ? "all" : "one"},
        {"validation", req.validation}}},
      {"host_mapping", mapping},
      {"clock_fit", profile_clock_fit_json(fit)},
      {"queues", queues},
      {"queue_families_unavailable", unavailable},
      {"roles", roles},
      {"zones", zones},
      {"overlap",
       {overlap_json(rig, Role::upload, Role::graphics),
        overlap_json(rig, Role::async_compute, Role::graphics)}},
      {"semaphore_order", semaphore_order_json(rig, fit ? 2 * fit->base_error_ns : 0)},
      {"counters", profile_counters_json(sum_counters(rig))},
      {"validation_errors", ctx.validation_error_count()},
  };
  return out;
}

void print_queues(const VulkanContext& ctx, const QueuesRig& rig) {
  fmt::print("  queues used:\n");
  for (const auto& q : rig.queues) {
    std::string roles;
    for (const auto& r : q->roles) roles += (roles.empty() ? "" : ", ") + r;
    fmt::print("    family {} ({}), {} valid bits: {}\n", q->info->family, q->info->flags_text,
               q->info->ticks.valid_bits, roles);
  }
  for (const auto& r : rig.roles) {
    if (!r.note.empty()) fmt::print("    {} on family {}: {}\n", r.label, r.family, r.note);
  }
  if (ctx.unopened_queue_families().empty() && rig.idle.empty()) {
    fmt::print("  queue families unavailable: none\n");
  } else {
    fmt::print("  queue families unavailable:\n");
    for (const auto& m : ctx.unopened_queue_families())
      fmt::print("    {}: {}\n", m.name, m.reason);
    for (const auto& m : rig.idle) fmt::print("    {}: {}\n", m.name, m.reason);
  }
}

// The frame on one device (`device`: an index or name substring; "" the
// default): prints its text unless --json, stores its JSON object in `out`,
// adds its spans to `trace` (may be null); returns its exit code.
int run_device(const QueuesProfileRequest& req, const std::string& device,
               const std::string& track_prefix, ChromeTrace* trace, nlohmann::json& out) {
  auto ctx_r = VulkanContext::create(VulkanContextDesc{
      .device = device, .validation = req.validation, .all_timing_queues = req.all_queues});
  if (!ctx_r) {
    out = {{"device_selector", device}, {"error", ctx_r.error().message}};
    return fail(ctx_r.error().message, device_open_exit_code(device));
  }
  const VulkanContext& ctx = *ctx_r.value();
  const auto& limits = ctx.properties().limits;
  if (uint64_t{req.width} * req.height * 16 > limits.maxStorageBufferRange ||
      req.width > limits.maxFramebufferWidth || req.height > limits.maxFramebufferHeight) {
    const std::string msg =
        fmt::format("--size {}x{} exceeds {}'s limits", req.width, req.height, ctx.device_name());
    out = {{"device_selector", device}, {"device", ctx.device_name()}, {"error", msg}};
    return fail(msg, kExitUsage);
  }
  if (!req.json) {
    fmt::print("  on [{}] {}: tick {} ns\n", ctx.device_index(), ctx.device_name(),
               ctx.tick_format().period_ns());
    for (const auto& m : ctx.capabilities().missing)
      fmt::print("  missing {}: {}\n", m.name, m.reason);
  }
  Calibrator calibrator([&ctx] { return ctx.sample_calibration(); }, ctx.tick_format());
  std::string mapping;
  if (const Result<void> c = calibrator.calibrate_now(); !c) {
    mapping = "none (" + c.error().message + ")";
  } else {
    calibrator.start_periodic();
    mapping = ctx.capabilities().calibration_method +
              ", one clock model for every queue, refreshed every 1 s";
  }
  QueuesRig rig;
  rig.ctx = &ctx;
  rig.track_prefix = track_prefix;
  if (auto p = plan_queues(ctx, req, rig); !p) {
    out = {
        {"device_selector", device}, {"device", ctx.device_name()}, {"error", p.error().message}};
    return fail(p.error().message, kExitMissingCapability);
  }
  if (auto w = make_work(ctx, req, rig); !w) {
    out = {
        {"device_selector", device}, {"device", ctx.device_name()}, {"error", w.error().message}};
    return fail(w.error().message, kExitRunFailed);
  }
  if (!req.json) print_queues(ctx, rig);
  for (const auto& r : rig.roles) {
    rig.cmdbuf_spans.zone_names.push_back(kCommandBufferZonePrefix + r.label);
    rig.cmdbuf_spans.spans.emplace_back(req.frames);
  }
  for (auto& q : rig.queues) {
    q->prof->set_clock_mapper(
        queue_clock_mapper([&calibrator] { return calibrator.fit(); }, q->info->ticks));
    q->prof->set_frame_sink([trace, &rig, name = q->name](const ProfilerFrame& f) {
      rig.cmdbuf_spans.add(f);
      if (trace != nullptr) trace->add_frame(name, f);
    });
  }
  if (auto r = run_frames(req, rig, trace); !r) {
    out = {
        {"device_selector", device}, {"device", ctx.device_name()}, {"error", r.error().message}};
    return fail(r.error().message, kExitRunFailed);
  }
  for (auto& q : rig.queues) {
    q->prof->next_frame();  // closes the last frame; every result is available now
    q->prof->collect();
  }
  calibrator.stop();
  const auto fit = calibrator.fit();
  int code = kExitOk;
  warn_untimed_zones(sum_counters(rig), expected_zones(rig, req.frames));
  if (req.validation && ctx.validation_error_count() > 0) {
    for (const auto& m : ctx.validation_messages()) std::fprintf(stderr, "  %s\n", m.c_str());
    code = kExitRunFailed;
  }
  out = json_output(req, ctx, rig, mapping, fit);
  if (req.json) return code;
  print_host_mapping_line(mapping, fit);
  for (const auto& q : rig.queues) {
    fmt::print("{}\n", format_stat_table(q->name, q->prof->stats()));
    print_counters_line(q->prof->counters());
    fmt::print("\n");
  }
  fmt::print("zones named \"cmdbuf <role>\" time a whole command buffer\n");
  for (Role a : {Role::upload, Role::async_compute}) {
    const nlohmann::json o = overlap_json(rig, a, Role::graphics);
    fmt::print("overlap of {} with graphics{}: {} of {} frames, avg {} ms\n",
               o["role"].get<std::string>(), o["same_queue"].get<bool>() ? " (same queue)" : "",
               o["frames_overlapping"].get<uint64_t>(), o["frames"].get<uint64_t>(),
               o["avg_overlap_ms"].is_null()
                   ? std::string("-")
                   : fmt::format("{:.3f}", o["avg_overlap_ms"].get<double>()));
  }
  if (req.validation) fmt::print("validation errors: {}\n", ctx.validation_error_count());
  return code;
}

// The devices --device names: one selector, or, for "all" or a comma list,
// the shared device-list resolution of clocks and run (device_list.hpp).
Result<std::vector<std::string>> device_selectors(const std::string& device, bool& no_device) {
  no_device = false;
  if (!is_device_list(device)) return std::vector<std::string>{device};
  auto items = parse_device_list(device);
  if (!items) return items.error();
  auto listed = expand_device_list("vulkan", *items, no_device);
  if (!listed) return listed.error();
  std::vector<std::string> out;
  for (const ListedDevice& d : *listed) out.push_back(d.selector);
  return out;
}

}  // namespace

bool profile_names_several_devices(const std::string& device) { return is_device_list(device); }

int profile_queues(const QueuesProfileRequest& req) {
  if (!req.json) {
    fmt::print("latlab profile: reference frame spread over {}\n",
               req.all_queues ? "every Vulkan queue family that can time"
                              : "command buffers on one Vulkan queue");
    fmt::print(
        "  device {}  frames {}  complexity {}  size {}x{}  frames in flight {}  trace {}  "
        "validation {}\n",
        req.device.empty() ? "(default)" : req.device, req.frames, req.complexity, req.width,
        req.height, req.frames_in_flight, req.trace.empty() ? "(none)" : req.trace,
        req.validation ? "on" : "off");
  }
  auto devices = enumerate_vulkan_devices();
  if (devices && devices->empty()) {
    return fail(
        "no Vulkan device found; install Mesa's lavapipe (apt install mesa-vulkan-drivers) for a "
        "software device",
        kExitMissingCapability);
  }
  bool no_device = false;
  const auto selectors = device_selectors(req.device, no_device);
  if (!selectors) return fail(selectors.error().message, no_device ? kExitMissingCapability : kExitUsage);
  ChromeTrace trace;
  ChromeTrace* tracep = req.trace.empty() ? nullptr : &trace;
  const bool several = profile_names_several_devices(req.device);
  int code = kExitOk;
  nlohmann::json out;
  nlohmann::json sections = nlohmann::json::array();
  for (const std::string& sel : *selectors) {
    if (several && !req.json) fmt::print("\n== device {}\n", sel);
    // A track group per device: "GPU [index] name"; its queues' tracks and
    // tables named "[index] vulkan queue family N (...)".
    std::string label = sel;
    for (const auto& d : devices ? *devices : std::vector<VulkanDeviceReport>{}) {
      if (std::to_string(d.index) == sel) label = sel + "] " + d.name;
    }
    if (label == sel) label += "]";
    if (several && tracep != nullptr) trace.set_gpu_group("[" + label);
    nlohmann::json one;
    const int c = run_device(req, sel, several ? "[" + sel + "] " : "", tracep, one);
    if (code == kExitOk) code = c;
    if (several) {
      sections.push_back(std::move(one));
    } else {
      out = std::move(one);
    }
  }
  if (several) out = {{"host_clock", kHostClockName}, {"devices", sections}};
  bool trace_written = false;
  if (tracep != nullptr) {
    trace_written = write_trace_file(req.trace, trace);
    if (!trace_written && code == kExitOk) code = kExitWriteFailed;
    out["trace"] = profile_trace_json(req.trace, trace, trace_written);
  }
  if (req.json) {
    fmt::print("{}\n", out.dump(2));
  } else if (tracep != nullptr) {
    print_trace_line(req.trace, trace, trace_written);
  }
  return code;
}

}  // namespace latlab::cli
