// The Vulkan benchmark rig (latlab::vulkan_rig, src/backends/vulkan's rig
// sources): the reference workloads the latency path and the benchmarks run
// (VulkanComputeWorkload: shaders/burn.comp; VulkanFragmentWorkload:
// shaders/burn.frag), and the LatencyDevice on Vulkan with its present and
// reference paths. Built on the timing library's VulkanContext, frame ring
// and timestamp slots (latlab/vulkan.hpp).
//
// Ownership and threads as in latlab/vulkan.hpp: objects made from a
// VulkanContext keep a reference to it; thread safety is stated per class.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "latlab/core/latency_device.hpp"
#include "latlab/core/profile_queues_rig.hpp"
#include "latlab/core/profile_rig.hpp"
#include "latlab/result.hpp"
#include "latlab/timestamp_query_pool.hpp"
#include "latlab/vulkan.hpp"

namespace latlab {

namespace vk {
struct ComputeObjects;   // src/backends/vulkan/vulkan_compute_workload.cpp
struct FragmentObjects;  // src/backends/vulkan/vulkan_fragment_workload.cpp
}  // namespace vk

// ---------------------------------------------------------------------------
// Reference compute workload

struct ComputeWorkloadDesc {
  uint32_t width = 256;   // elements per row (>= 1)
  uint32_t height = 256;  // rows (>= 1)
};

// One pass of a recorded frame: its pool uid and how much work it does.
struct WorkloadPass {
  std::string uid;  // pool uid ("c:..." compute, "r:..." fragment; ":f<frame>"); "" = untimed
  uint32_t complexity = 1;  // iterations of arithmetic per element / pixel (>= 1)
};
using ComputePass = WorkloadPass;

// A compute shader doing `complexity` iterations of arithmetic per element
// of a width x height storage buffer (vec4 per element), in place. Passes are
// separated by pipeline barriers (each pass reads what the previous wrote, and
// the first pass waits for earlier submissions' passes). Not thread-safe;
// record into one command buffer at a time.
class VulkanComputeWorkload {
 public:
  static Result<std::unique_ptr<VulkanComputeWorkload>> create(
      const VulkanContext& ctx, const ComputeWorkloadDesc& desc = {});
  ~VulkanComputeWorkload();
  VulkanComputeWorkload(const VulkanComputeWorkload&) = delete;
  VulkanComputeWorkload& operator=(const VulkanComputeWorkload&) = delete;

  const ComputeWorkloadDesc& desc() const { return desc_; }
  // The storage buffer the passes write (width x height vec4; usable as a
  // transfer source, e.g. for the present path's copy).
  VkBuffer buffer() const;

  // Records the barrier and the dispatch of one pass (no timestamps).
  // `pass_index` only varies the shader's constants.
  void record_pass(VkCommandBuffer cmd, uint32_t complexity, uint32_t pass_index = 0) {
    record_barrier(cmd);
    record_dispatch(cmd, complexity, pass_index);
  }
  // The two halves of a pass, for callers that place timestamps between:
  // the barrier that orders a pass after earlier passes (and submissions),
  // and the dispatch itself.
  void record_barrier(VkCommandBuffer cmd);
  void record_dispatch(VkCommandBuffer cmd, uint32_t complexity, uint32_t pass_index = 0);

  // Records passes.size() passes; each timed pass allocates its uid in `pool`
  // (frame `frame_id`) and is bracketed by write_begin/write_end. Returns each
  // pass's query offset, nullopt where the pass went untimed (empty uid, no
  // pool, or the pool gave no pair: see its status for the uid).
  std::vector<std::optional<uint32_t>> record(VkCommandBuffer cmd,
                                              std::span<const ComputePass> passes,
                                              uint64_t frame_id, TimestampQueryPool* pool);

 private:
  explicit VulkanComputeWorkload(const ComputeWorkloadDesc& desc);
  ComputeWorkloadDesc desc_;
  // Its Vulkan objects (private), on the context's device: the context must outlive them.
  std::unique_ptr<vk::ComputeObjects> o_;
};

// ---------------------------------------------------------------------------
// Reference fragment workload

struct FragmentWorkloadDesc {
  uint32_t width = 64;  // target size in pixels (>= 1); default as FrameWorkload
  uint32_t height = 64;
};

// The fragment form of the reference workload: each pass is a render pass
// drawing one full-screen triangle into an offscreen colour target
// (RGBA8), sampling the previous pass's target, with `complexity`
// iterations of arithmetic per pixel. Two targets alternate (pass i writes
// target i % 2 and samples the other). Timestamps are written outside the
// render passes. Not thread-safe; record into one command buffer at a time.
class VulkanFragmentWorkload {
 public:
  static Result<std::unique_ptr<VulkanFragmentWorkload>> create(
      const VulkanContext& ctx, const FragmentWorkloadDesc& desc = {});
  ~VulkanFragmentWorkload();
  VulkanFragmentWorkload(const VulkanFragmentWorkload&) = delete;
  VulkanFragmentWorkload& operator=(const VulkanFragmentWorkload&) = delete;

  const FragmentWorkloadDesc& desc() const { return desc_; }

  // Records one pass (a whole render pass; call outside a render pass).
  void record_pass(VkCommandBuffer cmd, uint32_t complexity, uint32_t pass_index);

  // Records passes.size() passes; each timed pass allocates its uid in
  // `pool` (a render pool: "r:" uids) and is bracketed by write_begin before
  // its render pass and write_end after it. Returns each pass's offset,
  // nullopt where it went untimed.
  std::vector<std::optional<uint32_t>> record(VkCommandBuffer cmd,
                                              std::span<const WorkloadPass> passes,
                                              uint64_t frame_id, TimestampQueryPool* pool);

