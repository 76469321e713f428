// PollTarget: what a device's completion poller polls for one frame
// (LatencyDevice::poll_target, ReferencePath::poll_target). No GPU headers.
#pragma once

#include <cstdint>

namespace latlab {

// What the completion poller polls for one submitted frame: the API object
// its completion signals (Vulkan VkFence, CUDA cudaEvent_t, GL GLsync) as an
// integer handle, or for sim the host time it completes. Opaque to the
// engine; meaningful only to the CompletionPoller of the same device.
struct PollTarget {
  uint64_t handle = 0;
  int64_t value = 0;
};

}  // namespace latlab
