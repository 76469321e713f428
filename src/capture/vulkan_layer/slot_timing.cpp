// The capture layer's timestamp slots: recording a chunk's command buffers,
// growing a family by chunks, and tearing them down with the device.
#include "capture/vulkan_layer/slot_timing.hpp"

#include <vulkan/vulkan.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "capture/vulkan_layer/layer_device.hpp"
#include "capture/vulkan_layer/result_buffer.hpp"

namespace latlab::capture::layer {
namespace {

// Copies slots [first, first + n) of a chunk (both pairs) without waiting.
void record_slots_copy(DeviceData& d, VkCommandBuffer cb, SlotChunk& c, uint32_t first,
                       uint32_t n) {
  if (n == 0) return;
  record_copy_to_host(d.fn.results, cb, c.queries, first_query(first, kPairA), 4 * n, c.results,
                      8 * first, false);
}

// The late copies of a CPU device's end command buffer (kLateCopySlots):
// the slots before `slot` in its chunk. A first use copies only those
// below it, which the free ring handed out before it (their first use
// reset their queries); a later use wraps around the chunk, whose every
// slot was handed out before this slot's second use.
void record_late_copies(DeviceData& d, VkCommandBuffer cb, SlotChunk& c, uint32_t slot,
                        bool first_use) {
  const uint32_t below = std::min(slot, kLateCopySlots);
  record_slots_copy(d, cb, c, slot - below, below);
  if (!first_use)
    record_slots_copy(d, cb, c, kChunkSlots - (kLateCopySlots - below), kLateCopySlots - below);
}

// An end command buffer's work after its timestamp: X's copy to the host
// (waiting for both its timestamps, except on a CPU device), then the
// reset of the other pair Y (not for the first use: its begin reset both)
// and Y's copy, which reads unavailable once the reset executed.
void record_end_copies(DeviceData& d, VkCommandBuffer cb, SlotChunk& c, uint32_t slot, uint8_t pair,
                       bool first_use) {
  const auto other = static_cast<uint8_t>(pair ^ 1U);
  record_copy_to_host(d.fn.results, cb, c.queries, first_query(slot, pair), 2, c.results,
                      8 * slot + 4 * pair, !d.late_copies);
  if (!first_use) d.fn.CmdResetQueryPool(cb, c.queries, first_query(slot, other), 2);
  record_copy_to_host(d.fn.results, cb, c.queries, first_query(slot, other), 2, c.results,
                      8 * slot + 4 * other, false);
  if (d.late_copies) record_late_copies(d, cb, c, slot, first_use);
}

// Records command buffer `kind` of `slot` (per slot: begin_first, begin A,
// begin B, end_first, end A, end B); false when the driver refused.
bool record_slot_buffer(DeviceData& d, VkCommandBuffer cb, SlotChunk& c, uint32_t slot,
                        uint32_t kind) {
  // Our command buffers are dispatchable objects the loader has not seen.
  if (d.set_loader_data != nullptr) d.set_loader_data(d.device, cb);
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  bi.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
  if (d.fn.BeginCommandBuffer(cb, &bi) != VK_SUCCESS) return false;
  const bool is_begin = kind < 3;
  // first: pair A; then A, then B.
  const uint8_t pair = (kind % 3) == 2 ? kPairB : kPairA;
  const uint32_t x = first_query(slot, pair);
  if (kind == 0) d.fn.CmdResetQueryPool(cb, c.queries, first_query(slot, kPairA), 4);
  d.fn.CmdWriteTimestamp(
      cb, is_begin ? VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT : VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
      c.queries, is_begin ? x : x + 1);
  if (!is_begin) record_end_copies(d, cb, c, slot, pair, kind == 3);
  return d.fn.EndCommandBuffer(cb) == VK_SUCCESS;
}

// A chunk of slots on `family`: its pools, result buffer and recorded
// command buffers; null when the driver refused one of them.
std::unique_ptr<SlotChunk> create_chunk(DeviceData& d, uint32_t family) {
  auto c = std::make_unique<SlotChunk>();
  VkQueryPoolCreateInfo qi{};
  qi.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
  qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qi.queryCount = 4 * kChunkSlots;
  VkCommandPoolCreateInfo pi{};
  pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pi.queueFamilyIndex = family;
  auto drop = [&] {
    if (c->pool != VK_NULL_HANDLE) d.fn.DestroyCommandPool(d.device, c->pool, nullptr);
    if (c->queries != VK_NULL_HANDLE) d.fn.DestroyQueryPool(d.device, c->queries, nullptr);
    destroy_result_buffer(d.device, d.fn.results, c->results);
    return nullptr;
  };
  if (d.fn.CreateQueryPool(d.device, &qi, nullptr, &c->queries) != VK_SUCCESS ||
      d.fn.CreateCommandPool(d.device, &pi, nullptr, &c->pool) != VK_SUCCESS)
    return drop();
  auto results = create_result_buffer(d.device, d.fn.results, 8 * sizeof(uint64_t) * kChunkSlots);
  if (!results) return drop();
  c->results = *results;
  // Per slot: begin_first, begin A, begin B, end_first, end A, end B.
  constexpr uint32_t kPerSlot = 6;
  std::vector<VkCommandBuffer> cbs(kPerSlot * kChunkSlots);
  VkCommandBufferAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ai.commandPool = c->pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = kPerSlot * kChunkSlots;
  if (d.fn.AllocateCommandBuffers(d.device, &ai, cbs.data()) != VK_SUCCESS) return drop();
  for (uint32_t i = 0; i < kPerSlot * kChunkSlots; ++i) {
    if (!record_slot_buffer(d, cbs[i], *c, i / kPerSlot, i % kPerSlot)) return drop();
  }
  for (uint32_t s = 0; s < kChunkSlots; ++s) {
    const VkCommandBuffer* b = &cbs[kPerSlot * s];
    TimingSlot& slot = c->slots[s];
    slot.begin_first = b[0];
    slot.begin[kPairA] = b[1];
    slot.begin[kPairB] = b[2];
    slot.end_first = b[3];
    slot.end[kPairA] = b[4];
    slot.end[kPairB] = b[5];
  }
  return c;
}

}  // namespace

bool grow_family(DeviceData& d, FamilyTiming& f, uint32_t want_free) {
  std::lock_guard grow(f.grow_mu);
  bool added = false;
  for (;;) {
    {
      std::lock_guard lock(f.mu);
      if (f.free_count >= want_free) return true;
      if (f.chunk_count == kMaxChunks || f.grow_failed) return added;
    }
    auto c = create_chunk(d, f.family);
    if (!c) {
      std::lock_guard lock(f.mu);
      f.grow_failed = true;
      return added;
    }
    f.add_chunk(std::move(c));
    added = true;
  }
}

namespace {

void create_family(DeviceData& d, uint32_t family, uint32_t valid_bits) {
  auto ft = std::make_unique<FamilyTiming>();
  ft->family = family;
  auto fail = [&](const std::string& why) {
    send_unavailable(d.source, "gpu_span",
                     "queue family " + std::to_string(family) + ": " + why +
                         "; its submissions have no GPU span");
  };
  if (valid_bits == 0) {
    fail("timestampValidBits = 0 (cannot write timestamps)");
  } else if (!d.mapper) {
    fail("no calibration: " + (d.clock ? d.clock->reason() : std::string("none")));
  } else if (!grow_family(d, *ft, 1)) {
    fail(
        "the layer could not create or record its query pool, command pool, host-visible result "
        "buffer or command buffers");
  } else {
    ft->can_time = true;
  }
  d.families[family] = std::move(ft);
}

}  // namespace

void destroy_timing(DeviceData& d) {
  for (auto& [f, ft] : d.families) {
    for (uint32_t k = 0; k < ft->chunk_count; ++k) {
      d.fn.DestroyCommandPool(d.device, ft->chunks[k]->pool, nullptr);
      d.fn.DestroyQueryPool(d.device, ft->chunks[k]->queries, nullptr);
      destroy_result_buffer(d.device, d.fn.results, ft->chunks[k]->results);
    }
  }
  d.families.clear();
}

void create_families(DeviceData& d, const InstanceData& inst, VkPhysicalDevice physical,
                     const VkDeviceCreateInfo& info) {
  std::vector<VkQueueFamilyProperties> props;
  uint32_t n = 0;
  inst.GetPhysicalDeviceQueueFamilyProperties(physical, &n, nullptr);
  props.resize(n);
  inst.GetPhysicalDeviceQueueFamilyProperties(physical, &n, props.data());
  if (inst.GetPhysicalDeviceMemoryProperties != nullptr)
    inst.GetPhysicalDeviceMemoryProperties(physical, &d.fn.results.memory);
  for (uint32_t i = 0; i < info.queueCreateInfoCount; ++i) {
    const uint32_t fam = info.pQueueCreateInfos[i].queueFamilyIndex;
    if (fam < n && d.families.count(fam) == 0) create_family(d, fam, props[fam].timestampValidBits);
  }
}

void read_slots_at_idle(DeviceData& d) {
  if (!d.late_copies || d.fn.GetQueryPoolResults == nullptr) return;
  for (auto& [family, ft] : d.families) {
    std::lock_guard lock(ft->mu);
    for (uint32_t k = 0; k < ft->chunk_count; ++k) {
      SlotChunk& c = *ft->chunks[k];
      for (uint32_t s = 0; s < kChunkSlots; ++s) {
        if (!c.slots[s].busy) continue;
        std::array<uint64_t, 8> got{};
        if (d.fn.GetQueryPoolResults(
                d.device, c.queries, first_query(s, kPairA), 4, sizeof(got), got.data(),
                2 * sizeof(uint64_t),
                VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT) < 0)
          continue;
        uint64_t* w = c.results.words + 8 * s;
        for (size_t q = 0; q < 4; ++q) {
          std::atomic_ref<uint64_t>(w[2 * q]).store(got[2 * q], std::memory_order_relaxed);
          std::atomic_ref<uint64_t>(w[2 * q + 1]).store(got[2 * q + 1], std::memory_order_release);
        }
      }
    }
  }
}

}  // namespace latlab::capture::layer
