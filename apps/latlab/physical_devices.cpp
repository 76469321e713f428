// Physical identity of the APIs' devices (physical_devices.hpp). No GPU API
// here (list_physical_devices is in device_list.cpp): the unit tests compile
// this file.
#include "physical_devices.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <filesystem>
#include <numeric>

namespace latlab::cli {

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
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, dev, fn);
}

std::string pci_bus_id_of_drm_node(const std::string& node) {
  struct stat st {};
  if (node.empty() || ::stat(node.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) return "";
  const std::string link =
      fmt::format("/sys/dev/char/{}:{}/device", major(st.st_rdev), minor(st.st_rdev));
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

namespace {

nlohmann::json text_or_null(const std::string& s) {
  return s.empty() ? nlohmann::json() : nlohmann::json(s);
}

// The members of group `g`, and the UUID / PCI address any of them gives.
struct Group {
  std::vector<const PhysicalIdentity*> members;
  std::string uuid, pci;
};

std::vector<Group> groups_of(const std::vector<PhysicalIdentity>& ids) {
  std::vector<Group> groups;
  for (const PhysicalIdentity& id : ids) {
    if (id.group < 0) continue;
    if (groups.size() <= static_cast<size_t>(id.group))
      groups.resize(static_cast<size_t>(id.group) + 1);
    Group& g = groups[static_cast<size_t>(id.group)];
    g.members.push_back(&id);
    if (g.uuid.empty()) g.uuid = id.uuid;
    if (g.pci.empty()) g.pci = id.pci_bus_id;
  }
  return groups;
}

const char* matched_by(const Group& g) {
  if (g.members.size() < 2) return g.uuid.empty() && g.pci.empty() ? "unknown" : "single";
  return g.uuid.empty() ? "pci_bus_id" : (g.pci.empty() ? "uuid" : "uuid_or_pci_bus_id");
}

}  // namespace

nlohmann::json physical_devices_json(const std::vector<PhysicalIdentity>& ids) {
  nlohmann::json out = nlohmann::json::array();
  const std::vector<Group> groups = groups_of(ids);
  for (size_t i = 0; i < groups.size(); ++i) {
    nlohmann::json members = nlohmann::json::array();
    for (const PhysicalIdentity* m : groups[i].members)
      members.push_back({{"backend", m->backend}, {"index", m->index}, {"name", m->name}});
    out.push_back({{"id", i},
                   {"uuid", text_or_null(groups[i].uuid)},
                   {"pci_bus_id", text_or_null(groups[i].pci)},
                   {"matched_by", matched_by(groups[i])},
                   {"members", members}});
  }
  return out;
}

std::string physical_devices_text(const std::vector<PhysicalIdentity>& ids) {
  std::string t = "physical devices (the same GPU seen through several APIs):\n";
  const std::vector<Group> groups = groups_of(ids);
  for (size_t i = 0; i < groups.size(); ++i) {
    const Group& g = groups[i];
    std::string members;
    for (const PhysicalIdentity* m : g.members)
      members += fmt::format("{}{} {}", members.empty() ? "" : ", ", m->backend, m->index);
    std::string id = g.pci.empty() ? "PCI unknown" : "PCI " + g.pci;
    id += g.uuid.empty() ? ", UUID unknown" : ", UUID " + g.uuid;
    t += fmt::format("  physical device #{}: {} ({})\n", i, members, id);
  }
  return t;
}

const PhysicalIdentity* find_identity(const std::vector<PhysicalIdentity>& ids, Backend backend,
                                      int index) {
  for (const PhysicalIdentity& id : ids) {
    if (id.backend == backend_name(backend) && id.index == index) return &id;
  }
  return nullptr;
}

}  // namespace latlab::cli
