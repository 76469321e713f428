// `latlab profile` on Vulkan: the reference frame (profile_rig.hpp) as
// compute and fragment passes in one command buffer per frame slot
// (VulkanFrameRing), timed on the context's queue.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "command.hpp"
#include "latlab/bench/vulkan_rig.hpp"
// This command exists to show the profiler: its zones stay in whatever
// LATLAB_ENABLE_PROFILER the build chose for user code.
#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/host_clock.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_vulkan.hpp"
#include "latlab/vulkan.hpp"
#include "profile_queues.hpp"
#include "profile_rig.hpp"

namespace latlab::cli {

// The zones of one reference frame (the tree in profile_rig.hpp); also the
// graphics command buffer of --queues all (profile_queues.cpp).
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

namespace {

// The context, the profiler and the frame's objects. Members go in reverse:
// the ring (it waits for its work), the workloads, the profiler, its slots,
// then the context.
class VulkanProfileRig final : public ProfileRig {
 public:
  VulkanProfileRig(std::unique_ptr<VulkanContext> ctx, const ProfileRequest& req)
      : ctx_(std::move(ctx)), req_(req) {}

  std::string queue_name() const override {
    return "vulkan queue " + std::to_string(ctx_->queue_family());
  }
  uint32_t zones_per_frame() const override { return 8; }
  ProfileClock clock() override {
    VulkanContext& ctx = *ctx_;
    return {.sample = [&ctx] { return ctx.sample_calibration(); },
            .ticks = ctx.tick_format(),
            .domain = ctx.capabilities().calibration_method,
            .unavailable = {}};
  }
  std::optional<ProfileFailure> build(const GpuProfilerDesc& desc) override;
  GpuProfiler& profiler() override { return *prof_; }

  Result<void> wait_slot(uint32_t slot, ChromeTraceWriter* trace) override {
    if (!ring_->in_flight(slot)) return {};
    const int64_t w0 = host_now_ns();
    auto waited = ring_->wait(slot);  // the frame that used this slot: frames_in_flight ago
    if (!waited) return waited.error();
    if (trace != nullptr) trace->add_span("CPU main", "fence wait", w0, host_now_ns());
    return {};
  }
  Result<void> record(uint32_t slot, uint32_t complexity) override {
    auto cmd = ring_->begin(slot);
    if (!cmd) return cmd.error();
    record_reference_frame(*prof_, *compute_, *fragment_, cmd.value(), complexity);
    return {};
  }
  Result<void> submit(uint32_t slot, uint64_t /*frame_id*/) override { return ring_->submit(slot); }
  Result<void> wait_all() override { return ring_->wait_all(); }

  int check(int code) override {
    if (!req_.validation || ctx_->validation_error_count() == 0) return code;
    for (const auto& m : ctx_->validation_messages()) std::fprintf(stderr, "  %s\n", m.c_str());
    return kExitRunFailed;
  }
  void add_json(nlohmann::json& out) const override {
    out["device"] = ctx_->device_name();
    out["settings"]["validation"] = req_.validation;
    out["validation_errors"] = ctx_->validation_error_count();
  }
  void print_notes() const override {
    if (!ctx_->capabilities().query_reads_wait_idle) return;
    fmt::print(
        "note: this driver waits for the device to go idle inside vkGetQueryPoolResults; "
        "collection\n"
        "      never asks it to wait, but stalls here anyway while frames are in flight\n");
  }
  void print_footer() const override {
    if (req_.validation) fmt::print("validation errors: {}\n", ctx_->validation_error_count());
  }

 private:
  std::unique_ptr<VulkanContext> ctx_;
  ProfileRequest req_;
  std::shared_ptr<VulkanTimestampSlots> slots_;
  std::unique_ptr<VulkanGpuProfiler> prof_;
  std::unique_ptr<VulkanComputeWorkload> compute_;
  std::unique_ptr<VulkanFragmentWorkload> fragment_;
  std::unique_ptr<VulkanFrameRing> ring_;
};

std::optional<ProfileFailure> VulkanProfileRig::build(const GpuProfilerDesc& desc) {
  VulkanContext& ctx = *ctx_;
  auto slots = VulkanTimestampSlots::create(
      ctx, {.count = GpuProfiler::slots_needed(desc), .require_host_reset = true});
  if (!slots) return ProfileFailure{slots.error().message, kExitMissingCapability};
  slots_ = slots.value();
  auto prof = VulkanGpuProfiler::create(slots_, desc);
  if (!prof) return ProfileFailure{prof.error().message, kExitRunFailed};
  prof_ = std::move(prof.value());
  auto compute = VulkanComputeWorkload::create(ctx, {req_.width, req_.height});
  if (!compute) return ProfileFailure{compute.error().message, kExitRunFailed};
  compute_ = std::move(compute.value());
  auto fragment = VulkanFragmentWorkload::create(ctx, {req_.width, req_.height});
  if (!fragment) return ProfileFailure{fragment.error().message, kExitRunFailed};
  fragment_ = std::move(fragment.value());
  auto ring = VulkanFrameRing::create(ctx, desc.frames_in_flight);
  if (!ring) return ProfileFailure{ring.error().message, kExitRunFailed};
  ring_ = std::move(ring.value());
  return std::nullopt;
}

bool exceeds_limits(const VulkanContext& ctx, const ProfileRequest& req) {
  const auto& limits = ctx.properties().limits;
  return uint64_t{req.width} * req.height * 16 > limits.maxStorageBufferRange ||
         req.width > limits.maxFramebufferWidth || req.height > limits.maxFramebufferHeight;
}

}  // namespace

std::unique_ptr<ProfileRig> open_vulkan_profile_rig(const ProfileRequest& req,
                                                    ProfileFailure& failure) {
  auto devices = enumerate_vulkan_devices();
  if (devices && devices->empty()) {
    failure = {
        "no Vulkan device found; install Mesa's lavapipe (apt install mesa-vulkan-drivers) for a "
        "software device",
        kExitMissingCapability};
    return nullptr;
  }
  auto ctx_r =
      VulkanContext::create(VulkanContextDesc{.device = req.device, .validation = req.validation});
  if (!ctx_r) {
    failure = {ctx_r.error().message, device_open_exit_code(req.device)};
    return nullptr;
  }
  const VulkanContext& ctx = *ctx_r.value();
  if (!req.json) {
    const auto& caps = ctx.capabilities();
    fmt::print("  on [{}] {}: tick {} ns, {} valid bits\n", ctx.device_index(), ctx.device_name(),
               ctx.tick_format().period_ns(), caps.timestamp_valid_bits);
    for (const auto& m : caps.missing) fmt::print("  missing {}: {}\n", m.name, m.reason);
  }
  if (exceeds_limits(ctx, req)) {
    failure = {
        fmt::format("--size {}x{} exceeds {}'s limits", req.width, req.height, ctx.device_name()),
        kExitUsage};
    return nullptr;
  }
  return std::make_unique<VulkanProfileRig>(std::move(ctx_r.value()), req);
}

}  // namespace latlab::cli
