// Calibration pairs on an attached device (VulkanContext's too):
// vkGetCalibratedTimestampsEXT when the device has it enabled with its domain
// and CLOCK_MONOTONIC, else the bracketed estimate (a timestamp submitted to
// the queue the program handed over, between two host reads), else none.
#include <string>

#include "backends/vulkan/vk_unique.hpp"
#include "backends/vulkan/vk_util.hpp"
#include "backends/vulkan/vulkan_attach_parts.hpp"
#include "latlab/host_clock.hpp"

namespace latlab {

Result<void> VulkanAttachment::Impl::create_estimator() {
  Estimator& e = estimator;
  const VkDevice device = desc.device;
  VkQueryPoolCreateInfo qci{};
  qci.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
  qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qci.queryCount = 1;
  auto query = vk::make(fns.CreateQueryPool, device, qci, fns.DestroyQueryPool,
                        "vkCreateQueryPool (calibration)");
  if (!query) return query.error();
  e.query = std::move(*query);
  VkCommandPoolCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pci.queueFamilyIndex = desc.queue_family;
  auto pool = vk::make(fns.CreateCommandPool, device, pci, fns.DestroyCommandPool,
                       "vkCreateCommandPool (calibration)");
  if (!pool) return pool.error();
  e.pool = std::move(*pool);
  VkCommandBufferAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ai.commandPool = e.pool.get();
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  if (const VkResult r = fns.AllocateCommandBuffers(device, &ai, &e.cmd); r != VK_SUCCESS) {
    return vk::error("vkAllocateCommandBuffers (calibration)", r);
  }
  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  auto fence =
      vk::make(fns.CreateFence, device, fci, fns.DestroyFence, "vkCreateFence (calibration)");
  if (!fence) return fence.error();
  e.fence = std::move(*fence);
  // Recorded once, resubmitted for every sample (each after the previous
  // one's fence).
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  fns.BeginCommandBuffer(e.cmd, &bi);
  fns.CmdResetQueryPool(e.cmd, e.query.get(), 0, 1);
  fns.CmdWriteTimestamp(e.cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, e.query.get(), 0);
  if (const VkResult r = fns.EndCommandBuffer(e.cmd); r != VK_SUCCESS) {
    return vk::error("vkEndCommandBuffer (calibration)", r);
  }
  return {};
}

Result<CalibrationPair> VulkanAttachment::sample_calibration() const {
  const Impl& m = *impl_;
  if (!m.caps.timestamps) {
    return make_error(device_name() + " cannot write GPU timestamps on queue family " +
                      std::to_string(m.desc.queue_family) + ": no calibration possible");
  }
  if (m.calibrated) return m.sample_calibrated();
  if (m.caps.calibration_estimated) return m.sample_estimated();
  return make_error(device_name() + ": " + m.unavailable);
}

Result<CalibrationPair> VulkanAttachment::Impl::sample_calibrated() const {
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
  if (const VkResult r = fns.GetCalibratedTimestamps(desc.device, 2, infos, ts, &deviation);
      r != VK_SUCCESS) {
    return vk::error("vkGetCalibratedTimestampsEXT", r);
  }
  CalibrationPair pair;
  pair.device_ticks = ts[0] & ticks.mask();
  pair.host_ns = static_cast<int64_t>(ts[1]);
  pair.max_deviation_ns = static_cast<int64_t>(deviation);
  pair.estimated = false;
  return pair;
}

Result<CalibrationPair> VulkanAttachment::Impl::sample_estimated() const {
  Estimator& e = estimator;
  const VkDevice device = desc.device;
  std::lock_guard lock(e.mu);
  const VkFence fence = e.fence.get();
  if (const VkResult r = fns.ResetFences(device, 1, &fence); r != VK_SUCCESS)
    return vk::error("vkResetFences", r);
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &e.cmd;
  int64_t before = 0;
  VkResult submitted = VK_ERROR_UNKNOWN;
  // Under the program's queue lock: the host read right before the submit.
  desc.queue_lock([&] {
    before = host_now_ns();
    submitted = fns.QueueSubmit(desc.queue, 1, &si, fence);
  });
  if (submitted != VK_SUCCESS) return vk::error("vkQueueSubmit (calibration)", submitted);
  // Blocks without spinning; the command buffer must not be resubmitted
  // while pending, so this waits as long as it takes.
  const VkResult w = fns.WaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX);
  const int64_t after = host_now_ns();
  if (w != VK_SUCCESS) return vk::error("vkWaitForFences (calibration)", w);
  uint64_t result[2] = {0, 0};
  const VkResult r =
      fns.GetQueryPoolResults(device, e.query.get(), 0, 1, sizeof(result), result, sizeof(result),
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
  if (r != VK_SUCCESS && r != VK_NOT_READY)
    return vk::error("vkGetQueryPoolResults (calibration)", r);
  if (result[1] == 0) {
    return make_error(
        "the calibration timestamp was not available after its fence signalled (driver bug?)");
  }
  CalibrationPair pair;
  pair.device_ticks = result[0] & ticks.mask();
  pair.host_ns = before + (after - before) / 2;
  pair.max_deviation_ns = (after - before + 1) / 2;
  pair.estimated = true;
  return pair;
}

std::unique_ptr<ClockSync> start_clock_sync(const VulkanAttachment& device,
                                            const CalibratorDesc& desc) {
  const VulkanCapabilities& caps = device.capabilities();
  if (caps.calibration_method.empty()) {
    return ClockSync::unavailable(device.device_name() + ": " + device.impl().unavailable);
  }
  return ClockSync::start([&device] { return device.sample_calibration(); }, device.tick_format(),
                          caps.calibration_method, desc);
}

}  // namespace latlab
