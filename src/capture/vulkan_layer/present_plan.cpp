// Chooses how a device learns present_complete: VK_GOOGLE_display_timing,
// else VK_KHR_present_id + VK_KHR_present_wait, and what each adds to the
// program's vkCreateDevice (extensions, feature structures, entry points).
#include "capture/vulkan_layer/present_plan.hpp"

#include <vulkan/vulkan.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "capture/capture_record.hpp"
#include "capture/vulkan_layer/layer_device.hpp"

namespace latlab::capture::layer {
namespace {

// The extensions the device offers; empty when they cannot be listed.
std::vector<VkExtensionProperties> offered_extensions(const InstanceData& inst,
                                                      VkPhysicalDevice physical) {
  uint32_t n = 0;
  std::vector<VkExtensionProperties> props;
  if (inst.EnumerateDeviceExtensionProperties != nullptr &&
      inst.EnumerateDeviceExtensionProperties(physical, nullptr, &n, nullptr) == VK_SUCCESS) {
    props.resize(n);
    if (inst.EnumerateDeviceExtensionProperties(physical, nullptr, &n, props.data()) < 0) n = 0;
    props.resize(n);
  }
  return props;
}

bool is_offered(const std::vector<VkExtensionProperties>& props, std::string_view e) {
  return std::any_of(props.begin(), props.end(),
                     [&](const VkExtensionProperties& p) { return e == p.extensionName; });
}

bool is_asked(const VkDeviceCreateInfo& info, std::string_view e) {
  return std::any_of(info.ppEnabledExtensionNames,
                     info.ppEnabledExtensionNames + info.enabledExtensionCount,
                     [&](const char* x) { return e == x; });
}

}  // namespace

void add_extension(std::vector<const char*>& exts, const char* e) {
  if (std::none_of(exts.begin(), exts.end(), [&](const char* x) { return std::strcmp(x, e) == 0; }))
    exts.push_back(e);
}

namespace {

// The present extensions the driver lacks, comma-separated (names exactly
// what is missing).
std::string lacked_present_extensions(const std::vector<VkExtensionProperties>& props) {
  std::string lacks;
  for (const char* e : {VK_GOOGLE_DISPLAY_TIMING_EXTENSION_NAME, VK_KHR_PRESENT_ID_EXTENSION_NAME,
                        VK_KHR_PRESENT_WAIT_EXTENSION_NAME}) {
    if (!is_offered(props, e)) lacks += (lacks.empty() ? "" : ", ") + std::string(e);
  }
  return lacks;
}

// Why the driver's presentId / presentWait features cannot be used; empty
// when both are on.
std::string present_wait_features_off(const InstanceData& inst, VkPhysicalDevice physical) {
  if (inst.GetPhysicalDeviceFeatures2 == nullptr) {
    return "vkGetPhysicalDeviceFeatures2 is missing (a Vulkan 1.0 instance): the present "
           "id and wait features cannot be checked";
  }
  VkPhysicalDevicePresentWaitFeaturesKHR wait_f{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_WAIT_FEATURES_KHR, nullptr, VK_FALSE};
  VkPhysicalDevicePresentIdFeaturesKHR id_f{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_ID_FEATURES_KHR, &wait_f, VK_FALSE};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &id_f, {}};
  inst.GetPhysicalDeviceFeatures2(physical, &f2);
  if (!id_f.presentId || !wait_f.presentWait) {
    return std::string(
               "the driver lists VK_KHR_present_id and VK_KHR_present_wait but "
               "reports the features presentId ") +
           (id_f.presentId ? "on" : "off") + ", presentWait " + (wait_f.presentWait ? "on" : "off");
  }
  return {};
}

// Plans VK_KHR_present_id + VK_KHR_present_wait on a driver that offers
// both; `google` ends every reason it gives.
void plan_present_wait(const InstanceData& inst, VkPhysicalDevice physical,
                       const VkDeviceCreateInfo& info, std::vector<const char*>& exts,
                       const std::string& google, PresentPlan& plan) {
  if (std::string off = present_wait_features_off(inst, physical); !off.empty()) {
    plan.why_not = off + google;
    return;
  }
  // The program's own feature structures are never rewritten: one that
  // turns a feature off leaves present_complete unavailable.
  const auto* app_id = chain_find<VkPhysicalDevicePresentIdFeaturesKHR>(
      info.pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_ID_FEATURES_KHR);
  const auto* app_wait = chain_find<VkPhysicalDevicePresentWaitFeaturesKHR>(
      info.pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_WAIT_FEATURES_KHR);
  if ((app_id != nullptr && !app_id->presentId) ||
      (app_wait != nullptr && !app_wait->presentWait)) {
    plan.why_not =
        "the program chains its own present id / present wait feature structure with "
        "the feature off (the layer does not rewrite the program's structures)" +
        google;
    return;
  }
  plan.chain_id = app_id == nullptr;
  plan.chain_wait = app_wait == nullptr;
  // A program with the presentId feature on tags its presents itself: the
  // layer reads its ids and never mixes its own in.
  plan.layer_ids = app_id == nullptr;
  add_extension(exts, VK_KHR_PRESENT_ID_EXTENSION_NAME);
  add_extension(exts, VK_KHR_PRESENT_WAIT_EXTENSION_NAME);
  plan.method = PresentMethod::present_wait;
}

}  // namespace

