// VulkanAttachment: latlab's timing on a device the program created (and on
// VulkanContext's, which comes through here too): the probe, what the
// program enabled, capabilities with reasons, and latlab's wishes.
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/vulkan/vk_util.hpp"
#include "backends/vulkan/vulkan_attach_parts.hpp"
#include "backends/vulkan/vulkan_context_parts.hpp"

namespace latlab {
namespace {

// The calibrated-timestamps extension to enable: the EXT one where offered
// (what every driver with either has had longest), else the KHR one; none
// where it cannot be enabled (a 1.0 instance without its dependency).
const char* calibrated_extension(const vk::Probe& p) {
  if (!p.calibrated_ext || !p.extension_deps()) return nullptr;
  return p.calibrated_ext_named ? VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME
                                : vk::kCalibratedTimestampsKhr;
}

std::string family_text(const VulkanDeviceReport& r, uint32_t family) {
  return "queue family " + std::to_string(family) + " (" + r.queue_families[family].flags_text +
         ")";
}

// How GPU times reach the host clock (driver pairs, a bracketed estimate),
// or why they cannot.
void choose_calibration(const vk::Probe& probe, const VulkanAttachDesc& desc, bool has_queue,
                        VulkanCapabilities& caps) {
  const VulkanDeviceReport& r = probe.report;
  const bool driver_pairs =
      caps.calibrated_timestamps && probe.has_device_domain && probe.has_monotonic_domain;
  if (!caps.timestamps) {
    caps.missing.push_back(
        {"timestamps", family_text(r, desc.queue_family) +
                           " reports timestampValidBits = 0: GPU work cannot be timed; results "
                           "will be missing, not zero"});
  } else if (driver_pairs) {
    caps.calibration_method = "vkGetCalibratedTimestampsEXT(device, clock_monotonic)";
    caps.calibration_domain = "CLOCK_MONOTONIC";
  } else if (has_queue) {
    caps.calibration_method =
        "bracketed submit (estimated): host reads before vkQueueSubmit and after the fence";
    caps.calibration_domain = "CLOCK_MONOTONIC";
    caps.calibration_estimated = true;
  } else {
    std::string why =
        "no calibration: the device has no calibrated timestamps enabled and no queue was handed "
        "to latlab (VulkanAttachDesc::queue and queue_lock) for a bracketed estimate, so GPU "
        "times cannot be placed on the host clock (zones keep their device durations)";
    if (calibrated_extension(probe) != nullptr && !desc.calibrated_timestamps) {
      why += "; the device offers " + std::string(calibrated_extension(probe)) +
             ": enable it at vkCreateDevice (vulkan_attach_wishes)";
    }
    caps.missing.push_back({"calibration", std::move(why)});
  }
}

// What the program asked for and did not get, or what the device offers and
// the program did not enable, with what latlab does instead.
void note_extensions_not_enabled(const vk::Probe& probe, const VulkanAttachDesc& desc,
                                 bool has_queue, VulkanCapabilities& caps) {
  if (desc.calibrated_timestamps && !caps.calibrated_timestamps) {
    caps.missing.push_back(
        {"calibrated_timestamps",
         "VulkanAttachDesc::calibrated_timestamps is set, but vkGetDeviceProcAddr gives neither "
         "vkGetCalibratedTimestampsEXT nor vkGetCalibratedTimestampsKHR (was the extension "
         "enabled at vkCreateDevice?)"});
  } else if (!desc.calibrated_timestamps && calibrated_extension(probe) != nullptr &&
             caps.timestamps && has_queue) {
    caps.missing.push_back(
        {"calibrated_timestamps",
         std::string(vk::kOfferedNotEnabled) +
             ": calibration pairs are estimated by bracketing a timestamp submitted to the queue "
             "handed to latlab"});
  }
  if (desc.host_query_reset && !caps.host_query_reset) {
    caps.missing.push_back(
        {"host_query_reset",
         "VulkanAttachDesc::host_query_reset is set, but vkGetDeviceProcAddr gives neither "
         "vkResetQueryPool nor vkResetQueryPoolEXT: queries are reset in the command buffers"});
  } else if (!desc.host_query_reset && (probe.host_reset_core || probe.host_reset_ext)) {
    caps.missing.push_back(
        {"host_query_reset", std::string(vk::kOfferedNotEnabled) +
                                 ": queries are reset in the program's command buffers "
                                 "(VulkanTimestampSlots::record_pending_resets)"});
  }
}

// What the device as the program made it lets latlab do; every missing
// piece with its reason. The order of `missing`: the family's timestamps,
// calibration, calibrated timestamps, host query reset, then the device's own.
VulkanCapabilities capabilities_of(const vk::Probe& probe, const VulkanAttachDesc& desc,
                                   const vk::DeviceFns& fns, bool has_queue) {
  const VulkanDeviceReport& r = probe.report;
  const uint32_t valid_bits = r.queue_families[desc.queue_family].timestamp_valid_bits;
  VulkanCapabilities caps;
  caps.timestamps = valid_bits > 0 && r.timestamp_period_ns > 0.0;
  caps.timestamp_valid_bits = valid_bits;
  caps.host_query_reset = fns.ResetQueryPool != nullptr;
  caps.calibrated_timestamps = fns.GetCalibratedTimestamps != nullptr;
  caps.query_reads_wait_idle = r.driver_id == VK_DRIVER_ID_MESA_LLVMPIPE;
  caps.time_domains = r.time_domains;
  choose_calibration(probe, desc, has_queue, caps);
  note_extensions_not_enabled(probe, desc, has_queue, caps);
  for (const auto& m : r.missing) {
    // The device-wide "timestamps" entry is about any family: restated for
    // the chosen one above. Host query reset the device lacks is listed by
    // the probe.
    if (m.name != "timestamps" && m.name != "timestamp_compute_and_graphics")
      caps.missing.push_back(m);
  }
  return caps;
}

}  // namespace

Result<VulkanAttachWishes> vulkan_attach_wishes(const VulkanAttachDesc& desc) {
  if (desc.instance == VK_NULL_HANDLE || desc.physical_device == VK_NULL_HANDLE) {
    return make_error(
        "vulkan_attach_wishes: VulkanAttachDesc::instance and physical_device are required");
  }
  auto ifns = vk::InstanceFns::load(desc.instance, desc.get_instance_proc_addr);
  if (!ifns) return ifns.error();
  const vk::Probe probe = vk::probe_device(*ifns, desc.api_version, desc.physical_device, 0);
  VulkanAttachWishes w;
  // Each with its dependencies met: VK_KHR_get_physical_device_properties2
  // (an instance extension) or Vulkan 1.1; the probe finds neither the
  // calibrated nor the host-reset extension usable without it, and the
  // reason is in `unavailable`.
  if (const char* ext = calibrated_extension(probe)) w.extensions.push_back(ext);
  if (probe.host_reset_ext) w.extensions.push_back(VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME);
  w.host_query_reset = probe.host_reset_core || probe.host_reset_ext;
  w.unavailable = probe.report.missing;
  return w;
}

std::vector<const char*> vulkan_attach_instance_extensions(uint32_t api_version,
                                                           PFN_vkGetInstanceProcAddr gipa) {
  if (vk::at_least(api_version, 1, 1)) return {};
  if (gipa == nullptr) gipa = vkGetInstanceProcAddr;
  const auto enumerate = reinterpret_cast<PFN_vkEnumerateInstanceExtensionProperties>(
      gipa(VK_NULL_HANDLE, "vkEnumerateInstanceExtensionProperties"));
  if (enumerate == nullptr) return {};
  uint32_t n = 0;
  if (enumerate(nullptr, &n, nullptr) != VK_SUCCESS) return {};
  std::vector<VkExtensionProperties> props(n);
  if (enumerate(nullptr, &n, props.data()) < 0) return {};
  props.resize(n);
  for (const VkExtensionProperties& p : props) {
    if (std::strcmp(p.extensionName, VK_KHR_GET_PHYSICAL_DEVICE_PROPERTIES_2_EXTENSION_NAME) == 0)
      return {VK_KHR_GET_PHYSICAL_DEVICE_PROPERTIES_2_EXTENSION_NAME};
  }
  return {};
}

void vulkan_attach_enabled(const VkDeviceCreateInfo& info, VulkanAttachDesc& desc) {
  desc.calibrated_timestamps = false;
  desc.host_query_reset = false;
  for (uint32_t i = 0; i < info.enabledExtensionCount; ++i) {
    const std::string_view name = info.ppEnabledExtensionNames[i];
    if (name == VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME || name == vk::kCalibratedTimestampsKhr)
      desc.calibrated_timestamps = true;
  }
  for (auto* s = static_cast<const VkBaseInStructure*>(info.pNext); s != nullptr; s = s->pNext) {
    if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES) {
      const auto* f = reinterpret_cast<const VkPhysicalDeviceHostQueryResetFeatures*>(s);
      desc.host_query_reset = desc.host_query_reset || f->hostQueryReset == VK_TRUE;
    } else if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES) {
      const auto* f = reinterpret_cast<const VkPhysicalDeviceVulkan12Features*>(s);
      desc.host_query_reset = desc.host_query_reset || f->hostQueryReset == VK_TRUE;
    }
  }
}

