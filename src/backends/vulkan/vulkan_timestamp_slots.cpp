// VulkanTimestampSlots: the backend seam's timestamp slots on a VkQueryPool.
#include <algorithm>

#include "backends/vulkan/vk_util.hpp"
#include "latlab/vulkan.hpp"

namespace latlab {
namespace {

constexpr VkQueryResultFlags kReadFlags =
    VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT;

}  // namespace

Result<std::shared_ptr<VulkanTimestampSlots>> VulkanTimestampSlots::create(
    const VulkanContext& ctx, const VulkanTimestampSlotsDesc& desc) {
  if (desc.count < 2) {
    return make_error("VulkanTimestampSlotsDesc::count must be >= 2 (got " +
                      std::to_string(desc.count) + ")");
  }
  const VulkanCapabilities& caps = ctx.capabilities();
  const uint32_t family = desc.queue_family.value_or(ctx.queue_family());
  const VulkanQueueInfo* queue = ctx.find_queue(family);
  if (queue == nullptr) {
    return make_error("VulkanTimestampSlots: the context opened no queue of family " +
                      std::to_string(family) +
                      " (VulkanContextDesc::all_timing_queues opens one per family that can time)");
  }
  // The primary queue may be one that cannot time (caps.timestamps false);
  // every other opened queue can.
  const bool can_time = queue->primary ? caps.timestamps : true;
  if (desc.require_host_reset && !can_time) {
    return make_error(
        "GPU profiler: the queue family " + std::to_string(family) + " of '" + ctx.device_name() +
        "' cannot write timestamps (0 valid bits); pick another device with --device");
  }
  if (desc.require_host_reset && (!caps.host_query_reset || ctx.reset_query_pool_fn() == nullptr)) {
    return make_error("GPU profiler: '" + ctx.device_name() +
                      "' has no host query reset (Vulkan 1.2 hostQueryReset or "
                      "VK_EXT_host_query_reset), which the profiler needs to recycle its queries");
  }
  std::shared_ptr<VulkanTimestampSlots> s(new VulkanTimestampSlots(ctx, desc.count));
  s->ticks_ = queue->ticks;
  if (!can_time) return s;  // can_time() false: no device objects needed

  VkQueryPoolCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
  ci.queryType = VK_QUERY_TYPE_TIMESTAMP;
  ci.queryCount = desc.count;
  if (const VkResult r = vkCreateQueryPool(s->device_, &ci, nullptr, &s->pool_); r != VK_SUCCESS) {
    s->pool_ = VK_NULL_HANDLE;
    return vk::error("vkCreateQueryPool(" + std::to_string(desc.count) + " timestamps)", r);
  }
  s->owed_.resize(desc.count);
  if (s->host_reset_ != nullptr) {
    // Queries start uninitialised: reset them all so any read is defined.
    s->host_reset_(s->device_, s->pool_, 0, desc.count);
  } else {
    for (auto& o : s->owed_) o.reset_pending = true;
    s->owed_count_ = desc.count;
  }
  return s;
}

VulkanTimestampSlots::VulkanTimestampSlots(const VulkanContext& ctx, uint32_t count)
    : device_(ctx.device()),
      host_reset_(ctx.reset_query_pool_fn()),
      count_(count),
      ticks_(ctx.tick_format()) {}

VulkanTimestampSlots::~VulkanTimestampSlots() {
  if (pool_ == VK_NULL_HANDLE) return;
  // Submitted work may still write these queries (a pool disposed with a
  // frame in flight): destroying the pool under it is undefined
  // (VUID-vkDestroyQueryPool-queryPool-00793). A lost device returns at once.
  (void)vkDeviceWaitIdle(device_);
  vkDestroyQueryPool(device_, pool_, nullptr);
}

void VulkanTimestampSlots::record_resets(VkCommandBuffer cmd, uint32_t first, uint32_t count) {
  // One vkCmdResetQueryPool per run of consecutive owed resets.
  uint32_t q = first;
  const uint32_t end = std::min(first + count, count_);
  while (q < end) {
    if (!owed_[q].reset_pending) {
      ++q;
      continue;
    }
    uint32_t run = q;
    while (run < end && owed_[run].reset_pending) {
      owed_[run].reset_pending = false;
      if (!owed_[run].stale_valid) --owed_count_;
      ++run;
    }
    vkCmdResetQueryPool(cmd, pool_, q, run - q);
    q = run;
  }
}

void VulkanTimestampSlots::record_pending_resets(VkCommandBuffer cmd) {
  if (pool_ == VK_NULL_HANDLE || owed_count_ == 0) return;
  record_resets(cmd, 0, count_);
}

namespace {
VkPipelineStageFlagBits timestamp_stage(TimestampEdge edge) {
  return edge == TimestampEdge::begin ? VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT
                                      : VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT;
}
}  // namespace

// The common case is a tail call into the driver without a stack frame of
// its own (a profiler zone makes two of these); owed resets go out of line.
void VulkanTimestampSlots::write(GpuCommandStream stream, uint32_t slot, TimestampEdge edge) {
  if (pool_ == VK_NULL_HANDLE || slot >= count_) [[unlikely]]
    return;
  const auto cmd = static_cast<VkCommandBuffer>(stream);
  if (owed_count_ != 0) [[unlikely]]
    return write_after_resets(cmd, slot, edge);
  vkCmdWriteTimestamp(cmd, timestamp_stage(edge), pool_, slot);
}

void VulkanTimestampSlots::write_after_resets(VkCommandBuffer cmd, uint32_t slot,
                                              TimestampEdge edge) {
  record_resets(cmd, slot, 1);
  vkCmdWriteTimestamp(cmd, timestamp_stage(edge), pool_, slot);
}

void VulkanTimestampSlots::read(uint32_t first, std::span<SlotReading> out) {
  if (out.empty()) return;
  const auto count =
      static_cast<uint32_t>(std::min<size_t>(out.size(), count_ - std::min(first, count_)));
  std::fill(out.begin() + count, out.end(), SlotReading{});
  if (pool_ == VK_NULL_HANDLE || count == 0) {
    std::fill(out.begin(), out.end(), SlotReading{});
    return;
  }
  // SlotReading is the layout of one 64-bit result followed by its 64-bit
  // availability word: the driver writes straight into `out`. No WAIT flag:
  // never blocks; VK_NOT_READY only means "some unavailable".
  static_assert(sizeof(SlotReading) == 2 * sizeof(uint64_t));
  const VkResult r =
      vkGetQueryPoolResults(device_, pool_, first, count, count * sizeof(SlotReading), out.data(),
                            sizeof(SlotReading), kReadFlags);
  if (r != VK_SUCCESS && r != VK_NOT_READY) {
    read_errors_.fetch_add(1, std::memory_order_relaxed);
    std::fill(out.begin(), out.begin() + count, SlotReading{});
    return;
  }
  // The availability word is "non-zero when available" (any value): fold it
  // into `available`; Vulkan reports no discontinuity and no late write.
  for (uint32_t i = 0; i < count; ++i) {
    SlotReading& q = out[i];
    q.available = (q.available | q.flags) != 0 ? 1u : 0u;
    q.flags = 0;
  }
  if (owed_count_ == 0) return;
  for (uint32_t i = 0; i < count; ++i) {
    Owed& o = owed_[first + i];
    SlotReading& q = out[i];
    // Reset not even recorded: the query holds nothing of its current use.
    if (o.reset_pending) {
      q.available = 0;
      continue;
    }
    if (!o.stale_valid || q.available == 0) continue;
    // The previous use's value, still there until the recorded reset runs.
    if (q.ticks == o.stale) {
      q.available = 0;
      continue;
    }
    o.stale_valid = false;
    --owed_count_;
  }
}

void VulkanTimestampSlots::remember_stale(uint32_t first, uint32_t count) {
  // What the queries hold now stays readable until the recorded reset runs:
  // remember it, so it is never read back as the new use's value.
  constexpr VkDeviceSize kStride = sizeof(uint64_t) * 2;
  for (uint32_t q = first; q < first + count; ++q) {
    Owed& o = owed_[q];
    const bool was_owed = o.reset_pending || o.stale_valid;
    if (!o.reset_pending) {  // keep the older stale value if a reset was already owed
      uint64_t value[2] = {0, 0};
      const VkResult r =
          vkGetQueryPoolResults(device_, pool_, q, 1, kStride, value, kStride, kReadFlags);
      o.stale_valid = (r == VK_SUCCESS || r == VK_NOT_READY) && value[1] != 0;
      o.stale = value[0];
    }
    o.reset_pending = true;
    if (!was_owed) ++owed_count_;
  }
}

void VulkanTimestampSlots::reset(uint32_t first, uint32_t count, bool previous_use_done) {
  if (pool_ == VK_NULL_HANDLE || first >= count_) return;
  count = std::min(count, count_ - first);
  // Host reset only once the previous use's commands have completed
  // (VUID-vkResetQueryPool-firstQuery-02741); else reset in the queue.
  if (host_reset_ != nullptr && previous_use_done) {
    host_reset_(device_, pool_, first, count);
    for (uint32_t q = first; q < first + count; ++q) {
      if (owed_[q].reset_pending || owed_[q].stale_valid) --owed_count_;
      owed_[q] = Owed{};
    }
    return;
  }
  remember_stale(first, count);
}

Result<std::unique_ptr<TimestampQueryPool>> create_vulkan_query_pool(const VulkanContext& ctx,
                                                                     const QueryPoolDesc& desc) {
  auto slots =
      VulkanTimestampSlots::create(ctx, {.count = std::max<uint32_t>(2, desc.max_queries)});
  if (!slots) return slots.error();
  return TimestampQueryPool::create(std::move(slots.value()), desc);
}

}  // namespace latlab
