// VulkanTimestampSlots: the backend seam's timestamp slots on a VkQueryPool.
#include <algorithm>

#include "backends/vulkan/vk_util.hpp"
#include "backends/vulkan/vulkan_attach_parts.hpp"
#include "latlab/vulkan.hpp"

namespace latlab {
namespace {

constexpr VkQueryResultFlags kReadFlags =
    VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT;

}  // namespace

Result<std::shared_ptr<VulkanTimestampSlots>> VulkanTimestampSlots::create(
    const VulkanContext& ctx, const VulkanTimestampSlotsDesc& desc) {
  const uint32_t family = desc.queue_family.value_or(ctx.queue_family());
  if (ctx.find_queue(family) == nullptr) {
    return make_error("VulkanTimestampSlots: the context opened no queue of family " +
                      std::to_string(family) +
                      " (VulkanContextDesc::all_timing_queues opens one per family that can time)");
  }
  VulkanTimestampSlotsDesc d = desc;
  d.queue_family = family;
  return create(ctx.attachment(), d);
}

Result<std::shared_ptr<VulkanTimestampSlots>> VulkanTimestampSlots::create(
    const VulkanAttachment& device, const VulkanTimestampSlotsDesc& desc) {
  if (desc.count < 2) {
    return make_error("VulkanTimestampSlotsDesc::count must be >= 2 (got " +
                      std::to_string(desc.count) + ")");
  }
  const VulkanCapabilities& caps = device.capabilities();
  const uint32_t family = desc.queue_family.value_or(device.queue_family());
  if (family >= device.report().queue_families.size()) {
    return make_error("VulkanTimestampSlots: '" + device.device_name() + "' has no queue family " +
                      std::to_string(family));
  }
  const bool can_time = device.report().queue_families[family].timestamp_valid_bits > 0 &&
                        device.report().timestamp_period_ns > 0.0;
  if (desc.require_host_reset && !can_time) {
    return make_error(
        "GPU profiler: the queue family " + std::to_string(family) + " of '" +
        device.device_name() +
        "' cannot write timestamps (0 valid bits); pick another device with --device");
  }
  if (desc.require_host_reset &&
      (!caps.host_query_reset || device.reset_query_pool_fn() == nullptr)) {
    return make_error("GPU profiler: '" + device.device_name() +
                      "' has no host query reset (Vulkan 1.2 hostQueryReset or "
                      "VK_EXT_host_query_reset), which the profiler needs to recycle its queries");
  }
  std::shared_ptr<VulkanTimestampSlots> s(new VulkanTimestampSlots(device, desc.count));
  s->ticks_ = device.tick_format(family);
  if (!can_time) return s;  // can_time() false: no device objects needed

  const vk::DeviceFns& fns = device.impl().fns;
  VkQueryPoolCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
  ci.queryType = VK_QUERY_TYPE_TIMESTAMP;
  ci.queryCount = desc.count;
  if (const VkResult r = fns.CreateQueryPool(s->device_, &ci, nullptr, &s->pool_);
      r != VK_SUCCESS) {
    s->pool_ = VK_NULL_HANDLE;
    return vk::error("vkCreateQueryPool(" + std::to_string(desc.count) + " timestamps)", r);
  }
  s->owed_.resize(desc.count);
  if (s->host_reset_ != nullptr) {
    // Queries start uninitialised: reset them all so any read is defined.
    s->host_reset_(s->device_, s->pool_, 0, desc.count);
  } else {
    for (auto& o : s->owed_) o.reset_pending = true;
    s->pending_count_.store(desc.count, std::memory_order_relaxed);
  }
  return s;
}

VulkanTimestampSlots::VulkanTimestampSlots(const VulkanAttachment& device, uint32_t count)
    : cmd_write_timestamp_(device.impl().fns.CmdWriteTimestamp),
      count_(count),
      device_(device.device()),
      host_reset_(device.reset_query_pool_fn()),
      cmd_reset_query_pool_(device.impl().fns.CmdResetQueryPool),
      get_query_pool_results_(device.impl().fns.GetQueryPoolResults),
      destroy_query_pool_(device.impl().fns.DestroyQueryPool),
      device_wait_idle_(device.impl().fns.DeviceWaitIdle),
      ticks_(device.tick_format()) {}

VulkanTimestampSlots::~VulkanTimestampSlots() {
  if (pool_ == VK_NULL_HANDLE) return;
  // Submitted work may still write these queries (a pool disposed with a
  // frame in flight): destroying the pool under it is undefined
  // (VUID-vkDestroyQueryPool-queryPool-00793). A lost device returns at once.
  (void)device_wait_idle_(device_);
  destroy_query_pool_(device_, pool_, nullptr);
}

uint32_t VulkanTimestampSlots::record_resets(VkCommandBuffer cmd, uint32_t first, uint32_t count) {
  // One vkCmdResetQueryPool per run of consecutive owed resets.
  uint32_t q = first;
  uint32_t recorded = 0;
  const uint32_t end = std::min(first + count, count_);
  while (q < end) {
    if (!owed_[q].reset_pending) {
      ++q;
      continue;
    }
    uint32_t run = q;
    while (run < end && owed_[run].reset_pending) {
      owed_[run].reset_pending = false;
      ++run;
    }
    cmd_reset_query_pool_(cmd, pool_, q, run - q);
    recorded += run - q;
    q = run;
  }
  if (recorded != 0) pending_count_.fetch_sub(recorded, std::memory_order_relaxed);
  return recorded;
}

uint32_t VulkanTimestampSlots::record_pending_resets(VkCommandBuffer cmd) {
  if (pool_ == VK_NULL_HANDLE || pending_count_.load(std::memory_order_relaxed) == 0) return 0;
  return record_resets(cmd, 0, count_);
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
  if (pending_count_.load(std::memory_order_relaxed) != 0) [[unlikely]]
    return write_after_resets(cmd, slot, edge);
  cmd_write_timestamp_(cmd, timestamp_stage(edge), pool_, slot);
}

void VulkanTimestampSlots::write_after_resets(VkCommandBuffer cmd, uint32_t slot,
                                              TimestampEdge edge) {
  record_resets(cmd, slot, 1);
  cmd_write_timestamp_(cmd, timestamp_stage(edge), pool_, slot);
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
      get_query_pool_results_(device_, pool_, first, count, count * sizeof(SlotReading), out.data(),
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
  if (stale_count_ == 0 && pending_count_.load(std::memory_order_relaxed) == 0) return;
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
    mark_stale(first + i, false, 0);
  }
}

void VulkanTimestampSlots::mark_stale(uint32_t slot, bool valid, uint64_t value) {
  Owed& o = owed_[slot];
  if (o.stale_valid != valid) {
    if (valid) {
      ++stale_count_;
    } else {
      --stale_count_;
    }
  }
  o.stale_valid = valid;
  o.stale = value;
}

void VulkanTimestampSlots::remember_stale(uint32_t first, uint32_t count) {
  // What the queries hold now stays readable until the recorded reset runs:
  // remember it, so it is never read back as the new use's value. Queries
  // whose reset is still owed keep their older stale value and are not read
  // (one never reset is uninitialised); the others are read one call per run.
  constexpr VkDeviceSize kStride = sizeof(uint64_t) * 2;
  uint32_t q = first;
  uint32_t newly_pending = 0;
  const uint32_t end = first + count;
  while (q < end) {
    if (owed_[q].reset_pending) {
      ++q;
      continue;
    }
    uint32_t run = q;
    while (run < end && !owed_[run].reset_pending) ++run;
    const uint32_t n = run - q;
    // Grown once, to the whole pool: steady-state frames allocate nothing.
    if (scratch_.size() < 2 * static_cast<size_t>(n))
      scratch_.resize(2 * static_cast<size_t>(count_));
    uint64_t* values = scratch_.data();
    const VkResult r =
        get_query_pool_results_(device_, pool_, q, n, n * kStride, values, kStride, kReadFlags);
    const bool read_ok = r == VK_SUCCESS || r == VK_NOT_READY;
    for (uint32_t i = 0; i < n; ++i) {
      const bool available = read_ok && values[2 * i + 1] != 0;
      mark_stale(q + i, available, values[2 * i]);
      owed_[q + i].reset_pending = true;
    }
    newly_pending += n;
    q = run;
  }
  if (newly_pending != 0) pending_count_.fetch_add(newly_pending, std::memory_order_relaxed);
}

void VulkanTimestampSlots::reset(uint32_t first, uint32_t count, bool previous_use_done) {
  if (pool_ == VK_NULL_HANDLE || first >= count_) return;
  count = std::min(count, count_ - first);
  // Host reset only once the previous use's commands have completed
  // (VUID-vkResetQueryPool-firstQuery-02741); else reset in the queue.
  if (host_reset_ != nullptr && previous_use_done) {
    host_reset_(device_, pool_, first, count);
    uint32_t was_pending = 0;
    for (uint32_t q = first; q < first + count; ++q) {
      if (owed_[q].reset_pending) ++was_pending;
      mark_stale(q, false, 0);
      owed_[q].reset_pending = false;
    }
    if (was_pending != 0) pending_count_.fetch_sub(was_pending, std::memory_order_relaxed);
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

Result<std::unique_ptr<TimestampQueryPool>> create_vulkan_query_pool(const VulkanAttachment& device,
                                                                     const QueryPoolDesc& desc) {
  auto slots =
      VulkanTimestampSlots::create(device, {.count = std::max<uint32_t>(2, desc.max_queries)});
  if (!slots) return slots.error();
  return TimestampQueryPool::create(std::move(slots.value()), desc);
}

}  // namespace latlab