VulkanAttachment::VulkanAttachment(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

// The estimator's objects go with impl_ (Impl::Estimator).
VulkanAttachment::~VulkanAttachment() = default;

Result<std::unique_ptr<VulkanAttachment>> VulkanAttachment::create(const VulkanAttachDesc& desc) {
  if (desc.instance == VK_NULL_HANDLE || desc.physical_device == VK_NULL_HANDLE ||
      desc.device == VK_NULL_HANDLE) {
    return make_error(
        "VulkanAttachment: VulkanAttachDesc::instance, physical_device and device are required");
  }
  if ((desc.queue == VK_NULL_HANDLE) != !desc.queue_lock) {
    return make_error(
        "VulkanAttachment: VulkanAttachDesc::queue and queue_lock go together (latlab submits to "
        "a program's queue only under the program's lock)");
  }
  auto ifns = vk::InstanceFns::load(desc.instance, desc.get_instance_proc_addr);
  if (!ifns) return ifns.error();
  // Any version: at 1.0 the extensions give host query reset and calibrated
  // timestamps (what the probe found usable); timestamps are core 1.0.
  vk::Probe probe = vk::probe_device(*ifns, desc.api_version, desc.physical_device, 0);
  if (desc.queue_family >= probe.report.queue_families.size()) {
    return make_error("VulkanAttachment: '" + probe.report.name + "' has no queue family " +
                      std::to_string(desc.queue_family) + " (it has " +
                      std::to_string(probe.report.queue_families.size()) + ")");
  }
  auto impl = std::make_unique<Impl>();
  impl->desc = desc;
  impl->api_version = probe.usable_api;
  impl->props = probe.props;
  // Which name of host query reset to ask for: the core one at 1.2, else
  // the extension's (DeviceFns::load tries the other too).
  const auto reset = !desc.host_query_reset                 ? vk::DeviceFns::HostReset::off
                     : vk::at_least(probe.usable_api, 1, 2) ? vk::DeviceFns::HostReset::core
                                                            : vk::DeviceFns::HostReset::ext;
  auto fns = vk::DeviceFns::load(desc.instance, desc.device, ifns->GetInstanceProcAddr,
                                 desc.get_device_proc_addr, reset, desc.calibrated_timestamps);
  if (!fns) return fns.error();
  impl->fns = *fns;
  const uint32_t valid_bits = probe.report.queue_families[desc.queue_family].timestamp_valid_bits;
  impl->ticks = TickFormat::from_period_ns(probe.report.timestamp_period_ns,
                                           valid_bits == 0 ? 64 : valid_bits);
  const bool has_queue = desc.queue != VK_NULL_HANDLE;
  impl->caps = capabilities_of(probe, desc, impl->fns, has_queue);
  impl->report = std::move(probe.report);
  impl->calibrated = impl->caps.timestamps && !impl->caps.calibration_method.empty() &&
                     !impl->caps.calibration_estimated;
  if (impl->caps.calibration_method.empty()) {
    impl->unavailable =
        impl->caps.missing.empty() ? "no calibration" : impl->caps.missing.front().reason;
  } else if (impl->caps.calibration_estimated) {
    if (auto e = impl->create_estimator(); !e) return e.error();
  }
  return std::unique_ptr<VulkanAttachment>(new VulkanAttachment(std::move(impl)));
}

VkInstance VulkanAttachment::instance() const { return impl_->desc.instance; }
VkPhysicalDevice VulkanAttachment::physical_device() const { return impl_->desc.physical_device; }
VkDevice VulkanAttachment::device() const { return impl_->desc.device; }
uint32_t VulkanAttachment::queue_family() const { return impl_->desc.queue_family; }
uint32_t VulkanAttachment::api_version() const { return impl_->api_version; }
const VkPhysicalDeviceProperties& VulkanAttachment::properties() const { return impl_->props; }
std::string VulkanAttachment::device_name() const { return impl_->props.deviceName; }
const VulkanDeviceReport& VulkanAttachment::report() const { return impl_->report; }
const TickFormat& VulkanAttachment::tick_format() const { return impl_->ticks; }
const VulkanCapabilities& VulkanAttachment::capabilities() const { return impl_->caps; }
PFN_vkResetQueryPoolEXT VulkanAttachment::reset_query_pool_fn() const {
  return impl_->fns.ResetQueryPool;
}

TickFormat VulkanAttachment::tick_format(uint32_t family) const {
  const VulkanDeviceReport& r = impl_->report;
  const uint32_t bits =
      family < r.queue_families.size() ? r.queue_families[family].timestamp_valid_bits : 0;
  return TickFormat::from_period_ns(r.timestamp_period_ns, bits == 0 ? 64 : bits);
}

}  // namespace latlab
