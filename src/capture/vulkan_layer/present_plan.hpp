// How a device learns present_complete (plan_present at vkCreateDevice) and
// what that adds to the program's vkCreateDevice.
#pragma once

#include <vulkan/vulkan.h>

#include <string>
#include <vector>

#include "capture/capture_record.hpp"

namespace latlab::capture::layer {

struct DeviceFns;
struct InstanceData;

// How present_complete will be learnt on a device, and what that adds to
// the program's vkCreateDevice.
struct PresentPlan {
  PresentMethod method = PresentMethod::none;
  bool layer_ids = false;   // the layer chains VkPresentIdKHR itself
  bool chain_id = false;    // add VkPhysicalDevicePresentIdFeaturesKHR
  bool chain_wait = false;  // add VkPhysicalDevicePresentWaitFeaturesKHR
  std::string why_not;      // method none: why (the Unavailable record)
  std::string note;         // something offered and left unused
};

// Appends `e` to `exts` unless it is there already.
void add_extension(std::vector<const char*>& exts, const char* e);

// Prefers VK_GOOGLE_display_timing (the display's own time) and falls back
// to VK_KHR_present_id + VK_KHR_present_wait (the host time the wait
// returned); extensions it needs go on `exts`.
PresentPlan plan_present(const InstanceData& inst, VkPhysicalDevice physical,
                         const VkDeviceCreateInfo& info, std::vector<const char*>& exts);

// Loads what the planned present method calls; a missing entry point
// leaves present_complete unavailable.
void load_present_fns(DeviceFns& f, PFN_vkGetDeviceProcAddr gdpa, VkDevice device,
                      PresentPlan& present);

// Puts the present features the plan adds ahead of the program's chain.
void chain_present_features(const PresentPlan& present, VkDeviceCreateInfo& info,
                            VkPhysicalDevicePresentIdFeaturesKHR& id_features,
                            VkPhysicalDevicePresentWaitFeaturesKHR& wait_features);

}  // namespace latlab::capture::layer
