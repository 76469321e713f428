#include "latlab/profiler_vulkan.hpp"

#include <algorithm>
#include <cstring>

namespace latlab {

Result<std::shared_ptr<VulkanTimestampWriter>> VulkanTimestampWriter::create(
    const VulkanContext& ctx, VulkanTimestampWriterDesc desc) {
  const VulkanCapabilities& caps = ctx.capabilities();
  if (!caps.timestamps) {
    return make_error("GPU profiler: the queue family " + std::to_string(ctx.queue_family()) + " of '" +
                      ctx.device_name() +
                      "' cannot write timestamps (0 valid bits); pick another device with --device");
  }
  if (!caps.host_query_reset || ctx.reset_query_pool_fn() == nullptr) {
    return make_error("GPU profiler: '" + ctx.device_name() +
                      "' has no host query reset (Vulkan 1.2 hostQueryReset or "
                      "VK_EXT_host_query_reset), which the profiler needs to recycle its queries");
  }
  std::shared_ptr<VulkanTimestampWriter> w(
      new VulkanTimestampWriter(ctx, std::max<uint32_t>(2, desc.query_count)));
  VkQueryPoolCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
  info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  info.queryCount = w->count_;
  if (const VkResult r = vkCreateQueryPool(w->device_, &info, nullptr, &w->pool_); r != VK_SUCCESS) {
    w->pool_ = VK_NULL_HANDLE;
    return make_error("GPU profiler: vkCreateQueryPool(" + std::to_string(w->count_) +
                      " timestamp queries) failed with VkResult " + std::to_string(static_cast<int>(r)));
  }
  // Every query writable before the profiler hands any out.
  w->reset_(w->device_, w->pool_, 0, w->count_);
  return w;
}

VulkanTimestampWriter::VulkanTimestampWriter(const VulkanContext& ctx, uint32_t count)
    : device_(ctx.device()), reset_(ctx.reset_query_pool_fn()), count_(count), ticks_(ctx.tick_format()) {}

VulkanTimestampWriter::~VulkanTimestampWriter() {
  if (pool_ != VK_NULL_HANDLE) vkDestroyQueryPool(device_, pool_, nullptr);
}

void VulkanTimestampWriter::write_timestamp(GpuCommandStream stream, uint32_t query, ZoneEdge edge) {
  vkCmdWriteTimestamp(static_cast<VkCommandBuffer>(stream),
                      edge == ZoneEdge::begin ? VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT
                                              : VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                      pool_, query);
}

void VulkanTimestampWriter::read_results(uint32_t first, std::span<TimestampReadback> out) {
  if (out.empty()) return;
  // TimestampReadback is the layout of one 64-bit result followed by its
  // 64-bit availability word: the driver writes straight into `out`.
  static_assert(sizeof(TimestampReadback) == 2 * sizeof(uint64_t));
  const auto count = static_cast<uint32_t>(std::min<size_t>(out.size(), count_ - std::min(first, count_)));
  const VkResult r = vkGetQueryPoolResults(device_, pool_, first, count, count * sizeof(TimestampReadback),
                                           out.data(), sizeof(TimestampReadback),
                                           VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
  if (r != VK_SUCCESS && r != VK_NOT_READY) {
    read_errors_.fetch_add(1, std::memory_order_relaxed);
    std::fill(out.begin(), out.end(), TimestampReadback{});
    return;
  }
  // The availability word is "non-zero when available" (any value): fold it
  // into `available`; Vulkan reports no discontinuity.
  for (size_t i = 0; i < count; ++i) {
    TimestampReadback& q = out[i];
    q.available = (q.available | q.disjoint) != 0 ? 1u : 0u;
    q.disjoint = 0;
  }
  for (size_t i = count; i < out.size(); ++i) out[i] = TimestampReadback{};
}

void VulkanTimestampWriter::reset_queries(uint32_t first, uint32_t count) {
  if (first >= count_) return;
  reset_(device_, pool_, first, std::min(count, count_ - first));
}

}  // namespace latlab
