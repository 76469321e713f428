// VulkanAttachment's private state (declared in latlab/vulkan.hpp), shared by
// vulkan_attach.cpp (create, capabilities), vulkan_calibration.cpp
// (calibration pairs) and vulkan_timestamp_slots.cpp (entry points).
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
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

  // latlab never uses the program's queue from a thread of its own (the
  // program's vkQueueWaitIdle would race latlab's submit). A ClockSync's
  // refresh thread asks for a bracketed sample and waits; the program's own
  // thread submits it in its next run_pending_calibration() (every
  // vulkan::Gpu::frame), under queue_lock; the refresh thread then
  // only waits for the fence and reads the query (no queue involved).
  // `mu` is taken by the program's thread only when `requested` is set.
  struct Deferred {
    std::mutex mu;
    std::condition_variable cv;
    std::atomic<bool> requested{false};
    bool submitted = false;  // by the program's thread, for the current request
    VkResult result = VK_SUCCESS;
    int64_t before_ns = 0;                   // host clock right before vkQueueSubmit
    std::atomic<uint64_t> service_calls{0};  // run_pending_calibration calls so far
    // The last request saw no program call in kDeferredWaitNs: later ones
    // fail at once until the program calls again (a refresh never waits long).
    bool starved = false;
    uint64_t starved_at = 0;  // service_calls when it starved
  };
  mutable Deferred deferred;
  // How long a refresh waits for the program's next call.
  static constexpr int64_t kDeferredWaitNs = 100'000'000;
  // VulkanContext's own queue: its queue_mutex covers every use of it, so
  // any thread may submit (the latency engine has no frame loop to wait for).
  bool direct_submit = false;

  Result<void> create_estimator();
  Result<CalibrationPair> sample_calibrated() const;
  Result<CalibrationPair> sample_estimated() const;
  // A ClockSync's refresh (on its own thread): the driver's pair, or the
  // bracketed estimate submitted by the program's thread (see Deferred).
  Result<CalibrationPair> sample_for_refresh() const;
  // The bracket after the submit: waits for the fence, reads the timestamp.
  Result<CalibrationPair> finish_estimated(int64_t before) const;
};

}  // namespace latlab