 private:
  explicit VulkanFragmentWorkload(const FragmentWorkloadDesc& desc);
  FragmentWorkloadDesc desc_;
  // Its Vulkan objects (private), on the context's device: the context must outlive them.
  std::unique_ptr<vk::FragmentObjects> o_;
};

// ---------------------------------------------------------------------------
// Latency device

// LatencyDevice (latlab/core/latency_device.hpp) on Vulkan. Owns its context. Each
// frame: a command buffer from a small ring with its fence, a timestamp
// before the first pass and after the last, FrameWorkload's passes in
// between (compute form: VulkanComputeWorkload; fragment form:
// VulkanFragmentWorkload, timestamps outside the render passes). wait_frame() blocks in
// vkWaitForFences (no spinning), takes host_now_ns() as soon as it returns, then reads the frame's
// timestamps with availability (never invented: not available after the fence gives
// not_ready/invalid).
//
// Threads: submit_frame/wait_frame from one thread; sample_calibration()
// from any thread (VulkanContext::sample_calibration is thread-safe, the
// queue is shared under its mutex).
class VulkanLatencyDevice final : public LatencyDevice {
 public:
  static constexpr uint32_t kMaxFramesInFlight = 3;
  // How long wait_frame waits for one frame before giving up with an error.
  static constexpr uint64_t kFrameTimeoutNs = 60'000'000'000ull;

  static Result<std::unique_ptr<VulkanLatencyDevice>> create(const VulkanContextDesc& desc);
  ~VulkanLatencyDevice() override;

  const DeviceInfo& info() const override { return info_; }
  // Error when kMaxFramesInFlight frames are already in flight, the frame id
  // is already in flight, the workload is out of range (passes >= 1,
  // complexity 1..4096, size >= 1x1), its size changes while frames are in
  // flight, or the driver fails.
  Result<void> submit_frame(uint64_t frame_id, const FrameWorkload& work) override;
  // Error when `frame_id` is not in flight, or the GPU did not finish it in
  // kFrameTimeoutNs (it stays in flight; wait again).
  Result<GpuFrameTiming> wait_frame(uint64_t frame_id) override;
  Result<CalibrationPair> sample_calibration() override { return ctx_->sample_calibration(); }
  // An X11 window and a swapchain showing each frame's result (the context
  // must have been made with VulkanContextDesc::present); see
  // src/backends/vulkan/vulkan_present.hpp. Error with the exact reason.
  Result<std::unique_ptr<PresentPath>> open_present(const PresentDesc& desc) override;
  // Its own command buffer, query pool and fence (src/backends/vulkan/vulkan_reference.hpp).
  Result<std::unique_ptr<ReferencePath>> open_reference() override;
  // Poll target: the frame's ring fence; the poller calls vkGetFenceStatus.
  std::optional<PollTarget> poll_target(uint64_t frame_id) override;
  Result<std::unique_ptr<CompletionPoller>> open_poller() override;

  const VulkanContext& context() const { return *ctx_; }
  // The compute buffer frame `frame_id` (in flight) writes; null when the
  // frame is not in flight or uses the fragment form.
  VkBuffer frame_output_buffer(uint64_t frame_id, uint32_t* width, uint32_t* height) const;

 private:
  VulkanLatencyDevice() = default;
  Result<void> ensure_workload(const FrameWorkload& work);
  // Records ring slot `slot`'s command buffer for `work` (reusable).
  Result<void> record_frame(uint32_t slot, const FrameWorkload& work, bool timed, bool host_reset);

  struct InFlight {
    bool used = false;
    uint64_t frame_id = 0;
    bool fragment = false;  // recorded by fragment_ (else compute_)
  };
  std::unique_ptr<VulkanContext> ctx_;
  DeviceInfo info_;
  std::shared_ptr<VulkanTimestampSlots> slots_;  // slots 2i, 2i+1: ring slot i's GPU begin/end
  std::unique_ptr<VulkanFrameRing> ring_;
  std::unique_ptr<VulkanComputeWorkload> compute_;
  std::unique_ptr<VulkanFragmentWorkload> fragment_;
  InFlight slots_in_flight_[kMaxFramesInFlight];
  // What ring slot i's command buffer holds: recorded once per (workload,
  // slot) and resubmitted while the workload and its targets stay the same.
  struct Recorded {
    bool valid = false;
    FrameWorkload work;
    uint64_t targets = 0;  // targets_generation_ when recorded
  };
  Recorded recorded_[kMaxFramesInFlight];
  uint64_t targets_generation_ = 0;  // rises whenever compute_ or fragment_ is recreated
  uint64_t rerecords_ = 0;
  uint64_t resubmits_ = 0;

 public:
  // Frames whose command buffer was recorded / resubmitted as recorded.
  uint64_t frames_recorded() const { return rerecords_; }
  uint64_t frames_resubmitted() const { return resubmits_; }
};

// The same device behind the backend-neutral interface.
Result<std::unique_ptr<LatencyDevice>> create_vulkan_latency_device(const VulkanContextDesc& desc);

// `latlab profile`'s rig on this backend (latlab/core/profile_rig.hpp);
// null, with `failure` set, when it cannot run the reference frame.
std::unique_ptr<ProfileRig> open_vulkan_profile_rig(const ProfileRigDesc& desc,
                                                    ProfileFailure& failure);

// `latlab profile --queues all`'s rig on one device
// (latlab/core/profile_queues_rig.hpp); null, with `failure` set, when it
// cannot run.
std::unique_ptr<QueuesProfileRig> open_vulkan_queues_rig(const ProfileRigDesc& desc,
                                                         bool all_queues, ProfileFailure& failure);

}  // namespace latlab
