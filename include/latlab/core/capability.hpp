// MissingCapability: something a device, context or run cannot do, with why.
// Device reports (Vulkan, OpenGL, CUDA), contexts and the benchmark engine's
// results list them; a missing capability is reported, never papered over.
#pragma once

#include <string>

namespace latlab {

// A capability the device lacks, with why (reported in the result).
struct MissingCapability {
  std::string name;    // e.g. "calibrated_timestamps"
  std::string reason;  // e.g. "VK_EXT_calibrated_timestamps not supported"
  bool operator==(const MissingCapability&) const = default;
};

}  // namespace latlab