PresentPlan plan_present(const InstanceData& inst, VkPhysicalDevice physical,
                         const VkDeviceCreateInfo& info, std::vector<const char*>& exts) {
  PresentPlan plan;
  const std::vector<VkExtensionProperties> props = offered_extensions(inst, physical);
  if (!is_asked(info, VK_KHR_SWAPCHAIN_EXTENSION_NAME)) {
    plan.why_not =
        "the program did not enable VK_KHR_swapchain on this device: it presents nothing";
    return plan;
  }
  if (is_offered(props, "VK_EXT_present_timing")) {
    plan.note =
        "the device offers VK_EXT_present_timing; this layer, built with Vulkan headers 1.3." +
        std::to_string(VK_HEADER_VERSION) + ", does not use it";
  }
  std::string google;
  if (is_offered(props, VK_GOOGLE_DISPLAY_TIMING_EXTENSION_NAME)) {
    if (!is_asked(info, VK_GOOGLE_DISPLAY_TIMING_EXTENSION_NAME)) {
      add_extension(exts, VK_GOOGLE_DISPLAY_TIMING_EXTENSION_NAME);
      plan.method = PresentMethod::display_timing;
      return plan;
    }
    // Each past timing is returned once, to whoever asks first.
    google =
        "; VK_GOOGLE_display_timing is the program's own (the layer leaves its past timings to it)";
  }
  if (!is_offered(props, VK_KHR_PRESENT_ID_EXTENSION_NAME) ||
      !is_offered(props, VK_KHR_PRESENT_WAIT_EXTENSION_NAME)) {
    plan.why_not = "the driver lacks " + lacked_present_extensions(props) +
                   " (present_complete needs VK_GOOGLE_display_timing, or VK_KHR_present_id with "
                   "VK_KHR_present_wait)" +
                   google;
    return plan;
  }
  plan_present_wait(inst, physical, info, exts, google, plan);
  return plan;
}

void load_present_fns(DeviceFns& f, PFN_vkGetDeviceProcAddr gdpa, VkDevice device,
                      PresentPlan& present) {
  if (present.method == PresentMethod::present_wait) {
    f.WaitForPresentKHR = load<PFN_vkWaitForPresentKHR>(gdpa, device, "vkWaitForPresentKHR");
    if (f.WaitForPresentKHR == nullptr) {
      present.method = PresentMethod::none;
      present.why_not = "the driver gave no vkWaitForPresentKHR";
    }
  } else if (present.method == PresentMethod::display_timing) {
    f.GetPastPresentationTimingGOOGLE = load<PFN_vkGetPastPresentationTimingGOOGLE>(
        gdpa, device, "vkGetPastPresentationTimingGOOGLE");
    if (f.GetPastPresentationTimingGOOGLE == nullptr) {
      present.method = PresentMethod::none;
      present.why_not = "the driver gave no vkGetPastPresentationTimingGOOGLE";
    }
  }
}

void chain_present_features(const PresentPlan& present, VkDeviceCreateInfo& info,
                            VkPhysicalDevicePresentIdFeaturesKHR& id_features,
                            VkPhysicalDevicePresentWaitFeaturesKHR& wait_features) {
  if (present.chain_id) {
    id_features.pNext = const_cast<void*>(info.pNext);
    info.pNext = &id_features;
  }
  if (present.chain_wait) {
    wait_features.pNext = const_cast<void*>(info.pNext);
    info.pNext = &wait_features;
  }
}

}  // namespace latlab::capture::layer
