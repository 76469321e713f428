// `--device all` and `--device A,B,...` of `clocks`, `run` and `profile`:
// several devices of one backend, each named as --device names one (index or
// name substring), and each one's physical identity for its result section.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "latlab/bench/backend.hpp"
#include "latlab/bench/run_result.hpp"
#include "latlab/result.hpp"

namespace latlab {

// Whether --device names several devices: "all" or a comma-separated list.
bool is_device_list(const std::string& text);

// The items of a list ("all" stays one item). Error for an empty item
// ("0,,1", "0,") or one given twice.
Result<std::vector<std::string>> parse_device_list(const std::string& text);

// One device of the list, resolved.
struct ListedDevice {
  std::string selector;  // what opens it: its index, "0", "1", ...
  std::string name;      // as the backend lists it; "" when it cannot be listed
};

// The devices of `backend` the items name, in the order given; "all" gives
// every device the backend lists (the sim backend: devices 0 and 1). A name
// substring picks the first device whose name contains it. Error when the
// backend lists no device (`no_device` set) or an item matches none.
Result<std::vector<ListedDevice>> expand_device_list(Backend backend,
                                                     const std::vector<std::string>& items,
                                                     bool& no_device);

// parse_device_list, then expand_device_list (`no_device` as there).
Result<std::vector<ListedDevice>> resolve_device_list(Backend backend, const std::string& text,
                                                      bool& no_device);

// The head of device `section`'s section of a several-device result.
DeviceSectionHead device_section_head(size_t section, Backend backend, const ListedDevice& device);

// Each head's physical identity (group, UUID, PCI bus id), the devices
// listed once; a device that is no physical GPU (the sim backend's) keeps
// them unknown.
void set_physical_identities(Backend backend, std::span<DeviceSectionHead* const> heads);

}  // namespace latlab
