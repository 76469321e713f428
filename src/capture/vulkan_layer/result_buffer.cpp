#include "capture/vulkan_layer/result_buffer.hpp"

#include <cstring>

namespace latlab::capture {
namespace {

// A host-visible, host-coherent memory type of `bits`, cached if there is
// one (the collector reads it); UINT32_MAX: none.
uint32_t host_memory_type(const VkPhysicalDeviceMemoryProperties& m, uint32_t bits) {
  constexpr VkMemoryPropertyFlags kNeed =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  uint32_t found = UINT32_MAX;
  for (uint32_t i = 0; i < m.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags f = m.memoryTypes[i].propertyFlags;
    if ((bits & (1U << i)) == 0 || (f & kNeed) != kNeed) continue;
    if ((f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0) return i;
    if (found == UINT32_MAX) found = i;
  }
  return found;
}

}  // namespace

bool ResultBufferFns::complete() const {
  return CreateBuffer != nullptr && DestroyBuffer != nullptr &&
         GetBufferMemoryRequirements != nullptr && AllocateMemory != nullptr &&
         FreeMemory != nullptr && BindBufferMemory != nullptr && MapMemory != nullptr &&
         CmdCopyQueryPoolResults != nullptr;
}

std::optional<ResultBuffer> create_result_buffer(VkDevice device, const ResultBufferFns& fn,
                                                 VkDeviceSize bytes) {
  if (!fn.complete()) return std::nullopt;
  ResultBuffer b;
  auto fail = [&] {
    destroy_result_buffer(device, fn, b);
    return std::nullopt;
  };
  VkBufferCreateInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bi.size = bytes;
  bi.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  if (fn.CreateBuffer(device, &bi, nullptr, &b.buffer) != VK_SUCCESS) return fail();
  VkMemoryRequirements req{};
  fn.GetBufferMemoryRequirements(device, b.buffer, &req);
  const uint32_t type = host_memory_type(fn.memory, req.memoryTypeBits);
  if (type == UINT32_MAX) return fail();
  VkMemoryAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = type;
  void* mapped = nullptr;
  if (fn.AllocateMemory(device, &ai, nullptr, &b.memory) != VK_SUCCESS ||
      fn.BindBufferMemory(device, b.buffer, b.memory, 0) != VK_SUCCESS ||
      fn.MapMemory(device, b.memory, 0, VK_WHOLE_SIZE, 0, &mapped) != VK_SUCCESS)
    return fail();
  b.words = static_cast<uint64_t*>(mapped);
  std::memset(mapped, 0, bytes);
  return b;
}

void destroy_result_buffer(VkDevice device, const ResultBufferFns& fn, ResultBuffer& b) {
  // Freeing the memory unmaps it.
  if (b.buffer != VK_NULL_HANDLE) fn.DestroyBuffer(device, b.buffer, nullptr);
  if (b.memory != VK_NULL_HANDLE) fn.FreeMemory(device, b.memory, nullptr);
  b = ResultBuffer{};
}

void record_copy_to_host(const ResultBufferFns& fn, VkCommandBuffer cb, VkQueryPool queries,
                         uint32_t first, uint32_t count, const ResultBuffer& b, uint32_t word,
                         bool wait) {
  VkQueryResultFlags flags = VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT;
  if (wait) flags |= VK_QUERY_RESULT_WAIT_BIT;
  // No barrier to the host stage after it: the collector polls the
  // memory and never waits on the program's fences, so a barrier would not
  // make the copy visible any sooner, and it cost NVIDIA about 5 us a
  // submission (docs/BENCHMARKS.md). Host-coherent memory shows the copy
  // once the device has written it; the availability words say when.
  fn.CmdCopyQueryPoolResults(cb, queries, first, count, b.buffer, VkDeviceSize{word} * 8,
                             2 * sizeof(uint64_t), flags);
}

}  // namespace latlab::capture
