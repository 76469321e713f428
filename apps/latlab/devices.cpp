// latlab devices [--json]: every Vulkan, CUDA and GL (EGL) device with what
// latlab can time on it and what is missing, with the reason; or why an API
// lists none.
#include <fmt/format.h>

#include <cstdio>

#include "command.hpp"
#include "latlab/bench/device_listing.hpp"
#include "report/reporters/reporters.hpp"

namespace latlab::cli {
namespace {

std::function<int()> setup(CLI::App& app) {
  auto* sub = app.add_subcommand("devices", "List GPU devices and what latlab can measure on them");
  auto json = std::make_shared<bool>(false);
  sub->add_flag("--json", *json, "Print JSON instead of a table");
  return [json]() -> int {
    const DeviceListing listing = list_devices();
    fmt::print("{}{}", *json ? devices_json(listing) : devices_text(listing), *json ? "\n" : "");
    // Exit 3 only when no API has a device; a machine with CUDA (or GL) and
    // no usable Vulkan driver still gets its listing (exit 0).
    if (listing.empty()) {
      std::fprintf(stderr, "latlab devices: no device on any backend; Vulkan: %s\n",
                   listing.vulkan_unavailable.c_str());
      return kExitMissingCapability;
    }
    return kExitOk;
  };
}

const RegisterCommand kRegister{{"devices", setup, 10}};

}  // namespace
}  // namespace latlab::cli
