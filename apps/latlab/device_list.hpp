// `--device all` and `--device A,B,...` of `clocks` and `run`: several
// devices of one backend, each named as --device names one (index or name
// substring).
#pragma once

#include <string>
#include <vector>

#include "bench/physical_devices.hpp"
#include "latlab/bench/run_result.hpp"
#include "latlab/result.hpp"

namespace latlab::cli {

// Whether --device names several devices: "all" or a comma-separated list.
bool is_device_list(const std::string& text);

// The items of a list ("all" stays one item). Error for an empty item
// ("0,,1", "0,") or one given twice; the caller exits 2.
Result<std::vector<std::string>> parse_device_list(const std::string& text);

// One device of the list, resolved.
struct ListedDevice {
  std::string selector;  // what opens it: its index, "0", "1", ...
  std::string name;      // as the backend lists it; "" when it cannot be listed
};

// The devices of `backend` the items name, in the order given; "all" gives
// every device the backend lists (the sim backend: devices 0 and 1). A name
// substring picks the first device whose name contains it. Error when the
// backend lists no device (`no_device` set: exit 3) or an item matches none
// (exit 2).
Result<std::vector<ListedDevice>> expand_device_list(Backend backend,
                                                     const std::vector<std::string>& items,
                                                     bool& no_device);

// parse_device_list then expand_device_list into `out`; on failure prints
// "latlab <command>: why" on stderr and returns the exit code (2 for a bad
// list, 3 when the backend lists no device), else 0.
int resolve_device_list(const char* command, Backend backend, const std::string& text,
                        std::vector<ListedDevice>& out);

// The head of one device's section of a several-device result (`per_device`
// of `clocks`): which device, and its physical identity where known.
DeviceSectionHead device_section_head(size_t section, Backend backend, const ListedDevice& device,
                                      const std::vector<PhysicalIdentity>& ids);

}  // namespace latlab::cli
