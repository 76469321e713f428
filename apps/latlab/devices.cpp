// latlab devices [--json]: every Vulkan device with what latlab can time on
// it (tick period, valid bits per queue family, calibrateable time domains)
// and what is missing, with the reason; then every CUDA device where the CUDA
// backend is built (or why CUDA is unavailable); then every GL (EGL) device
// (devices_gl.cpp).
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "devices_gl.hpp"
#include "bench/physical_devices.hpp"
#include "latlab/vulkan.hpp"
#include "report/json_parts.hpp"
#include "report/physical_devices_json.hpp"
#if LATLAB_HAVE_CUDA
#include "latlab/cuda.hpp"
#endif

namespace latlab::cli {
namespace {

void print_missing(const std::vector<MissingCapability>& missing) {
  if (missing.empty()) {
    fmt::print("    missing           nothing\n");
    return;
  }
  for (size_t i = 0; i < missing.size(); ++i) {
    fmt::print("    {}{}: {}\n", i == 0 ? "missing           " : "                  ",
               missing[i].name, missing[i].reason);
  }
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
          {"uuid", d.device_uuid.empty() ? nlohmann::json() : nlohmann::json(d.device_uuid)},
          {"pci_bus_id", d.pci_bus_id.empty() ? nlohmann::json() : nlohmann::json(d.pci_bus_id)},
          {"api_version", d.api_version_text},
          {"timestamp_period_ns", d.timestamp_period_ns},
          {"timestamp_compute_and_graphics", d.timestamp_compute_and_graphics},
          {"queue_families", families},
          {"host_query_reset", d.host_query_reset},
          {"calibrated_timestamps", d.calibrated_timestamps},
          {"time_domains", d.time_domains},
          {"missing", nlohmann::json(capabilities_to_json(d.missing))}};
}

void print_table(const std::vector<VulkanDeviceReport>& devices) {
  for (const auto& d : devices) {
    fmt::print("[{}] {} ({}, Vulkan {})\n", d.index, d.name, d.type, d.api_version_text);
    if (!d.driver_name.empty())
      fmt::print("    driver            {} {}\n", d.driver_name, d.driver_info);
    fmt::print("    timestamp period  {} ns/tick{}\n", d.timestamp_period_ns,
               d.timestamp_compute_and_graphics ? "" : " (not on every graphics/compute queue)");
    fmt::print("    queue families    ");
    for (size_t i = 0; i < d.queue_families.size(); ++i) {
      const auto& q = d.queue_families[i];
      fmt::print("{}#{} {} x{}: {} valid bits\n", i == 0 ? "" : "                      ", q.index,
                 q.flags_text, q.queue_count, q.timestamp_valid_bits);
    }
    fmt::print("    host query reset  {}\n", d.host_query_reset ? "yes" : "no");
    std::string domains;
    for (const auto& t : d.time_domains) domains += (domains.empty() ? "" : ", ") + t;
    fmt::print("    time domains      {}\n", d.calibrated_timestamps
                                                 ? (domains.empty() ? "(none)" : domains)
                                                 : "(no VK_EXT_calibrated_timestamps)");
    print_missing(d.missing);
  }
}

// CUDA devices, or why there are none: {"devices": [...]} / {"unavailable": reason}.
struct CudaListing {
  nlohmann::json devices = nlohmann::json::array();
  std::string unavailable;  // empty when CUDA could be asked
#if LATLAB_HAVE_CUDA
  std::vector<CudaDeviceReport> reports;  // what the table prints
#endif
};

CudaListing list_cuda() {
  CudaListing out;
#if LATLAB_HAVE_CUDA
  auto devices = enumerate_cuda_devices();
  if (!devices) {
    out.unavailable = devices.error().message;
    return out;
  }
  out.reports = *devices;
  for (const auto& d : *devices) {
    out.devices.push_back({{"index", d.index},
                           {"backend", std::string(backend_name(Backend::cuda))},
                           {"name", d.name},
                           {"pci_bus_id", d.pci_bus_id},
                           {"uuid", d.uuid.empty() ? nlohmann::json() : nlohmann::json(d.uuid)},
                           {"compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor)},
                           {"sm_count", d.sm_count},
                           {"total_memory_bytes", d.total_memory_bytes},
                           {"driver_version", format_cuda_version(d.driver_version)},
                           {"runtime_version", format_cuda_version(d.runtime_version)},
                           {"timestamp_period_ns", 1},
                           {"timestamp_source", "%globaltimer"},
                           {"can_map_host_memory", d.can_map_host_memory},
                           {"missing", nlohmann::json(capabilities_to_json(d.missing))}});
  }
#else
  out.unavailable =
      "the CUDA backend is not built (configure with nvcc present or -DLATLAB_CUDA=ON)";
#endif
  return out;
}

#if LATLAB_HAVE_CUDA
void print_cuda_table(const CudaListing& cuda) {
  if (!cuda.unavailable.empty()) {
    fmt::print("CUDA: unavailable: {}\n", cuda.unavailable);
    return;
  }
  for (const auto& d : cuda.reports) {
    fmt::print("[cuda {}] {} (compute capability {}.{}, {} SMs, {:.1f} GiB)\n", d.index, d.name,
               d.cc_major, d.cc_minor, d.sm_count,
               static_cast<double>(d.total_memory_bytes) / (1024.0 * 1024.0 * 1024.0));
    fmt::print("    driver            CUDA {} (runtime {})\n",
               format_cuda_version(d.driver_version), format_cuda_version(d.runtime_version));
    fmt::print(
        "    timestamps        %globaltimer, 1 ns/tick, 64 bits; host mapping by bracketed "
        "reads\n");
    print_missing(d.missing);
  }
}
#endif

// Sets "physical_device" of every entry (the same GPU through several APIs
// shares one id) and returns the identities.
std::vector<PhysicalIdentity> group_entries(nlohmann::json& entries) {
  std::vector<PhysicalIdentity> ids;
  auto text = [](const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  for (const nlohmann::json& e : entries) {
    ids.push_back({text(e, "backend"), e.value("index", 0), text(e, "name"), text(e, "uuid"),
                   normalize_pci_bus_id(text(e, "pci_bus_id"))});
  }
  assign_physical_groups(ids);
  for (size_t i = 0; i < ids.size(); ++i) entries[i]["physical_device"] = ids[i].group;
  return ids;
}

std::function<int()> setup(CLI::App& app) {
  auto* sub = app.add_subcommand("devices", "List GPU devices and what latlab can measure on them");
  auto json = std::make_shared<bool>(false);
  sub->add_flag("--json", *json, "Print JSON instead of a table");
  return [json]() -> int {
    // One API that fails outright (a broken driver file: the loader fails
    // vkCreateInstance) is that API's `unavailable` entry; the others are
    // still listed.
    std::vector<VulkanDeviceReport> vulkan;
    std::string vulkan_unavailable;
    if (auto enumerated = enumerate_vulkan_devices(); enumerated) {
      vulkan = std::move(enumerated.value());
    } else {
      vulkan_unavailable = enumerated.error().message;
    }
    const CudaListing cuda = list_cuda();
    const GlListing gl = list_gl();
    if (vulkan.empty() && vulkan_unavailable.empty()) {
      vulkan_unavailable =
          "no Vulkan device found (no driver, or the driver sees no device). "
          "For a software device install Mesa's lavapipe (apt install mesa-vulkan-drivers)";
    }
    nlohmann::json out = nlohmann::json::array();
    for (const auto& d : vulkan) out.push_back(to_json(d));
    for (const auto& d : cuda.devices) out.push_back(d);
    for (const auto& d : gl.devices) out.push_back(d);
    const std::vector<PhysicalIdentity> ids = group_entries(out);
    if (*json) {
      nlohmann::json doc{{"devices", out}, {"physical_devices", physical_devices_json(ids)}};
      if (!cuda.unavailable.empty()) doc["cuda_unavailable"] = cuda.unavailable;
      if (!vulkan_unavailable.empty()) doc["vulkan_unavailable"] = vulkan_unavailable;
      if (!gl.unavailable.empty()) doc["gl_unavailable"] = gl.unavailable;
      fmt::print("{}\n", doc.dump(2));
    } else {
      if (!vulkan_unavailable.empty()) fmt::print("Vulkan: unavailable: {}\n", vulkan_unavailable);
      print_table(vulkan);
#if LATLAB_HAVE_CUDA
      print_cuda_table(cuda);
#endif
      fmt::print("{}", gl.table);
      fmt::print("{}", physical_devices_text(ids));
    }
    // Exit 3 only when no backend has a device; a machine with CUDA (or
    // GL) and no usable Vulkan driver still gets its listing (exit 0).
    if (out.empty()) {
      std::fprintf(stderr, "latlab devices: no device on any backend; Vulkan: %s\n",
                   vulkan_unavailable.c_str());
      return kExitMissingCapability;
    }
    return kExitOk;
  };
}

const RegisterCommand kRegister{{"devices", setup, 10}};

}  // namespace
}  // namespace latlab::cli
