// Where the capture layer's timestamps land for the host: its end command
// buffers copy them (vkCmdCopyQueryPoolResults) into a host-visible buffer
// that the collector reads without calling the driver. A read through
// vkGetQueryPoolResults from the collector's thread is legal Vulkan, but
// lavapipe serves it with the queue's own context and drains the queue
// first, racing with the program's next submission (a crash in the
// driver's queue thread in about 3 % of gfxreconstruct replays).
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <optional>

namespace latlab::capture {

// The next layer's entry points a result buffer needs, and the device's
// memory types.
struct ResultBufferFns {
  PFN_vkCreateBuffer CreateBuffer = nullptr;
  PFN_vkDestroyBuffer DestroyBuffer = nullptr;
  PFN_vkGetBufferMemoryRequirements GetBufferMemoryRequirements = nullptr;
  PFN_vkAllocateMemory AllocateMemory = nullptr;
  PFN_vkFreeMemory FreeMemory = nullptr;
  PFN_vkBindBufferMemory BindBufferMemory = nullptr;
  PFN_vkMapMemory MapMemory = nullptr;
  PFN_vkCmdCopyQueryPoolResults CmdCopyQueryPoolResults = nullptr;
  VkPhysicalDeviceMemoryProperties memory{};
  bool complete() const;
};

// A buffer in host-visible, host-coherent memory, mapped for its lifetime.
struct ResultBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint64_t* words = nullptr;  // the mapping, zeroed at creation
};

// nullopt: the driver refused the buffer, its memory or the mapping (what
// was made is destroyed).
std::optional<ResultBuffer> create_result_buffer(VkDevice device, const ResultBufferFns& fn,
                                                 VkDeviceSize bytes);
void destroy_result_buffer(VkDevice device, const ResultBufferFns& fn, ResultBuffer& b);

// Records the copy of `count` timestamp queries from `first` into `b` at
// `word` (each query as value, availability: two words). wait: the copy waits for the queries
// (the use's own timestamps); without, an unavailable query's availability
// is written as 0 (a pair just reset).
void record_copy_to_host(const ResultBufferFns& fn, VkCommandBuffer cb, VkQueryPool queries,
                         uint32_t first, uint32_t count, const ResultBuffer& b, uint32_t word,
                         bool wait);

// The words the device writes are read as atomics: availability first,
// with acquire order, then the values.
inline uint64_t load_acquire(uint64_t& word) {
  return std::atomic_ref<uint64_t>(word).load(std::memory_order_acquire);
}

}  // namespace latlab::capture
