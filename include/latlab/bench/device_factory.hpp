// Opening a LatencyDevice by backend name and device selector.
#pragma once

#include <memory>
#include <string>

#include "latlab/bench/latency_device.hpp"
#include "latlab/result.hpp"

namespace latlab {

struct DeviceSelector {
  std::string backend = "vulkan";  // "vulkan", "cuda", "gl" (or "opengl"), "sim"
  std::string device;              // index ("0") or name substring; empty = default device
  bool validation = false;         // Vulkan: the Khronos validation layer; GL: KHR_debug
  bool present = false;            // Vulkan: enable surface + swapchain extensions (open_present)
};

// Error (with the devices that exist) when the selector matches nothing.
Result<std::unique_ptr<LatencyDevice>> open_latency_device(const DeviceSelector& selector);

}  // namespace latlab
