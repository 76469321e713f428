// The timestamp contract suite on Vulkan (lavapipe on CI), validation layer
// on, with host query reset and with resets recorded in command buffers.
#include "conformance/timestamp_contract.hpp"
#include "one_mesa_worker.hpp"
#include "vulkan/vulkan_fixture.hpp"

namespace latlab::test {
namespace {

// Compute dispatches on one queue, two frames in flight (a VulkanFrameRing);
// hold() records a wait on a VkEvent that release() sets from the host.
template <bool HostReset>
class VulkanRig {
 public:
  static constexpr const char* kName = HostReset ? "vulkan" : "vulkan_cmd_reset";
  // Big enough that lavapipe's fixed cost per dispatch (~1-7 ms on a loaded
  // 2-core machine) does not hide the work.
  static constexpr uint32_t kScaleBase = 256;

  std::optional<std::string> open(const RigOptions& opts) {
    if (opts.one_worker) use_one_mesa_worker();
    VulkanContextDesc desc;
    desc.validation = true;
    desc.device = test_device();
    desc.host_query_reset = HostReset;
    auto ctx = VulkanContext::create(desc);
    if (!ctx) {
      ADD_FAILURE() << ctx.error().message;
      return std::nullopt;
    }
    ctx_ = std::move(ctx.value());
    auto w = VulkanComputeWorkload::create(*ctx_, {opts.work_side, opts.work_side});
    if (!w) {
      ADD_FAILURE() << w.error().message;
      return std::nullopt;
    }
    work_ = std::move(w.value());
    auto ring = VulkanFrameRing::create(*ctx_, kRigInFlight);
    if (!ring) {
      ADD_FAILURE() << ring.error().message;
      return std::nullopt;
    }
    ring_ = std::move(ring.value());
    VkEventCreateInfo eci{};
    eci.sType = VK_STRUCTURE_TYPE_EVENT_CREATE_INFO;
    EXPECT_EQ(vkCreateEvent(ctx_->device(), &eci, nullptr, &event_), VK_SUCCESS);
    return std::nullopt;
  }
  void close() {
    if (!ctx_) return;
    if (ring_) {
      EXPECT_TRUE(ring_->wait_all());
    }
    ring_.reset();
    if (event_ != VK_NULL_HANDLE) vkDestroyEvent(ctx_->device(), event_, nullptr);
    work_.reset();
    std::string all;
    for (const auto& m : ctx_->validation_messages()) all += m + "\n";
    EXPECT_EQ(ctx_->validation_error_count(), 0u) << all;
    ctx_.reset();
  }
  Result<std::unique_ptr<TimestampQueryPool>> make_pool(const QueryPoolDesc& desc) {
    auto p = create_vulkan_query_pool(*ctx_, desc);
    if (p) {
      const auto& slots = static_cast<const VulkanTimestampSlots&>(p.value()->slots());
      EXPECT_EQ(slots.uses_host_reset(), HostReset) << "lavapipe has host query reset";
    }
    return p;
  }
  TickFormat expected_ticks() {
    const auto& caps = ctx_->capabilities();
    EXPECT_TRUE(caps.timestamps);
    return TickFormat::from_period_ns(ctx_->properties().limits.timestampPeriod,
                                      caps.timestamp_valid_bits);
  }
  void begin(uint32_t slot) {
    if (ring_->in_flight(slot)) {
      ASSERT_NO_FATAL_FAILURE(wait(slot));
    }
    auto cmd = ring_->begin(slot);
    ASSERT_TRUE(cmd) << cmd.error().message;
    cmd_[slot] = *cmd;
  }
  GpuCommandStream stream(uint32_t slot) { return cmd_[slot]; }
  void barrier(uint32_t slot) { work_->record_barrier(cmd_[slot]); }
  void work(uint32_t slot, uint32_t complexity, uint32_t index) {
    work_->record_dispatch(cmd_[slot], complexity, index);
  }
  void submit(uint32_t slot) {
    auto s = ring_->submit(slot);
    ASSERT_TRUE(s) << s.error().message;
  }
  void wait(uint32_t slot) {
    auto w = ring_->wait(slot);
    ASSERT_TRUE(w && *w) << "fence wait failed";
  }
  std::optional<std::string> cannot_hold() { return std::nullopt; }
  void hold(uint32_t slot) {
    ASSERT_EQ(vkResetEvent(ctx_->device(), event_), VK_SUCCESS);
    vkCmdWaitEvents(cmd_[slot], 1, &event_, VK_PIPELINE_STAGE_HOST_BIT,
                    VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, nullptr, 0, nullptr, 0, nullptr);
  }
  void release() { vkSetEvent(ctx_->device(), event_); }
  std::optional<std::string> cannot_write_late() {
    return "a Vulkan query is reset (on the host, or recorded before its write) only once its "
           "previous use's "
           "fence signalled: no write of an earlier use can land after a reuse";
  }
  std::optional<std::string> reads_may_wait() {
    if (!ctx_->capabilities().query_reads_wait_idle) return std::nullopt;
    return ctx_->device_name() +
           " waits for idle inside vkGetQueryPoolResults (driver behaviour); see "
           "LavapipeReadsWaitForIdleIsDetected";
  }
  std::optional<std::string> dispose_needs_no_wait() { return std::nullopt; }
  bool separates_small_work() { return true; }
  // The command-buffer reset variant runs the cases that reuse slots.
  std::optional<std::string> skips(ContractCase c) {
    if (HostReset) return std::nullopt;
    switch (c) {
      case ContractCase::results_map:
      case ContractCase::tiny_pool:
      case ContractCase::full_pool:
      case ContractCase::reused_slots:
      case ContractCase::reset_slot:
        return std::nullopt;
      default:
        return "reuses no slot: the vulkan rig (host query reset) runs it";
    }
  }

 private:
  std::unique_ptr<VulkanContext> ctx_;
  std::unique_ptr<VulkanComputeWorkload> work_;
  std::unique_ptr<VulkanFrameRing> ring_;
  VkCommandBuffer cmd_[kRigInFlight] = {};
  VkEvent event_ = VK_NULL_HANDLE;
};

using VulkanRigs = ::testing::Types<VulkanRig<true>, VulkanRig<false>>;
INSTANTIATE_TYPED_TEST_SUITE_P(Vulkan, TimestampContract, VulkanRigs, RigName);

}  // namespace
}  // namespace latlab::test
