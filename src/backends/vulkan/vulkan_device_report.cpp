// Device reports: what each physical device offers (driver, queue families,
// host query reset, calibrateable time domains) and what latlab cannot use
// on it, with the reason.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "backends/vulkan/vk_dispatch.hpp"
#include "backends/vulkan/vk_util.hpp"
#include "backends/vulkan/vulkan_context_parts.hpp"
#include "core/uuid_text.hpp"

namespace latlab {
namespace vk {
namespace {

std::string type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "cpu";
    default:
      return "other";
  }
}

std::string queue_flags_text(VkQueueFlags f) {
  std::string s;
  const auto add = [&](VkQueueFlags bit, const char* name) {
    if ((f & bit) == 0) return;
    if (!s.empty()) s += "|";
    s += name;
  };
  add(VK_QUEUE_GRAPHICS_BIT, "graphics");
  add(VK_QUEUE_COMPUTE_BIT, "compute");
  add(VK_QUEUE_TRANSFER_BIT, "transfer");
  add(VK_QUEUE_SPARSE_BINDING_BIT, "sparse");
  add(VK_QUEUE_PROTECTED_BIT, "protected");
  return s.empty() ? "none" : s;
}

std::vector<std::string> device_extensions(const InstanceFns& f, VkPhysicalDevice pd) {
  uint32_t n = 0;
  f.EnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> props(n);
  f.EnumerateDeviceExtensionProperties(pd, nullptr, &n, props.data());
  std::vector<std::string> out;
  out.reserve(n);
  for (uint32_t i = 0; i < n; ++i) out.emplace_back(props[i].extensionName);
  return out;
}

bool has(const std::vector<std::string>& list, const char* name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

// Name, type, ids, versions and timestamp limits from the plain properties.
void report_properties(const VkPhysicalDeviceProperties& props, uint32_t index,
                       VulkanDeviceReport& r) {
  r.index = index;
  r.name = props.deviceName;
  r.type = type_name(props.deviceType);
  r.vendor_id = props.vendorID;
  r.device_id = props.deviceID;
  r.driver_version = props.driverVersion;
  r.api_version = props.apiVersion;
  r.api_version_text = vk::version_text(props.apiVersion);
  r.timestamp_period_ns = static_cast<double>(props.limits.timestampPeriod);
  r.timestamp_compute_and_graphics = props.limits.timestampComputeAndGraphics == VK_TRUE;
}

// Driver name, info and id (VkPhysicalDeviceDriverProperties: 1.2 or
// VK_KHR_driver_properties). The *2 queries are core 1.1 (or the instance's
// VK_KHR_get_physical_device_properties2): without them, the plain facts only.
void report_driver(VkPhysicalDevice pd, const Probe& p, const std::vector<std::string>& exts,
                   VulkanDeviceReport& r) {
  if (p.properties2 == nullptr ||
      !(at_least(p.usable_api, 1, 2) || has(exts, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME)))
    return;
  VkPhysicalDeviceDriverProperties driver{};
  driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  VkPhysicalDeviceProperties2 props2{};
  props2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  props2.pNext = &driver;
  p.properties2(pd, &props2);
  r.driver_name = driver.driverName;
  r.driver_info = driver.driverInfo;
  r.driver_id = static_cast<uint32_t>(driver.driverID);
}

// The physical identity: deviceUUID (core 1.1) and, where
// VK_EXT_pci_bus_info is offered, the PCI address. Left empty otherwise.
void report_identity(const InstanceFns& f, VkPhysicalDevice pd, const Probe& p,
                     const std::vector<std::string>& exts, VulkanDeviceReport& r) {
  if (!at_least(p.usable_api, 1, 1) || f.GetPhysicalDeviceProperties2 == nullptr) return;
  VkPhysicalDevicePCIBusInfoPropertiesEXT pci{};
  pci.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT;
  VkPhysicalDeviceIDProperties id{};
  id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
  const bool has_pci = has(exts, VK_EXT_PCI_BUS_INFO_EXTENSION_NAME);
  if (has_pci) id.pNext = &pci;
  VkPhysicalDeviceProperties2 props2{};
  props2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  props2.pNext = &id;
  f.GetPhysicalDeviceProperties2(pd, &props2);
  r.device_uuid = uuid_text(id.deviceUUID);
  if (has_pci) {
    char text[32];
    std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", pci.pciDomain, pci.pciBus, pci.pciDevice,
                  pci.pciFunction);
    r.pci_bus_id = text;
  }
}

// The queue families; returns whether a compute-capable one can time.
bool report_queue_families(const InstanceFns& f, VkPhysicalDevice pd, VulkanDeviceReport& r) {
  uint32_t nq = 0;
  f.GetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> families(nq);
  f.GetPhysicalDeviceQueueFamilyProperties(pd, &nq, families.data());
  bool any_bits = false;
  for (uint32_t i = 0; i < nq; ++i) {
    VulkanQueueFamilyReport q;
    q.index = i;
    q.flags = families[i].queueFlags;
    q.flags_text = queue_flags_text(q.flags);
    q.queue_count = families[i].queueCount;
    q.timestamp_valid_bits = families[i].timestampValidBits;
    any_bits = any_bits || (q.timestamp_valid_bits > 0 && (q.flags & VK_QUEUE_COMPUTE_BIT) != 0);
    r.queue_families.push_back(q);
  }
  return any_bits;
}

// Host query reset: core in 1.2, else the extension; the feature must be on.
void probe_host_query_reset(VkPhysicalDevice pd, const std::vector<std::string>& exts, Probe& p) {
  const bool ext_reset = has(exts, VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME);
  if (p.features2 != nullptr && (at_least(p.usable_api, 1, 2) || ext_reset)) {
    VkPhysicalDeviceHostQueryResetFeatures reset{};
    reset.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES;
    VkPhysicalDeviceFeatures2 f2{};
    f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    f2.pNext = &reset;
    p.features2(pd, &f2);
    if (reset.hostQueryReset == VK_TRUE) {
      p.host_reset_core = at_least(p.usable_api, 1, 2);
      p.host_reset_ext = !p.host_reset_core;
    }
  }
  p.report.host_query_reset = p.host_reset_core || p.host_reset_ext;
}

// VK_KHR/EXT_calibrated_timestamps and the time domains it offers.
void probe_time_domains(const InstanceFns& f, VkPhysicalDevice pd,
                        const std::vector<std::string>& exts, Probe& p) {
  VulkanDeviceReport& r = p.report;
  p.calibrated_khr = has(exts, kCalibratedTimestampsKhr);
  p.calibrated_ext_named = has(exts, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
  p.calibrated_ext = p.calibrated_khr || p.calibrated_ext_named;
  r.calibrated_timestamps = p.calibrated_ext;
  if (!p.calibrated_ext) return;
  const auto get_domains = f.GetPhysicalDeviceCalibrateableTimeDomains;
  if (get_domains == nullptr) return;
  uint32_t nd = 0;
  get_domains(pd, &nd, nullptr);
  std::vector<VkTimeDomainEXT> domains(nd);
  get_domains(pd, &nd, domains.data());
  domains.resize(nd);
  for (const VkTimeDomainEXT d : domains) {
    r.time_domains.push_back(time_domain_name(d));
    p.has_device_domain = p.has_device_domain || d == VK_TIME_DOMAIN_DEVICE_EXT;
    p.has_monotonic_domain = p.has_monotonic_domain || d == VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
  }
}

constexpr const char* kNoProperties2 =
    "a Vulkan 1.0 instance without VK_KHR_get_physical_device_properties2: host query reset and "
    "calibrated timestamps cannot be enabled (their extensions need it); enable it at "
    "vkCreateInstance (vulkan_attach_instance_extensions) or create the instance at Vulkan 1.1";

// What latlab cannot use on the device, each with the reason.
void report_missing(const Probe& p, bool any_bits, VulkanDeviceReport& r) {
  if (!any_bits) {
    r.missing.push_back({"timestamps",
                         "no compute-capable queue family reports timestampValidBits > 0: GPU "
                         "work cannot be timed on this device"});
  } else if (!r.timestamp_compute_and_graphics) {
    r.missing.push_back(
        {"timestamp_compute_and_graphics",
         "timestampComputeAndGraphics is false: only the queue families listed with valid "
         "bits > 0 can time"});
  }
  if (r.driver_id == VK_DRIVER_ID_MESA_LLVMPIPE) {
    r.missing.push_back(
        {"non_blocking_query_reads",
         "lavapipe waits for the device to go idle inside vkGetQueryPoolResults (even without "
         "the WAIT flag): reading results stalls while later frames are in flight"});
  }
  // A Vulkan 1.0 instance without VK_KHR_get_physical_device_properties2:
  // host query reset cannot be queried, and neither extension latlab wishes
  // for may be enabled (both depend on that one or on 1.1).
  const bool deps = p.extension_deps();
  if (!deps) {
    r.missing.push_back({"get_physical_device_properties2", kNoProperties2});
  }
  if (!r.host_query_reset) {
    r.missing.push_back(
        {"host_query_reset",
         deps ? "needs Vulkan 1.2 or VK_EXT_host_query_reset with the hostQueryReset feature: "
                "queries are reset in the command buffer instead"
              : "VK_EXT_host_query_reset needs VK_KHR_get_physical_device_properties2 on a Vulkan "
                "1.0 instance: queries are reset in the command buffer instead"});
  }
  // Vulkan's timestamps are one device clock with no "disjoint" signal
  // (GL_EXT_disjoint_timer_query has no Vulkan counterpart): a result is
  // never `disjoint` here, whatever happened to the clock during the span.
  r.missing.push_back({"disjoint_detection",
                       "Vulkan has no disjoint signal: a GPU clock discontinuity during a timed "
                       "span (reset, power state) cannot be detected; a span crossing one reads "
                       "as ok or, if end < begin, invalid"});
  if (p.calibrated_ext && !deps) {
    r.missing.push_back(
        {"calibrated_timestamps",
         "VK_EXT_calibrated_timestamps needs VK_KHR_get_physical_device_properties2 on a Vulkan "
         "1.0 instance: calibration pairs need a bracketed submit"});
  } else if (!p.calibrated_ext) {
    r.missing.push_back(
        {"calibrated_timestamps",
         "VK_EXT_calibrated_timestamps (nor the KHR one) not supported: calibration pairs "
         "are estimated by bracketing a submitted timestamp"});
  } else if (!p.has_device_domain || !p.has_monotonic_domain) {
    r.missing.push_back(
        {"calibration_clock_monotonic",
         std::string("VK_EXT_calibrated_timestamps does not offer ") +
             (!p.has_device_domain ? "the device domain" : "CLOCK_MONOTONIC") +
             ": calibration pairs are estimated by bracketing a submitted timestamp"});
  }
}

}  // namespace

Probe probe_device(const InstanceFns& f, uint32_t instance_api, VkPhysicalDevice pd,
                   uint32_t index) {
  Probe p;
  f.GetPhysicalDeviceProperties(pd, &p.props);
  // An apiVersion of 0 is Vulkan 1.0 (VkApplicationInfo's rule).
  p.usable_api =
      vk::min_version(instance_api == 0 ? VK_API_VERSION_1_0 : instance_api, p.props.apiVersion);
  if (at_least(p.usable_api, 1, 1)) {
    p.properties2 = f.GetPhysicalDeviceProperties2;
    p.features2 = f.GetPhysicalDeviceFeatures2;
  } else {
    p.properties2 = f.GetPhysicalDeviceProperties2Khr;
    p.features2 = f.GetPhysicalDeviceFeatures2Khr;
  }
  const auto exts = device_extensions(f, pd);
  report_properties(p.props, index, p.report);
  report_driver(pd, p, exts, p.report);
  report_identity(f, pd, p, exts, p.report);
  const bool any_bits = report_queue_families(f, pd, p.report);
  probe_host_query_reset(pd, exts, p);
  probe_time_domains(f, pd, exts, p);
  report_missing(p, any_bits, p.report);
  return p;
}

}  // namespace vk

std::string time_domain_name(VkTimeDomainEXT domain) {
  switch (domain) {
    case VK_TIME_DOMAIN_DEVICE_EXT:
      return "device";
    case VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT:
      return "clock_monotonic";
    case VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT:
      return "clock_monotonic_raw";
    case VK_TIME_DOMAIN_QUERY_PERFORMANCE_COUNTER_EXT:
      return "query_performance_counter";
    default:
      return "domain_" + std::to_string(static_cast<int>(domain));
  }
}

Result<std::vector<VulkanDeviceReport>> enumerate_vulkan_devices() {
  auto inst = vk::make_instance(VK_API_VERSION_1_3, false, nullptr);
  if (!inst) return inst.error();
  std::vector<VulkanDeviceReport> out;
  if (!inst->instance) return out;
  const auto listed = vk::physical_devices(inst->instance.get());
  if (!listed) return listed.error();
  const auto& devices = *listed;
  const auto fns = vk::InstanceFns::load(inst->instance.get(), nullptr);
  if (!fns) return fns.error();
  for (uint32_t i = 0; i < devices.size(); ++i) {
    out.push_back(vk::probe_device(*fns, inst->api, devices[i], i).report);
  }
  return out;
}

}  // namespace latlab
