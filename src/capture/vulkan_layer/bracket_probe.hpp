// The bracketing probe of VK_LAYER_LATLAB_capture (BracketRecord in
// capture_record.hpp): how much of a GPU span is the layer's own
// timestamps, and what its command buffers cost the driver, measured on one
// of the program's queues before the program has it (vkCreateDevice).
#pragma once

#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include <functional>
#include <optional>
#include <string>

#include "capture/capture_record.hpp"
#include "capture/vulkan_layer/result_buffer.hpp"

namespace latlab::capture {

// The next layer's entry points the probe calls.
struct ProbeFns {
  PFN_vkGetDeviceQueue GetDeviceQueue = nullptr;
  PFN_vkQueueSubmit QueueSubmit = nullptr;
  PFN_vkCreateFence CreateFence = nullptr;
  PFN_vkDestroyFence DestroyFence = nullptr;
  PFN_vkWaitForFences WaitForFences = nullptr;
  PFN_vkResetFences ResetFences = nullptr;
  PFN_vkCreateQueryPool CreateQueryPool = nullptr;
  PFN_vkDestroyQueryPool DestroyQueryPool = nullptr;
  PFN_vkGetQueryPoolResults GetQueryPoolResults = nullptr;
  PFN_vkCreateCommandPool CreateCommandPool = nullptr;
  PFN_vkDestroyCommandPool DestroyCommandPool = nullptr;
  PFN_vkAllocateCommandBuffers AllocateCommandBuffers = nullptr;
  PFN_vkBeginCommandBuffer BeginCommandBuffer = nullptr;
  PFN_vkEndCommandBuffer EndCommandBuffer = nullptr;
  PFN_vkCmdWriteTimestamp CmdWriteTimestamp = nullptr;
  PFN_vkCmdResetQueryPool CmdResetQueryPool = nullptr;
  PFN_vkSetDeviceLoaderData set_loader_data = nullptr;  // may be null
  const ResultBufferFns* results = nullptr;  // the end command buffer's copies to the host
  bool copy_waits = true;  // as the layer's end command buffer: its copy waits (not late copies)
};

// Device ticks to host ns (the source's calibration); nullopt: cannot.
using TicksToNs = std::function<std::optional<int64_t>(uint64_t)>;

// Runs `rounds` rounds on queue (family, index) and fills the record's
// figures; a string saying why not where the driver refused something.
// Waits for each submission (bounded: one second each). Call only while
// no other thread can use the queue.
std::optional<std::string> probe_bracketing(VkDevice device, const ProbeFns& fn, uint32_t family,
                                            uint32_t index, uint32_t rounds, const TicksToNs& to_ns,
                                            BracketRecord& out);

}  // namespace latlab::capture
