// Physical identity of the APIs' devices (physical_devices.hpp). No GPU API
// here: list_physical_devices (device_listing.hpp) asks the backends.
#include "latlab/bench/physical_devices.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <filesystem>
#include <numeric>

namespace latlab {

std::string normalize_pci_bus_id(const std::string& text) {
  // Hex digits, ':' and '.' only (sscanf's %x would also take "0x" and signs).
  if (text.empty() || text.find_first_not_of("0123456789abcdefABCDEF:.") != std::string::npos)
    return "";
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  int used = 0;
  if (std::sscanf(text.c_str(), "%x:%x:%x.%x%n", &domain, &bus, &dev, &fn, &used) != 4 ||
      static_cast<size_t>(used) != text.size())
    return "";
  if (domain > 0xffff || bus > 0xff || dev > 0x1f || fn > 7) return "";
  char out[16];
  std::snprintf(out, sizeof(out), "%04x:%02x:%02x.%x", domain, bus, dev, fn);
  return out;
}

std::string pci_bus_id_of_drm_node(const std::string& node) {
  struct stat st {};
  if (node.empty() || ::stat(node.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) return "";
  const std::string link = "/sys/dev/char/" + std::to_string(major(st.st_rdev)) + ":" +
                           std::to_string(minor(st.st_rdev)) + "/device";
  std::error_code ec;
  const std::filesystem::path target = std::filesystem::canonical(link, ec);
  if (ec) return "";
  return normalize_pci_bus_id(target.filename().string());
}

void assign_physical_groups(std::vector<PhysicalIdentity>& ids) {
  std::vector<size_t> parent(ids.size());
  std::iota(parent.begin(), parent.end(), size_t{0});
  auto root = [&](size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (size_t i = 0; i < ids.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      const bool same_uuid = !ids[i].uuid.empty() && ids[i].uuid == ids[j].uuid;
      const bool same_pci = !ids[i].pci_bus_id.empty() && ids[i].pci_bus_id == ids[j].pci_bus_id;
      if (same_uuid || same_pci) parent[root(i)] = root(j);
    }
  }
  std::vector<int> group_of_root(ids.size(), -1);
  int next = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    int& g = group_of_root[root(i)];
    if (g < 0) g = next++;
    ids[i].group = g;
  }
}

const PhysicalIdentity* find_identity(const std::vector<PhysicalIdentity>& ids, Backend backend,
                                      int index) {
  for (const PhysicalIdentity& id : ids) {
    if (id.backend == backend_name(backend) && id.index == index) return &id;
  }
  return nullptr;
}

}  // namespace latlab
