// VulkanContext and device reports on the machine's Vulkan devices
// (lavapipe on CI), validation layer on.
#include <algorithm>

#include "vulkan/vulkan_fixture.hpp"

namespace latlab::test {
namespace {

// lavapipe's report, if the loader sees it.
std::optional<VulkanDeviceReport> lavapipe() {
  auto devices = enumerate_vulkan_devices();
  if (!devices) return std::nullopt;
  for (const auto& d : *devices) {
    if (d.name.find("llvmpipe") != std::string::npos) return d;
  }
  return std::nullopt;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(VulkanDevices, EnumerationSeesAtLeastOneDevice) {
  auto devices = enumerate_vulkan_devices();
  ASSERT_TRUE(devices) << devices.error().message;
  ASSERT_FALSE(devices->empty()) << "no Vulkan device: install mesa-vulkan-drivers (lavapipe)";
  for (uint32_t i = 0; i < devices->size(); ++i) {
    const auto& d = (*devices)[i];
    EXPECT_EQ(d.index, i);
    EXPECT_FALSE(d.name.empty());
    EXPECT_FALSE(d.queue_families.empty());
    EXPECT_GT(d.timestamp_period_ns, 0.0);
    for (const auto& m : d.missing) {
      EXPECT_FALSE(m.name.empty());
      EXPECT_FALSE(m.reason.empty()) << m.name;
    }
  }
}

TEST(VulkanDevices, LavapipeReportsNanosecondTicksWith64ValidBits) {
  const auto d = lavapipe();
  if (!d) GTEST_SKIP() << "lavapipe (Mesa llvmpipe Vulkan) is not installed here";
  EXPECT_EQ(d->type, "cpu");
  EXPECT_DOUBLE_EQ(d->timestamp_period_ns, 1.0);
  EXPECT_TRUE(d->timestamp_compute_and_graphics);
  ASSERT_FALSE(d->queue_families.empty());
  EXPECT_EQ(d->queue_families[0].timestamp_valid_bits, 64u);
  EXPECT_NE(d->queue_families[0].flags & VK_QUEUE_COMPUTE_BIT, 0u);
  EXPECT_EQ(d->queue_families[0].flags_text, "graphics|compute|transfer");
  EXPECT_TRUE(d->host_query_reset);
  EXPECT_TRUE(d->calibrated_timestamps);
  EXPECT_TRUE(contains(d->time_domains, "device"));
  EXPECT_TRUE(contains(d->time_domains, "clock_monotonic"));
  // lavapipe has every capability latlab uses; its one quirk is reported, and
  // Vulkan's lack of a disjoint signal (no result is ever `disjoint`).
  ASSERT_EQ(d->missing.size(), 2u);
  EXPECT_EQ(d->missing[0].name, "non_blocking_query_reads");
  EXPECT_EQ(d->missing[1].name, "disjoint_detection");
  EXPECT_NE(d->missing[1].reason.find("no disjoint signal"), std::string::npos);
}

TEST_F(VulkanTest, ContextHasATimingQueue) {
  const auto& caps = ctx_->capabilities();
  EXPECT_NE(ctx_->device(), VK_NULL_HANDLE);
  EXPECT_NE(ctx_->queue(), VK_NULL_HANDLE);
  EXPECT_TRUE(caps.timestamps);
  EXPECT_GT(caps.timestamp_valid_bits, 0u);
  EXPECT_GE(VK_API_VERSION_MINOR(ctx_->api_version()), 1u);
  const auto& family = ctx_->report().queue_families.at(ctx_->queue_family());
  EXPECT_NE(family.flags & VK_QUEUE_COMPUTE_BIT, 0u);
  EXPECT_EQ(family.timestamp_valid_bits, caps.timestamp_valid_bits);
  EXPECT_FALSE(caps.calibration_method.empty());
  EXPECT_EQ(caps.calibration_domain, "CLOCK_MONOTONIC");
}

TEST_F(VulkanTest, LavapipeContextUsesCalibratedTimestamps) {
  if (ctx_->device_name().find("llvmpipe") == std::string::npos) GTEST_SKIP() << "not lavapipe";
  const auto& caps = ctx_->capabilities();
  EXPECT_TRUE(caps.host_query_reset);
  EXPECT_TRUE(caps.calibrated_timestamps);
  EXPECT_FALSE(caps.calibration_estimated);
  EXPECT_TRUE(caps.query_reads_wait_idle);
  ASSERT_EQ(caps.missing.size(), 2u) << caps.missing[0].name;
  EXPECT_EQ(caps.missing[0].name, "non_blocking_query_reads");
  EXPECT_EQ(caps.missing[1].name, "disjoint_detection");
  EXPECT_EQ(ctx_->tick_format().period_num, 1u);
  EXPECT_EQ(ctx_->tick_format().period_den, 1u);
  EXPECT_EQ(ctx_->tick_format().valid_bits, 64u);
}

TEST_F(VulkanTest, TurningHostResetOffIsReportedWithReason) {
  VulkanContextDesc desc;
  desc.host_query_reset = false;
  ASSERT_NO_FATAL_FAILURE(open(desc));
  EXPECT_FALSE(ctx_->capabilities().host_query_reset);
  EXPECT_EQ(ctx_->reset_query_pool_fn(), nullptr);
  const auto& missing = ctx_->capabilities().missing;
  EXPECT_TRUE(std::any_of(missing.begin(), missing.end(), [](const MissingCapability& m) {
    return m.name == "host_query_reset" && !m.reason.empty();
  }));
}

TEST_F(VulkanTest, DeviceByIndexAndByName) {
  const std::string name = ctx_->device_name();
  const uint32_t index = ctx_->device_index();
  VulkanContextDesc by_index;
  by_index.device = std::to_string(index);
  ASSERT_NO_FATAL_FAILURE(open(by_index));
  EXPECT_EQ(ctx_->device_name(), name);
  VulkanContextDesc by_name;
  by_name.device = name.substr(0, 4);  // case-insensitive substring
  std::transform(by_name.device.begin(), by_name.device.end(), by_name.device.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  ASSERT_NO_FATAL_FAILURE(open(by_name));
  EXPECT_EQ(ctx_->device_name().substr(0, 4), name.substr(0, 4));
}

TEST(VulkanContextErrors, UnknownDeviceIsAnErrorListingDevices) {
  auto bad_index = VulkanContext::create(VulkanContextDesc{.device = "97"});
  ASSERT_FALSE(bad_index);
  EXPECT_NE(bad_index.error().message.find("no Vulkan device with index 97"), std::string::npos)
      << bad_index.error().message;
  auto bad_name = VulkanContext::create(VulkanContextDesc{.device = "no-such-gpu-name"});
  ASSERT_FALSE(bad_name);
  EXPECT_NE(bad_name.error().message.find("devices:"), std::string::npos) << bad_name.error().message;
  auto huge = VulkanContext::create(VulkanContextDesc{.device = "99999999999999999999999"});
  EXPECT_FALSE(huge);
}

TEST_F(VulkanTest, OneShotSubmissionRunsTheRecordedCommands) {
  bool recorded = false;
  auto r = ctx_->run_one_shot([&](VkCommandBuffer cmd) { recorded = cmd != VK_NULL_HANDLE; });
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(recorded);
}

TEST_F(VulkanTest, WorkloadRejectsBadSizes) {
  EXPECT_FALSE(VulkanComputeWorkload::create(*ctx_, {0, 16}));
  auto huge = VulkanComputeWorkload::create(*ctx_, {1u << 16, 1u << 16});
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().message.find("storage buffer"), std::string::npos) << huge.error().message;
}

}  // namespace
}  // namespace latlab::test
