// VulkanLatencyDevice: the latency engine's device interface on Vulkan.
#include "backends/vulkan/vk_util.hpp"
#include "backends/vulkan/vulkan_present.hpp"
#include "backends/vulkan/vulkan_reference.hpp"
#include "latlab/bench/vulkan_rig.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/vulkan.hpp"

namespace latlab {

Result<std::unique_ptr<VulkanLatencyDevice>> VulkanLatencyDevice::create(
    const VulkanContextDesc& desc) {
  std::unique_ptr<VulkanLatencyDevice> dev(new VulkanLatencyDevice());
  auto ctx = VulkanContext::create(desc);
  if (!ctx) return ctx.error();
  dev->ctx_ = std::move(ctx.value());
  const VulkanContext& c = *dev->ctx_;
  const VulkanCapabilities& caps = c.capabilities();

  DeviceInfo& info = dev->info_;
  info.backend = "vulkan";
  info.name = c.device_name();
  info.driver = c.report().driver_name.empty()
                    ? "driver version " + std::to_string(c.report().driver_version)
                    : c.report().driver_name + " " + c.report().driver_info;
  info.ticks = c.tick_format();
  info.can_time = caps.timestamps;
  info.calibration_domain = caps.calibration_domain;
  info.calibration_estimated = caps.calibration_estimated;
  info.missing = caps.missing;

  // A begin/end pair of slots per frame in flight: ring slot i owns slots
  // 2i and 2i+1, so the frame path needs no uid, map or string.
  auto slots = VulkanTimestampSlots::create(c, {.count = 2 * kMaxFramesInFlight});
  if (!slots) return slots.error();
  dev->slots_ = std::move(slots.value());
  auto ring = VulkanFrameRing::create(c, kMaxFramesInFlight);
  if (!ring) return ring.error();
  dev->ring_ = std::move(ring.value());
  return dev;
}

VulkanLatencyDevice::~VulkanLatencyDevice() {
  // Frames still in flight finish before their objects go.
  if (ring_) (void)ring_->wait_all();
}

Result<void> VulkanLatencyDevice::ensure_workload(const FrameWorkload& work) {
  const bool fragment = work.form == WorkloadForm::fragment;
  if (fragment && fragment_ && fragment_->desc().width == work.width &&
      fragment_->desc().height == work.height) {
    return {};
  }
  if (!fragment && compute_ && compute_->desc().width == work.width &&
      compute_->desc().height == work.height) {
    return {};
  }
  // The old targets may be in use by frames in flight. Waiting for them here
  // would hide when they completed from wait_frame(), so refuse instead.
  for (const InFlight& f : slots_in_flight_) {
    if (f.used && f.fragment == fragment) {
      return make_error("the workload size changed while frame " + std::to_string(f.frame_id) +
                        " is in flight; wait_frame() for every frame first");
    }
  }
  ++targets_generation_;  // every prerecorded command buffer is stale now
  if (fragment) {
    fragment_.reset();
    auto w = VulkanFragmentWorkload::create(*ctx_, FragmentWorkloadDesc{work.width, work.height});
    if (!w) return w.error();
    fragment_ = std::move(w.value());
  } else {
    compute_.reset();
    auto w = VulkanComputeWorkload::create(*ctx_, ComputeWorkloadDesc{work.width, work.height});
    if (!w) return w.error();
    compute_ = std::move(w.value());
  }
  return {};
}

Result<void> VulkanLatencyDevice::submit_frame(uint64_t frame_id, const FrameWorkload& work) {
  if (auto why = frame_workload_error(work)) return make_error(*why);
  std::optional<uint32_t> slot;
  for (uint32_t i = 0; i < kMaxFramesInFlight; ++i) {
    if (slots_in_flight_[i].used && slots_in_flight_[i].frame_id == frame_id) {
      return make_error("frame " + std::to_string(frame_id) + " is already in flight");
    }
    if (!slots_in_flight_[i].used && !slot) slot = i;
  }
  if (!slot) {
    return make_error(std::to_string(kMaxFramesInFlight) +
                      " frames are in flight already; wait_frame() first");
  }
  if (auto w = ensure_workload(work); !w) return w.error();

  InFlight& f = slots_in_flight_[*slot];
  f.frame_id = frame_id;
  f.fragment = work.form == WorkloadForm::fragment;
  // The ring slot's previous frame was waited for: its pair is free. With
  // host reset the pair is reset here; without it the reset is recorded
  // into the slot's command buffer, before the writes.
  const uint32_t pair = 2 * *slot;
  const bool timed = slots_->can_time();
  const bool host_reset = timed && slots_->uses_host_reset();
  if (host_reset) slots_->reset(pair, 2, /*previous_use_done=*/true);
  Recorded& rec = recorded_[*slot];
  const bool same = rec.valid && rec.targets == targets_generation_ &&
                    rec.work.passes == work.passes && rec.work.complexity == work.complexity &&
                    rec.work.width == work.width && rec.work.height == work.height &&
                    rec.work.form == work.form;
  if (same) {
    ++resubmits_;
  } else {
    rec.valid = false;
    if (auto r = record_frame(*slot, work, timed, host_reset); !r) {
      f = InFlight{};
      return r.error();
    }
    rec = Recorded{true, work, targets_generation_};
    ++rerecords_;
  }
  if (auto s = ring_->submit_recorded(*slot); !s) {
    f = InFlight{};
    return s.error();
  }
  f.used = true;
  return {};
}

Result<void> VulkanLatencyDevice::record_frame(uint32_t slot, const FrameWorkload& work, bool timed,
                                               bool host_reset) {
  auto cmd = ring_->begin(slot, /*reusable=*/true);
  if (!cmd) return cmd.error();
  const uint32_t pair = 2 * slot;
  if (timed && !host_reset) vkCmdResetQueryPool(*cmd, slots_->handle(), pair, 2);
  if (work.form == WorkloadForm::fragment) {
    // GPU begin before the first render pass, end after the last: both
    // outside render passes.
    if (timed) slots_->write(*cmd, pair, TimestampEdge::begin);
    for (uint32_t p = 0; p < work.passes; ++p) fragment_->record_pass(*cmd, work.complexity, p);
  } else {
    // GPU begin: after the barrier that orders this frame after earlier
    // work, before the first dispatch. GPU end: after the last pass.
    for (uint32_t p = 0; p < work.passes; ++p) {
      compute_->record_barrier(*cmd);
      if (p == 0 && timed) slots_->write(*cmd, pair, TimestampEdge::begin);
      compute_->record_dispatch(*cmd, work.complexity, p);
    }
  }
  if (timed) slots_->write(*cmd, pair + 1, TimestampEdge::end);
  return ring_->end(slot);
}

Result<GpuFrameTiming> VulkanLatencyDevice::wait_frame(uint64_t frame_id) {
  std::optional<uint32_t> slot;
  for (uint32_t i = 0; i < kMaxFramesInFlight; ++i) {
    if (slots_in_flight_[i].used && slots_in_flight_[i].frame_id == frame_id) slot = i;
  }
  if (!slot) return make_error("frame " + std::to_string(frame_id) + " is not in flight");
  auto done = ring_->wait(*slot, kFrameTimeoutNs);
  const int64_t wake_ns = host_now_ns();  // first thing after the wait returns
  if (!done) return done.error();
  if (!*done) {
    return make_error("the GPU did not finish frame " + std::to_string(frame_id) + " within " +
                      std::to_string(kFrameTimeoutNs / 1'000'000'000ull) + " s");
  }
  GpuFrameTiming t;
  t.fence_status = QueryStatus::ok;
  t.fence_wake_ns = wake_ns;
  if (slots_->can_time()) {
    // Its fence signalled: the pair is final now (read with availability;
    // a slot the device never wrote is invalid, never invented).
    SlotReading pair[2];
    slots_->read(2 * *slot, pair);
    t.gpu_status = completed_pair_status(pair[0], pair[1], info_.ticks);
    if (t.gpu_status == QueryStatus::ok) {
      t.gpu_begin_ticks = pair[0].ticks & info_.ticks.mask();
      t.gpu_end_ticks = pair[1].ticks & info_.ticks.mask();
    }
  }
  InFlight& f = slots_in_flight_[*slot];
  f = InFlight{};
  return t;
}

VkBuffer VulkanLatencyDevice::frame_output_buffer(uint64_t frame_id, uint32_t* width,
                                                  uint32_t* height) const {
  for (const InFlight& f : slots_in_flight_) {
    if (f.used && f.frame_id == frame_id && !f.fragment && compute_) {
      *width = compute_->desc().width;
      *height = compute_->desc().height;
      return compute_->buffer();
    }
  }
  return VK_NULL_HANDLE;
}

Result<std::unique_ptr<PresentPath>> VulkanLatencyDevice::open_present(const PresentDesc& desc) {
  return create_vulkan_present_path(*this, desc);
}

Result<std::unique_ptr<ReferencePath>> VulkanLatencyDevice::open_reference() {
  return create_vulkan_reference_path(*ctx_);
}

namespace {

// vkGetFenceStatus: the fence is not externally synchronised, so this may
// run while the consumer blocks in vkWaitForFences on the same fence.
class VulkanPoller final : public CompletionPoller {
 public:
  explicit VulkanPoller(VkDevice device) : device_(device) {}
  PollStatus poll(const PollTarget& target) override {
    const VkResult r = vkGetFenceStatus(device_, reinterpret_cast<VkFence>(target.handle));
    if (r == VK_SUCCESS) return PollStatus::complete;
    return r == VK_NOT_READY ? PollStatus::pending : PollStatus::failed;
  }

 private:
  VkDevice device_;
};

}  // namespace

std::optional<PollTarget> VulkanLatencyDevice::poll_target(uint64_t frame_id) {
  for (uint32_t i = 0; i < kMaxFramesInFlight; ++i) {
    if (slots_in_flight_[i].used && slots_in_flight_[i].frame_id == frame_id)
      return PollTarget{reinterpret_cast<uint64_t>(ring_->fence(i)), 0};
  }
  return std::nullopt;
}

Result<std::unique_ptr<CompletionPoller>> VulkanLatencyDevice::open_poller() {
  return std::unique_ptr<CompletionPoller>(new VulkanPoller(ctx_->device()));
}

Result<std::unique_ptr<LatencyDevice>> create_vulkan_latency_device(const VulkanContextDesc& desc) {
  auto dev = VulkanLatencyDevice::create(desc);
  if (!dev) return dev.error();
  return std::unique_ptr<LatencyDevice>(std::move(dev.value()));
}

}  // namespace latlab
