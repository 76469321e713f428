// latlab devices [--json]: every Vulkan device with what latlab can time on
// it (tick period, valid bits per queue family, calibrateable time domains)
// and what is missing, with the reason.
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "latlab/vulkan.hpp"

namespace latlab::cli {
namespace {

nlohmann::json to_json(const VulkanDeviceReport& d) {
  nlohmann::json families = nlohmann::json::array();
  for (const auto& q : d.queue_families) {
    families.push_back({{"index", q.index},
                        {"flags", q.flags_text},
                        {"queue_count", q.queue_count},
                        {"timestamp_valid_bits", q.timestamp_valid_bits}});
  }
  nlohmann::json missing = nlohmann::json::array();
  for (const auto& m : d.missing) missing.push_back({{"name", m.name}, {"reason", m.reason}});
  return {{"index", d.index},
          {"backend", "vulkan"},
          {"name", d.name},
          {"type", d.type},
          {"vendor_id", d.vendor_id},
          {"device_id", d.device_id},
          {"driver_name", d.driver_name},
          {"driver_info", d.driver_info},
          {"driver_version", d.driver_version},
          {"api_version", d.api_version_text},
          {"timestamp_period_ns", d.timestamp_period_ns},
          {"timestamp_compute_and_graphics", d.timestamp_compute_and_graphics},
          {"queue_families", families},
          {"host_query_reset", d.host_query_reset},
          {"calibrated_timestamps", d.calibrated_timestamps},
          {"time_domains", d.time_domains},
          {"missing", missing}};
}

void print_table(const std::vector<VulkanDeviceReport>& devices) {
  for (const auto& d : devices) {
    fmt::print("[{}] {} ({}, Vulkan {})\n", d.index, d.name, d.type, d.api_version_text);
    if (!d.driver_name.empty()) fmt::print("    driver            {} {}\n", d.driver_name, d.driver_info);
    fmt::print("    timestamp period  {} ns/tick{}\n", d.timestamp_period_ns,
               d.timestamp_compute_and_graphics ? "" : " (not on every graphics/compute queue)");
    fmt::print("    queue families    ");
    for (size_t i = 0; i < d.queue_families.size(); ++i) {
      const auto& q = d.queue_families[i];
      fmt::print("{}#{} {} x{}: {} valid bits\n", i == 0 ? "" : "                      ", q.index, q.flags_text,
                 q.queue_count, q.timestamp_valid_bits);
    }
    fmt::print("    host query reset  {}\n", d.host_query_reset ? "yes" : "no");
    std::string domains;
    for (const auto& t : d.time_domains) domains += (domains.empty() ? "" : ", ") + t;
    fmt::print("    time domains      {}\n", d.calibrated_timestamps ? (domains.empty() ? "(none)" : domains)
                                                                      : "(no VK_EXT_calibrated_timestamps)");
    if (d.missing.empty()) {
      fmt::print("    missing           nothing\n");
    } else {
      for (size_t i = 0; i < d.missing.size(); ++i) {
        fmt::print("    {}{}: {}\n", i == 0 ? "missing           " : "                  ", d.missing[i].name,
                   d.missing[i].reason);
      }
    }
  }
}

std::function<int()> setup(CLI::App& app) {
  auto* sub = app.add_subcommand("devices", "List GPU devices and what latlab can measure on them");
  auto json = std::make_shared<bool>(false);
  sub->add_flag("--json", *json, "Print JSON instead of a table");
  return [json]() -> int {
    auto devices = enumerate_vulkan_devices();
    if (!devices) {
      std::fprintf(stderr, "latlab devices: %s\n", devices.error().message.c_str());
      return kExitMissingCapability;
    }
    if (devices->empty()) {
      std::fprintf(stderr,
                   "latlab devices: no Vulkan device found (no driver, or the driver sees no device). "
                   "For a software device install Mesa's lavapipe (apt install mesa-vulkan-drivers)\n");
      return kExitMissingCapability;
    }
    if (*json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& d : *devices) out.push_back(to_json(d));
      fmt::print("{}\n", nlohmann::json{{"devices", out}}.dump(2));
    } else {
      print_table(*devices);
    }
    return kExitOk;
  };
}

const RegisterCommand kRegister{{"devices", setup, 10}};

}  // namespace
}  // namespace latlab::cli
