// The parts of `latlab profile --queues all` (profile_queues.cpp): the rig
// (one queue and profiler per timing family, a ring per role, the frame's
// buffers and semaphores), recording and running its frames
// (profile_queues_rig.cpp), and its JSON and text (profile_queues_report.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "latlab/bench/vulkan_rig.hpp"
#include "latlab/calibrator.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_queues.hpp"
#include "latlab/profiler_trace.hpp"
#include "latlab/vulkan.hpp"
#include "profile_queues.hpp"

namespace latlab::cli::queues {

constexpr uint64_t kGraphicsZones = 9;  // cmdbuf + the 8 of the reference frame
constexpr uint64_t kUploadZones = 3;
constexpr uint64_t kAsyncZones = 3;
constexpr uint64_t kMarkerZones = 1;

// One opened queue the frame uses: its profiler on its own slots.
struct QueueRig {
  const VulkanQueueInfo* info = nullptr;
  std::string name;                // the track: "vulkan queue family N (flags)"
  std::vector<std::string> roles;  // what runs on it
  std::shared_ptr<VulkanTimestampSlots> slots;
  std::unique_ptr<VulkanGpuProfiler> prof;
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

std::string queue_family_name(const VulkanQueueInfo& q);
std::string queue_track_name(const VulkanQueueInfo& q);

// Picks the families of the roles, opens a profiler per family used.
Result<void> plan_queues(const VulkanContext& ctx, const QueuesProfileRequest& req, QueuesRig& rig);
// The buffers, workloads and semaphores of the roles.
Result<void> make_work(const VulkanContext& ctx, const QueuesProfileRequest& req, QueuesRig& rig);
// Records and submits every role's command buffer for --frames frames,
// frames_in_flight at once, then waits for all; CPU spans go to `trace`.
Result<void> run_frames(const QueuesProfileRequest& req, QueuesRig& rig, ChromeTraceWriter* trace);

// Zones the frames should have given (every role's zones per frame).
uint64_t expected_zones(const QueuesRig& rig, uint32_t frames);
// The counters of every queue's profiler, summed.
ProfilerCounters sum_counters(const QueuesRig& rig);
// The device's JSON object: queues, zones per queue, overlap, semaphore order.
nlohmann::json json_output(const QueuesProfileRequest& req, const VulkanContext& ctx,
                           const QueuesRig& rig, const std::string& mapping,
                           const std::shared_ptr<const ClockFit>& fit);
// Per frame, how long `a`'s command buffer overlapped `b`'s on the host
// clock: frames with both mapped, how many overlapped, the mean overlap
// (null without frames).
nlohmann::json overlap_json(const QueuesRig& rig, Role a, Role b);
// The queues used, the roles' notes and the families left out, as text.
void print_queues(const VulkanContext& ctx, const QueuesRig& rig);

}  // namespace latlab::cli::queues
