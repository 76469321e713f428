// What `latlab devices` prints from the listing (latlab/bench/device_listing.hpp):
// the JSON document ({"devices": [...], "physical_devices": [...]} with each
// API's reason where it lists none) and the table. An absent value (no
// renderer, no timestamps) is null in JSON, never 0 or "".
#pragma once

#include <string>

#include "latlab/bench/device_listing.hpp"

namespace latlab {

std::string devices_json(const DeviceListing& listing);
std::string devices_text(const DeviceListing& listing);

}  // namespace latlab
