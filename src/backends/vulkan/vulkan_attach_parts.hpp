// VulkanAttachment's private state (declared in latlab/vulkan.hpp), shared by
// vulkan_attach.cpp (create, capabilities), vulkan_calibration.cpp
// (calibration pairs) and vulkan_timestamp_slots.cpp (entry points).
#pragma once

#include <vulkan/vulkan.h>

#include <mutex>
#include <string>

#include "backends/vulkan/vk_dispatch.hpp"
#include "backends/vulkan/vk_unique.hpp"
#include "latlab/vulkan.hpp"

namespace latlab {

namespace vk {
// How a capability's reason starts when the device offers it and the program
// did not enable it (VulkanContext rewords it for what its desc turned off).
inline constexpr const char* kOfferedNotEnabled =
    "offered by the device but not enabled at vkCreateDevice";
}  // namespace vk

struct VulkanAttachment::Impl {
  VulkanAttachDesc desc;
  vk::DeviceFns fns;
  uint32_t api_version = 0;
  VkPhysicalDeviceProperties props{};
  VulkanDeviceReport report;
  TickFormat ticks;
  VulkanCapabilities caps;
  // How pairs are sampled: the driver's calibrated pair, the bracketed
  // estimate on desc.queue, or neither (`unavailable` says why).
  bool calibrated = false;
  std::string unavailable;
  // The bracketed estimate: a pre-recorded command buffer that resets one
  // query and writes a timestamp into it, with its fence; one sample at a
  // time (mu). Made only when the estimate is the method. Its objects are
  // destroyed through the program's entry points (fns), in reverse order:
  // the fence, the pool (freeing cmd), the query pool. Samples wait for
  // their fence before returning: nothing of latlab's is in flight then.
  struct Estimator {
    std::mutex mu;
    vk::UniqueQueryPool query;
    vk::UniqueCommandPool pool;
    VkCommandBuffer cmd = VK_NULL_HANDLE;  // freed with pool
    vk::UniqueFence fence;
  };
  mutable Estimator estimator;

  Result<void> create_estimator();
  Result<CalibrationPair> sample_calibrated() const;
  Result<CalibrationPair> sample_estimated() const;
};

}  // namespace latlab
