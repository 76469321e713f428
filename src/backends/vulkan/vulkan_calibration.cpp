// Calibration pairs on an attached device (VulkanContext's too):
// vkGetCalibratedTimestampsEXT when the device has it enabled with its domain
// and CLOCK_MONOTONIC, else the bracketed estimate (a timestamp submitted to
// the queue the program handed over, between two host reads), else none.
#include <chrono>
#include <string>
#include <thread>

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

// Resets the fence and submits the sample's command buffer under the
// program's queue lock; the host clock right before the submit.
namespace {
VkResult submit_sample(const VulkanAttachment::Impl& m, int64_t& before) {
  const VkFence fence = m.estimator.fence.get();
  if (const VkResult r = m.fns.ResetFences(m.desc.device, 1, &fence); r != VK_SUCCESS) return r;
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &m.estimator.cmd;
  VkResult submitted = VK_ERROR_UNKNOWN;
  m.desc.queue_lock([&] {
    before = host_now_ns();
    submitted = m.fns.QueueSubmit(m.desc.queue, 1, &si, fence);
  });
  return submitted;
}
}  // namespace

Result<CalibrationPair> VulkanAttachment::Impl::sample_estimated() const {
  std::lock_guard lock(estimator.mu);
  int64_t before = 0;
  if (const VkResult r = submit_sample(*this, before); r != VK_SUCCESS)
    return vk::error("vkQueueSubmit (calibration)", r);
  return finish_estimated(before);
}

Result<CalibrationPair> VulkanAttachment::Impl::finish_estimated(int64_t before) const {
  const VkDevice device = desc.device;
  const VkFence fence = estimator.fence.get();
  // Blocks without spinning; the command buffer must not be resubmitted
  // while pending, so this waits as long as it takes.
  const VkResult w = fns.WaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX);
  const int64_t after = host_now_ns();
  if (w != VK_SUCCESS) return vk::error("vkWaitForFences (calibration)", w);
  uint64_t result[2] = {0, 0};
  const VkResult r = fns.GetQueryPoolResults(
      device, estimator.query.get(), 0, 1, sizeof(result), result, sizeof(result),
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

Result<CalibrationPair> VulkanAttachment::Impl::sample_for_refresh() const {
  if (calibrated || !caps.calibration_estimated || direct_submit) {
    if (calibrated) return sample_calibrated();
    if (caps.calibration_estimated) return sample_estimated();
    return make_error(unavailable);
  }
  // One sample at a time: the fence and command buffer are the estimator's.
  std::lock_guard sample_lock(estimator.mu);
  Deferred& d = deferred;
  int64_t before = 0;
  {
    std::unique_lock lock(d.mu);
    if (d.starved && d.service_calls.load(std::memory_order_relaxed) == d.starved_at) {
      return make_error(
          "no bracketed calibration sample: the program has not called vulkan::Gpu::frame "
          "(VulkanAttachment::run_pending_calibration) since the last one waited 100 ms; latlab "
          "submits to the program's queue only from those calls, on the program's thread");
    }
    d.submitted = false;
    d.requested.store(true, std::memory_order_release);
    const bool got = d.cv.wait_for(lock, std::chrono::nanoseconds(kDeferredWaitNs),
                                   [&d] { return d.submitted; });
    d.requested.store(false, std::memory_order_relaxed);
    if (!got) {
      d.starved = true;
      d.starved_at = d.service_calls.load(std::memory_order_relaxed);
      return make_error(
          "no bracketed calibration sample: the program made no call of vulkan::Gpu::frame "
          "(VulkanAttachment::run_pending_calibration) within 100 ms; latlab submits to the "
          "program's queue only from those calls, on the program's thread");
    }
    if (d.result != VK_SUCCESS) return vk::error("vkQueueSubmit (calibration)", d.result);
    before = d.before_ns;
  }
  return finish_estimated(before);
}

void VulkanAttachment::run_pending_calibration() const {
  Impl::Deferred& d = impl_->deferred;
  // The frame loop's cost when nothing is asked: an increment and a load.
  d.service_calls.fetch_add(1, std::memory_order_relaxed);
  if (!d.requested.load(std::memory_order_acquire)) return;
  std::lock_guard lock(d.mu);
  if (!d.requested.load(std::memory_order_relaxed) || d.submitted) return;
  // Under d.mu: the refresh thread cannot give up on this request while it
  // is being submitted (it would reuse the fence of a pending submit).
  d.result = submit_sample(*impl_, d.before_ns);
  d.submitted = true;
  d.cv.notify_all();
}

std::unique_ptr<ClockSync> start_clock_sync(const VulkanAttachment& device,
                                            const CalibratorDesc& desc) {
  const VulkanCapabilities& caps = device.capabilities();
  if (caps.calibration_method.empty()) {
    return ClockSync::unavailable(device.device_name() + ": " + device.impl().unavailable);
  }
  // Start-up samples run here, in the program's call (sample_calibration:
  // a bracketed one submits on this thread); the refresh thread's go
  // through sample_for_refresh, which never touches the program's queue.
  const std::thread::id starter = std::this_thread::get_id();
  return ClockSync::start(
      [&device, starter] {
        return std::this_thread::get_id() == starter ? device.sample_calibration()
                                                     : device.impl().sample_for_refresh();
      },
      device.tick_format(), caps.calibration_method, desc);
}

}  // namespace latlab
