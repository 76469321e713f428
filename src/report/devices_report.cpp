#include "report/devices_report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "report/json_parts.hpp"
#include "report/physical_devices_json.hpp"

namespace latlab {
namespace {

nlohmann::json text_or_null(const std::string& s) {
  return s.empty() ? nlohmann::json() : nlohmann::json(s);
}

nlohmann::json missing_json(const std::vector<MissingCapability>& missing) {
  return nlohmann::json(capabilities_to_json(missing));
}

nlohmann::json to_json(const VulkanDeviceReport& d) {
  nlohmann::json families = nlohmann::json::array();
  for (const auto& q : d.queue_families) {
    families.push_back({{"index", q.index},
                        {"flags", q.flags_text},
                        {"queue_count", q.queue_count},
                        {"timestamp_valid_bits", q.timestamp_valid_bits}});
  }
  return {{"index", d.index},
          {"backend", std::string(backend_name(Backend::vulkan))},
          {"name", d.name},
          {"type", d.type},
          {"vendor_id", d.vendor_id},
          {"device_id", d.device_id},
          {"driver_name", d.driver_name},
          {"driver_info", d.driver_info},
          {"driver_version", d.driver_version},
          {"uuid", text_or_null(d.device_uuid)},
          {"pci_bus_id", text_or_null(d.pci_bus_id)},
          {"api_version", d.api_version_text},
          {"timestamp_period_ns", d.timestamp_period_ns},
          {"timestamp_compute_and_graphics", d.timestamp_compute_and_graphics},
          {"queue_families", families},
          {"host_query_reset", d.host_query_reset},
          {"calibrated_timestamps", d.calibrated_timestamps},
          {"time_domains", d.time_domains},
          {"missing", missing_json(d.missing)}};
}

nlohmann::json to_json(const CudaDeviceReport& d) {
  return {{"index", d.index},
          {"backend", std::string(backend_name(Backend::cuda))},
          {"name", d.name},
          {"pci_bus_id", d.pci_bus_id},
          {"uuid", text_or_null(d.uuid)},
          {"compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor)},
          {"sm_count", d.sm_count},
          {"total_memory_bytes", d.total_memory_bytes},
          {"driver_version", format_cuda_version(d.driver_version)},
          {"runtime_version", format_cuda_version(d.runtime_version)},
          {"timestamp_period_ns", 1},
          {"timestamp_source", "%globaltimer"},
          {"can_map_host_memory", d.can_map_host_memory},
          {"missing", missing_json(d.missing)}};
}

nlohmann::json to_json(const GlDeviceReport& d) {
  const bool timestamps = d.timestamp_bits > 0;
  return {{"index", d.index},
          {"backend", std::string(backend_name(Backend::gl))},
          {"name", text_or_null(d.renderer)},
          {"platform", d.platform},
          {"egl_vendor", text_or_null(d.egl_vendor)},
          {"egl_version", text_or_null(d.egl_version)},
          {"drm_node", text_or_null(d.drm_node)},
          {"uuid", text_or_null(d.device_uuid)},
          {"pci_bus_id", text_or_null(pci_bus_id_of_drm_node(d.drm_node))},
          {"software", d.software},
          {"api", text_or_null(d.api)},
          {"vendor", text_or_null(d.vendor)},
          {"version", text_or_null(d.version)},
          {"glsl_version", text_or_null(d.glsl_version)},
          {"timer_query", d.timer_query},
          {"timer", text_or_null(d.timer)},
          {"timestamp_period_ns", timestamps ? nlohmann::json(1) : nlohmann::json()},
          {"timestamp_bits", timestamps ? nlohmann::json(d.timestamp_bits) : nlohmann::json()},
          {"disjoint_signal", d.disjoint_signal},
          {"compute_shaders", d.compute_shaders},
          {"khr_debug", d.khr_debug},
          {"missing", missing_json(d.missing)}};
}

}  // namespace

std::string devices_json(const DeviceListing& listing) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : listing.vulkan) devices.push_back(to_json(d));
  for (const auto& d : listing.cuda) devices.push_back(to_json(d));
  for (const auto& d : listing.gl) devices.push_back(to_json(d));
  for (size_t i = 0; i < devices.size() && i < listing.physical.size(); ++i) {
    devices[i]["physical_device"] = listing.physical[i].group;
  }
  nlohmann::json doc{{"devices", devices},
                     {"physical_devices", physical_devices_json(listing.physical)}};
  if (!listing.cuda_unavailable.empty()) doc["cuda_unavailable"] = listing.cuda_unavailable;
  if (!listing.vulkan_unavailable.empty()) doc["vulkan_unavailable"] = listing.vulkan_unavailable;
  if (!listing.gl_unavailable.empty()) doc["gl_unavailable"] = listing.gl_unavailable;
  return doc.dump(2);
}

}  // namespace latlab
