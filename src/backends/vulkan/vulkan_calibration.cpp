// VulkanContext's calibration pairs: vkGetCalibratedTimestampsEXT when the
// device offers its domain and CLOCK_MONOTONIC, else the bracketed estimate
// (a submitted timestamp between two host reads).
#include <string>

#include "backends/vulkan/vk_util.hpp"
#include "backends/vulkan/vulkan_context_parts.hpp"
#include "latlab/host_clock.hpp"

namespace latlab {

Result<void> VulkanContext::create_estimator() {
  estimator_ = std::make_unique<Estimator>();
  Estimator& e = *estimator_;
  VkQueryPoolCreateInfo qci{};
  qci.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
  qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qci.queryCount = 1;
  if (const VkResult r = vkCreateQueryPool(device_, &qci, nullptr, &e.query); r != VK_SUCCESS) {
    e.query = VK_NULL_HANDLE;
    return vk::error("vkCreateQueryPool (calibration)", r);
  }
  VkCommandPoolCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pci.queueFamilyIndex = family_;
  if (const VkResult r = vkCreateCommandPool(device_, &pci, nullptr, &e.pool); r != VK_SUCCESS) {
    e.pool = VK_NULL_HANDLE;
    return vk::error("vkCreateCommandPool (calibration)", r);
  }
  VkCommandBufferAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ai.commandPool = e.pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  if (const VkResult r = vkAllocateCommandBuffers(device_, &ai, &e.cmd); r != VK_SUCCESS) {
    return vk::error("vkAllocateCommandBuffers (calibration)", r);
  }
  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  if (const VkResult r = vkCreateFence(device_, &fci, nullptr, &e.fence); r != VK_SUCCESS) {
    e.fence = VK_NULL_HANDLE;
    return vk::error("vkCreateFence (calibration)", r);
  }
  // Recorded once, resubmitted for every sample (each after the previous
  // one's fence).
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  vkBeginCommandBuffer(e.cmd, &bi);
  vkCmdResetQueryPool(e.cmd, e.query, 0, 1);
  vkCmdWriteTimestamp(e.cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, e.query, 0);
  if (const VkResult r = vkEndCommandBuffer(e.cmd); r != VK_SUCCESS) {
    return vk::error("vkEndCommandBuffer (calibration)", r);
  }
  return {};
}

Result<CalibrationPair> VulkanContext::sample_calibration() const {
  if (!caps_.timestamps) {
    return make_error(device_name() + " cannot write GPU timestamps on queue family " +
                      std::to_string(family_) + ": no calibration possible");
  }
  if (!caps_.calibration_estimated && get_calibrated_timestamps_ != nullptr) {
    // Device and the run's host clock. Never CLOCK_MONOTONIC_RAW: it is not
    // the host clock (RAW and MONOTONIC differ by the accumulated NTP slew;
    // a RAW pair used as MONOTONIC was seen ~144 ms off on lavapipe).
    VkCalibratedTimestampInfoEXT infos[2]{};
    infos[0].sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT;
    infos[0].timeDomain = VK_TIME_DOMAIN_DEVICE_EXT;
    infos[1].sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT;
    infos[1].timeDomain = VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
    uint64_t ts[2] = {0, 0};
    uint64_t deviation = 0;
    if (const VkResult r = get_calibrated_timestamps_(device_, 2, infos, ts, &deviation);
        r != VK_SUCCESS) {
      return vk::error("vkGetCalibratedTimestampsEXT", r);
    }
    CalibrationPair pair;
    pair.device_ticks = ts[0] & ticks_.mask();
    pair.host_ns = static_cast<int64_t>(ts[1]);
    pair.max_deviation_ns = static_cast<int64_t>(deviation);
    pair.estimated = false;
    return pair;
  }
  return sample_estimated();
}

Result<CalibrationPair> VulkanContext::sample_estimated() const {
  Estimator& e = *estimator_;
  std::lock_guard lock(e.mu);
  if (const VkResult r = vkResetFences(device_, 1, &e.fence); r != VK_SUCCESS)
    return vk::error("vkResetFences", r);
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &e.cmd;
  int64_t before = 0;
  {
    std::lock_guard queue_lock(queue_mutex_);
    before = host_now_ns();  // after taking the queue, right before the submit
    if (const VkResult r = vkQueueSubmit(queue_, 1, &si, e.fence); r != VK_SUCCESS) {
      return vk::error("vkQueueSubmit (calibration)", r);
    }
  }
  // Blocks without spinning; the command buffer must not be resubmitted
  // while pending, so this waits as long as it takes.
  const VkResult w = vkWaitForFences(device_, 1, &e.fence, VK_TRUE, UINT64_MAX);
  const int64_t after = host_now_ns();
  if (w != VK_SUCCESS) return vk::error("vkWaitForFences (calibration)", w);
  uint64_t result[2] = {0, 0};
  const VkResult r =
      vkGetQueryPoolResults(device_, e.query, 0, 1, sizeof(result), result, sizeof(result),
                            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
  if (r != VK_SUCCESS && r != VK_NOT_READY)
    return vk::error("vkGetQueryPoolResults (calibration)", r);
  if (result[1] == 0) {
    return make_error(
        "the calibration timestamp was not available after its fence signalled (driver bug?)");
  }
  CalibrationPair pair;
  pair.device_ticks = result[0] & ticks_.mask();
  pair.host_ns = before + (after - before) / 2;
  pair.max_deviation_ns = (after - before + 1) / 2;
  pair.estimated = true;
  return pair;
}

}  // namespace latlab
