// The physical devices of `latlab devices`: the groups of
// latlab/bench/physical_devices.hpp as JSON and as text lines.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "latlab/bench/physical_devices.hpp"

namespace latlab {

// `physical_devices` of `latlab devices --json`: one object per group with
// its UUID, PCI address, what they were matched by and the member entries.
nlohmann::json physical_devices_json(const std::vector<PhysicalIdentity>& ids);

// The text lines of the same, one per physical device.
std::string physical_devices_text(const std::vector<PhysicalIdentity>& ids);

}  // namespace latlab
