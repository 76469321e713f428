// The profile rig on Vulkan (latlab/core/profile_rig.hpp): the reference
// frame as compute and fragment passes in one command buffer per frame slot
// (VulkanFrameRing), timed on the context's queue.
#include <memory>
#include <string>
#include <utility>

#include "latlab/bench/vulkan_rig.hpp"
#include "latlab/core/profile_rig.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/vulkan.hpp"
#include "vulkan_profile_parts.hpp"

namespace latlab {
namespace {

using vulkan_profile::exceeds_limits;
using vulkan_profile::shortest;

// The context and the frame's objects. Members go in reverse: the ring (it
// waits for its work), the workloads, then the context.
class VulkanProfileRig final : public ProfileRig {
 public:
  VulkanProfileRig(std::unique_ptr<VulkanContext> ctx, const ProfileRigDesc& desc)
      : ctx_(std::move(ctx)), desc_(desc) {}

  std::string queue_name() const override {
    return "vulkan queue " + std::to_string(ctx_->queue_family());
  }
  ProfileClock clock() override {
    VulkanContext& ctx = *ctx_;
    return {.sample = [&ctx] { return ctx.sample_calibration(); },
            .ticks = ctx.tick_format(),
            .domain = ctx.capabilities().calibration_method,
            .unavailable = {}};
  }
  Result<std::shared_ptr<TimestampSlots>> make_slots(uint32_t count) override {
    auto slots = VulkanTimestampSlots::create(*ctx_, {.count = count, .require_host_reset = true});
    if (!slots) return slots.error();
    return std::shared_ptr<TimestampSlots>(slots.value());
  }
  Result<void> build(uint32_t frames_in_flight) override;

  Result<ProfileSlotWait> wait_slot(uint32_t slot) override {
    if (!ring_->in_flight(slot)) return ProfileSlotWait{};
    ProfileSlotWait w;
    w.waited = true;
    w.begin_ns = host_now_ns();
    auto waited = ring_->wait(slot);  // the frame that used this slot: frames_in_flight ago
    if (!waited) return waited.error();
    w.end_ns = host_now_ns();
    return w;
  }
  Result<GpuCommandStream> begin(uint32_t slot) override {
    auto cmd = ring_->begin(slot);
    if (!cmd) return cmd.error();
    return GpuCommandStream{cmd.value()};
  }
  Result<void> record_pass(GpuCommandStream stream, ProfilePass pass, uint32_t c) override;
  Result<void> submit(uint32_t slot, uint64_t /*frame_id*/) override { return ring_->submit(slot); }
  Result<std::vector<uint64_t>> wait_all() override {
    if (auto w = ring_->wait_all(); !w) return w.error();
    return std::vector<uint64_t>{};
  }
  ProfileRigReport report() override;

 private:
  std::unique_ptr<VulkanContext> ctx_;
  ProfileRigDesc desc_;
  std::unique_ptr<VulkanComputeWorkload> compute_;
  std::unique_ptr<VulkanFragmentWorkload> fragment_;
  std::unique_ptr<VulkanFrameRing> ring_;
};

Result<void> VulkanProfileRig::build(uint32_t frames_in_flight) {
  VulkanContext& ctx = *ctx_;
  auto compute = VulkanComputeWorkload::create(ctx, {desc_.width, desc_.height});
  if (!compute) return compute.error();
  compute_ = std::move(compute.value());
  auto fragment = VulkanFragmentWorkload::create(ctx, {desc_.width, desc_.height});
  if (!fragment) return fragment.error();
  fragment_ = std::move(fragment.value());
  auto ring = VulkanFrameRing::create(ctx, frames_in_flight);
  if (!ring) return ring.error();
  ring_ = std::move(ring.value());
  return {};
}

Result<void> VulkanProfileRig::record_pass(GpuCommandStream stream, ProfilePass pass, uint32_t c) {
  vulkan_profile::record_reference_pass(*compute_, *fragment_, static_cast<VkCommandBuffer>(stream),
                                        pass, c);
  return {};
}

ProfileRigReport VulkanProfileRig::report() {
  ProfileRigReport r = vulkan_profile::validated_report(*ctx_, desc_.validation);
  if (ctx_->capabilities().query_reads_wait_idle) {
    r.notes.push_back(
        "note: this driver waits for the device to go idle inside vkGetQueryPoolResults; "
        "collection");
    r.notes.push_back(
        "      never asks it to wait, but stalls here anyway while frames are in flight");
  }
  if (desc_.validation)
    r.footer.push_back("validation errors: " + std::to_string(ctx_->validation_error_count()));
  return r;
}

void describe(const VulkanContext& ctx, const ProfileRigDesc& desc) {
  if (!desc.on_line) return;
  const auto& caps = ctx.capabilities();
  desc.on_line("  on [" + std::to_string(ctx.device_index()) + "] " + ctx.device_name() +
               ": tick " + shortest(ctx.tick_format().period_ns()) + " ns, " +
               std::to_string(caps.timestamp_valid_bits) + " valid bits");
  for (const auto& m : caps.missing) desc.on_line("  missing " + m.name + ": " + m.reason);
}

}  // namespace

std::unique_ptr<ProfileRig> open_vulkan_profile_rig(const ProfileRigDesc& desc,
                                                    ProfileFailure& failure) {
  auto devices = enumerate_vulkan_devices();
  if (devices && devices->empty()) {
    failure = {
        "no Vulkan device found; install Mesa's lavapipe (apt install mesa-vulkan-drivers) for a "
        "software device",
        ProfileFailureKind::missing_capability};
    return nullptr;
  }
  auto ctx = VulkanContext::create(
      VulkanContextDesc{.device = desc.device, .validation = desc.validation});
  if (!ctx) {
    failure = {ctx.error().message, ProfileFailureKind::device_not_opened};
    return nullptr;
  }
  describe(*ctx.value(), desc);
  if (exceeds_limits(*ctx.value(), desc)) {
    failure = vulkan_profile::size_failure(*ctx.value(), desc);
    return nullptr;
  }
  return std::make_unique<VulkanProfileRig>(std::move(ctx.value()), desc);
}

}  // namespace latlab
