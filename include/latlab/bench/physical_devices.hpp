// Which CUDA, Vulkan and GL (EGL) devices are the same GPU: each API's device
// entry with its physical identity (UUID, PCI address) and a group id shared
// by the entries of one physical device. Used by `latlab devices` and by the
// per-device sections of `clocks`/`run --device all`; the listing's JSON and
// text are report/physical_devices_json.hpp.
#pragma once

#include <string>
#include <vector>

#include "latlab/bench/backend.hpp"

namespace latlab {

// One API's device as the listing sees it.
struct PhysicalIdentity {
  std::string backend;  // "vulkan", "cuda", "gl"
  int index = 0;        // the API's device index (what --device takes)
  std::string name;
  std::string uuid;        // 8-4-4-4-12 lowercase hex; "" when the API does not say
  std::string pci_bus_id;  // "0000:18:00.0" (normalised); "" when the API does not say
  int group = -1;          // physical device id (assign_physical_groups)
};

// "0000:18:00.0" from any of the spellings the APIs use ("00000000:18:00.0",
// upper case hex); "" when `text` is not a PCI address.
std::string normalize_pci_bus_id(const std::string& text);

// The PCI address of the device behind a DRM node (/dev/dri/renderD128),
// from sysfs; "" when it has none (a software device) or it cannot be read.
std::string pci_bus_id_of_drm_node(const std::string& node);

// Sets `group` of every entry: entries with the same UUID or the same PCI
// address share one; ids count from 0 in the order of first appearance.
// An entry without UUID and PCI address is a physical device of its own
// (unknown: it may still be the same GPU as another).
void assign_physical_groups(std::vector<PhysicalIdentity>& ids);

// Every device of every backend this build has, grouped: list_physical_devices()
// in device_listing.hpp.

// The entry of `backend` device `index` in `ids`, or null.
const PhysicalIdentity* find_identity(const std::vector<PhysicalIdentity>& ids, Backend backend,
                                      int index);

}  // namespace latlab
