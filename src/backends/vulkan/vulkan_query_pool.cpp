// VulkanTimestampQueryPool: the pool contract on a VkQueryPool of timestamps.
#include <algorithm>

#include "backends/vulkan/vk_util.hpp"
#include "latlab/vulkan.hpp"

namespace latlab {

Result<std::unique_ptr<VulkanTimestampQueryPool>> VulkanTimestampQueryPool::create(const VulkanContext& ctx,
                                                                                    const QueryPoolDesc& desc) {
  if (desc.max_queries < 2 || desc.max_queries % 2 != 0) {
    return make_error("QueryPoolDesc::max_queries must be even and >= 2 (got " + std::to_string(desc.max_queries) + ")");
  }
  const bool can_time = ctx.capabilities().timestamps;
  std::unique_ptr<VulkanTimestampQueryPool> pool(new VulkanTimestampQueryPool(ctx, desc, can_time));
  if (!can_time) return pool;  // allocation gives nothing; no device objects needed

  VkQueryPoolCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
  ci.queryType = VK_QUERY_TYPE_TIMESTAMP;
  ci.queryCount = desc.max_queries;
  if (const VkResult r = vkCreateQueryPool(pool->device_, &ci, nullptr, &pool->pool_); r != VK_SUCCESS) {
    pool->pool_ = VK_NULL_HANDLE;
    return vk::error("vkCreateQueryPool(" + std::to_string(desc.max_queries) + " timestamps)", r);
  }
  pool->scratch_.resize(2 * static_cast<size_t>(desc.max_queries));
  pool->slots_.resize(desc.max_queries);
  pool->pair_use_.resize(desc.max_queries / 2);
  if (pool->host_reset_ != nullptr) {
    // Queries start uninitialised: reset them all so any read is defined.
    pool->host_reset_(pool->device_, pool->pool_, 0, desc.max_queries);
  } else {
    for (auto& s : pool->slots_) s.reset_pending = true;
  }
  return pool;
}

VulkanTimestampQueryPool::VulkanTimestampQueryPool(const VulkanContext& ctx, const QueryPoolDesc& desc, bool can_time)
    : TimestampQueryPool(desc, ctx.tick_format(), can_time),
      device_(ctx.device()),
      host_reset_(ctx.reset_query_pool_fn()) {}

VulkanTimestampQueryPool::~VulkanTimestampQueryPool() { dispose(); }

void VulkanTimestampQueryPool::record_resets(VkCommandBuffer cmd, uint32_t first, uint32_t count) {
  // One vkCmdResetQueryPool per run of consecutive pending queries.
  uint32_t q = first;
  const uint32_t end = first + count;
  while (q < end) {
    if (!slots_[q].reset_pending) {
      ++q;
      continue;
    }
    uint32_t run = q;
    while (run < end && slots_[run].reset_pending) slots_[run++].reset_pending = false;
    vkCmdResetQueryPool(cmd, pool_, q, run - q);
    q = run;
  }
}

void VulkanTimestampQueryPool::record_pending_resets(VkCommandBuffer cmd) {
  if (pool_ == VK_NULL_HANDLE || is_disposed()) return;
  record_resets(cmd, 0, static_cast<uint32_t>(slots_.size()));
}

void VulkanTimestampQueryPool::write_begin(VkCommandBuffer cmd, uint32_t offset) {
  if (pool_ == VK_NULL_HANDLE || is_disposed()) return;
  record_resets(cmd, offset, 2);
  vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, pool_, offset);
}

void VulkanTimestampQueryPool::write_end(VkCommandBuffer cmd, uint32_t offset) {
  if (pool_ == VK_NULL_HANDLE || is_disposed()) return;
  record_resets(cmd, offset + 1, 1);
  vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool_, offset + 1);
}

void VulkanTimestampQueryPool::read_queries(uint32_t first, uint32_t count, std::span<RawQuery> out) {
  for (uint32_t i = 0; i < count; ++i) out[i] = RawQuery{};
  if (pool_ == VK_NULL_HANDLE) return;
  constexpr VkQueryResultFlags kFlags = VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT;
  constexpr VkDeviceSize kStride = sizeof(uint64_t) * 2;
  for (uint32_t i = 0; i < count; ++i) {
    Slot& s = slots_[first + i];
    // Reset not even recorded: the query holds nothing of its current use.
    if (s.reset_pending) continue;
    // No WAIT flag: never blocks. VK_NOT_READY only means "unavailable".
    const VkResult r = vkGetQueryPoolResults(device_, pool_, first + i, 1, kStride, &scratch_[2 * i], kStride, kFlags);
    if (r != VK_SUCCESS && r != VK_NOT_READY) continue;  // device lost etc.: nothing readable
    if (scratch_[2 * i + 1] == 0) continue;
    const uint64_t ticks = scratch_[2 * i];
    // The previous use's value, still there until the recorded reset runs.
    if (s.stale_valid && ticks == s.stale) continue;
    s.stale_valid = false;
    s.last_read = ticks;
    s.last_read_valid = true;
    out[i].available = true;
    out[i].ticks = ticks;
  }
}

void VulkanTimestampQueryPool::reset_queries(uint32_t first, uint32_t count, uint64_t /*generation*/) {
  if (pool_ == VK_NULL_HANDLE) return;
  const PairUse previous = pair_use_[first / 2];
  // Host reset only once the previous use's commands have completed
  // (VUID-vkResetQueryPool-firstQuery-02741); else reset in the queue.
  const bool previous_done =
      !previous.used || (completed_frame_.has_value() && previous.frame_id <= *completed_frame_);
  if (host_reset_ != nullptr && previous_done) {
    host_reset_(device_, pool_, first, count);
    for (uint32_t i = 0; i < count; ++i) slots_[first + i] = Slot{};
  } else {
    for (uint32_t i = 0; i < count; ++i) {
      Slot& s = slots_[first + i];
      if (!s.reset_pending) {  // keep the older stale value if a reset was already owed
        s.stale_valid = s.last_read_valid;
        s.stale = s.last_read;
      }
      s.reset_pending = true;
      s.last_read_valid = false;
    }
  }
  pair_use_[first / 2] = PairUse{true, frame_of_offset(first)};
}

void VulkanTimestampQueryPool::on_frame_retired(uint64_t frame_id) {
  completed_frame_ = completed_frame_ ? std::max(*completed_frame_, frame_id) : frame_id;
}

void VulkanTimestampQueryPool::release_device_objects() {
  if (pool_ != VK_NULL_HANDLE) vkDestroyQueryPool(device_, pool_, nullptr);
  pool_ = VK_NULL_HANDLE;
}

}  // namespace latlab
