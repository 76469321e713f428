// Every test of latlab_vulkan_tests runs under the leak listener
// (testbed/leak/vk_leak_listener.hpp): a test that leaves a Vulkan object
// alive, destroys a parent before its children, or takes the process
// towards its open-file limit fails. These tests check the check.
#include <gtest/gtest.h>
#include <vulkan/vulkan.h>

#include <vector>

#include "leak/vk_leak_listener.hpp"

namespace latlab::test {
namespace {

// Before gtest_main's InitGoogleTest; the listener list keeps it.
const bool kListening = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new vkleak::Listener());
  return true;
}();

// Made through the loader, the device's objects through vkGetDeviceProcAddr
// (the attach path's way): each is counted while alive, and not after.
TEST(VulkanLeakCheck, CountsWhatIsMadeThroughTheLoaderAndTheDeviceProcAddr) {
  ASSERT_TRUE(kListening);
  const int instances = latlab_vkleak_live(LATLAB_VKLEAK_INSTANCE);
  const int devices = latlab_vkleak_live(LATLAB_VKLEAK_DEVICE);
  const int fences = latlab_vkleak_live(LATLAB_VKLEAK_FENCE);
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.apiVersion = VK_API_VERSION_1_1;
  VkInstanceCreateInfo ici{};
  ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ici.pApplicationInfo = &app;
  VkInstance instance = VK_NULL_HANDLE;
  const VkResult r = vkCreateInstance(&ici, nullptr, &instance);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER) GTEST_SKIP() << "no Vulkan driver";
  ASSERT_EQ(r, VK_SUCCESS);
  EXPECT_EQ(latlab_vkleak_live(LATLAB_VKLEAK_INSTANCE), instances + 1);
  uint32_t n = 0;
  vkEnumeratePhysicalDevices(instance, &n, nullptr);
  std::vector<VkPhysicalDevice> pds(n);
  vkEnumeratePhysicalDevices(instance, &n, pds.data());
  if (n > 0) {
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo q{};
    q.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    q.queueFamilyIndex = 0;
    q.queueCount = 1;
    q.pQueuePriorities = &priority;
    VkDeviceCreateInfo dci{};
    dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &q;
    VkDevice device = VK_NULL_HANDLE;
    ASSERT_EQ(vkCreateDevice(pds[0], &dci, nullptr, &device), VK_SUCCESS);
    EXPECT_EQ(latlab_vkleak_live(LATLAB_VKLEAK_DEVICE), devices + 1);
    auto gdpa = reinterpret_cast<PFN_vkGetDeviceProcAddr>(
        vkGetInstanceProcAddr(instance, "vkGetDeviceProcAddr"));
    ASSERT_NE(gdpa, nullptr);
    auto create = reinterpret_cast<PFN_vkCreateFence>(gdpa(device, "vkCreateFence"));
    auto destroy = reinterpret_cast<PFN_vkDestroyFence>(gdpa(device, "vkDestroyFence"));
    ASSERT_TRUE(create != nullptr && destroy != nullptr);
    VkFenceCreateInfo fci{};
    fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    VkFence fence = VK_NULL_HANDLE;
    ASSERT_EQ(create(device, &fci, nullptr, &fence), VK_SUCCESS);
    EXPECT_EQ(latlab_vkleak_live(LATLAB_VKLEAK_FENCE), fences + 1);
    destroy(device, fence, nullptr);
    EXPECT_EQ(latlab_vkleak_live(LATLAB_VKLEAK_FENCE), fences);
    vkDestroyDevice(device, nullptr);
    EXPECT_EQ(latlab_vkleak_live(LATLAB_VKLEAK_DEVICE), devices);
  }
  vkDestroyInstance(instance, nullptr);
  EXPECT_EQ(latlab_vkleak_live(LATLAB_VKLEAK_INSTANCE), instances);
}

// What the listener reports: the kinds that grew, and the fd targets that changed.
TEST(VulkanLeakCheck, NamesWhatATestLeftBehind) {
  vkleak::Snapshot before;
  vkleak::Snapshot after;
  EXPECT_EQ(vkleak::grown_objects(before, after), "");
  after.live[LATLAB_VKLEAK_INSTANCE] = 1;
  after.live[LATLAB_VKLEAK_DEVICE] = 1;
  EXPECT_EQ(vkleak::grown_objects(before, after), "instance 0 -> 1, device 0 -> 1");
  before.fds = {{"/dev/nvidiactl", 1}, {"pipe:", 2}};
  after.fds = {{"/dev/nvidiactl", 3}, {"pipe:", 2}};
  EXPECT_EQ(vkleak::changed(before.fds, after.fds), "+/dev/nvidiactl x2");
  EXPECT_EQ(vkleak::fd_kind("socket:[81234]"), "socket:");
  EXPECT_EQ(vkleak::fd_kind("anon_inode:[eventfd]"), "anon_inode:[eventfd]");
}

}  // namespace
}  // namespace latlab::test
