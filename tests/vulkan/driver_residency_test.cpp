// latlab's own Vulkan instances, one after another in one process. NVIDIA's
// driver took glibc static TLS on every reload the loader did, so on the
// H200 the 31st instance in a row failed with VK_ERROR_INCOMPATIBLE_DRIVER
// (the whole test binary failed from there on). What latlab's instance loaded
// now stays resident (vulkan_instance.cpp). Lavapipe never showed it: this
// test can only fail on a driver that does.
#include <gtest/gtest.h>

#include "latlab/vulkan.hpp"

namespace latlab {
namespace {

TEST(VulkanDriverResidency, FortyInstancesInARowEachSeeEveryDevice) {
  const auto first = enumerate_vulkan_devices();
  ASSERT_TRUE(first) << first.error().message;
  if (first->empty()) GTEST_SKIP() << "no Vulkan device here";
  for (int i = 2; i <= 40; ++i) {
    const auto again = enumerate_vulkan_devices();
    ASSERT_TRUE(again) << "instance " << i << ": " << again.error().message;
    ASSERT_EQ(again->size(), first->size()) << "instance " << i << " saw a different device count";
  }
}

}  // namespace
}  // namespace latlab
