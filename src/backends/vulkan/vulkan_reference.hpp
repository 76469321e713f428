// The reference path (ReferencePath, latlab/core/reference_path.hpp) of a
// VulkanLatencyDevice, private to the Vulkan backend: its own command pool,
// one command buffer recorded once (two timestamps, nothing between; with
// the query reset recorded into it when the device has no host query
// reset), its own two-slot query pool and its own fence. Per frame: a host
// query reset (when available), a fence reset, one vkQueueSubmit; the wait
// is vkWaitForFences (no spinning).
#pragma once

#include <memory>

#include "latlab/result.hpp"
#include "latlab/core/reference_path.hpp"
#include "latlab/vulkan.hpp"

namespace latlab {

// The context must outlive the path.
Result<std::unique_ptr<ReferencePath>> create_vulkan_reference_path(const VulkanContext& ctx);

}  // namespace latlab
