// What `latlab profile`'s two Vulkan rigs share (vulkan_profile_rig.cpp,
// vulkan_queues_rig.cpp). Private to src/backends/vulkan/.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>

#include "latlab/bench/vulkan_rig.hpp"
#include "latlab/core/profile_rig.hpp"
#include "latlab/vulkan.hpp"

namespace latlab::vulkan_profile {

// A double as its shortest round-trip text ("1", "52.083333"), as the
// device line has always printed the tick period.
inline std::string shortest(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// True when a pass of `desc`'s size does not fit the device's limits.
inline bool exceeds_limits(const VulkanContext& ctx, const ProfileRigDesc& desc) {
  const auto& limits = ctx.properties().limits;
  return uint64_t{desc.width} * desc.height * 16 > limits.maxStorageBufferRange ||
         desc.width > limits.maxFramebufferWidth || desc.height > limits.maxFramebufferHeight;
}

// The failure of a size that exceeds_limits refused.
inline ProfileFailure size_failure(const VulkanContext& ctx, const ProfileRigDesc& desc) {
  return {"--size " + std::to_string(desc.width) + "x" + std::to_string(desc.height) + " exceeds " +
              ctx.device_name() + "'s limits",
          ProfileFailureKind::usage, ctx.device_name()};
}

// The report's device and validation findings (failed when the layer
// reported errors), which both rigs start from.
inline ProfileRigReport validated_report(const VulkanContext& ctx, bool validation) {
  ProfileRigReport r;
  r.device = ctx.device_name();
  r.validation = validation;
  r.validation_errors = {.present = true, .value = ctx.validation_error_count()};
  if (validation && ctx.validation_error_count() > 0) {
    r.failed = true;
    r.errors = ctx.validation_messages();
  }
  return r;
}

// One pass of the reference frame: the compute workload's sets 0-2, the
// fragment workload's 0-1 (profile_rig.hpp names them).
inline void record_reference_pass(VulkanComputeWorkload& compute, VulkanFragmentWorkload& fragment,
                                  VkCommandBuffer cmd, ProfilePass pass, uint32_t c) {
  switch (pass) {
    case ProfilePass::simulate:
      compute.record_pass(cmd, c, 0);
      break;
    case ProfilePass::lighting_direct:
      compute.record_pass(cmd, c, 1);
      break;
    case ProfilePass::lighting_indirect:
      compute.record_pass(cmd, c, 2);
      break;
    case ProfilePass::bloom:
      fragment.record_pass(cmd, c, 0);
      break;
    case ProfilePass::tonemap:
      fragment.record_pass(cmd, c, 1);
      break;
  }
}

}  // namespace latlab::vulkan_profile
