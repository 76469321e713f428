// `physical_devices` of `latlab devices` (physical_devices_json.hpp).
#include "report/physical_devices_json.hpp"

#include <fmt/format.h>

namespace latlab {

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

}  // namespace latlab
