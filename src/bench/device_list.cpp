// Several devices for one command (latlab/bench/device_list.hpp).
#include "latlab/bench/device_list.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "latlab/bench/device_listing.hpp"

namespace latlab {

bool is_device_list(const std::string& text) {
  return text == "all" || text.find(',') != std::string::npos;
}

Result<std::vector<std::string>> parse_device_list(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) {
      return make_error("--device '" + text +
                        "' has an empty item: give 'all' or indices / name substrings separated "
                        "by commas (e.g. 0,1)");
    }
    if (std::find(items.begin(), items.end(), item) != items.end())
      return make_error("--device '" + text + "' names '" + item + "' twice");
    items.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (items.size() > 1 && std::find(items.begin(), items.end(), "all") != items.end())
    return make_error("--device '" + text + "': 'all' cannot be combined with other devices");
  return items;
}

namespace {

bool is_index(const std::string& s, size_t& out) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && p == s.data() + s.size();
}

}  // namespace

Result<std::vector<ListedDevice>> expand_device_list(Backend backend_id,
                                                     const std::vector<std::string>& items,
                                                     bool& no_device) {
  no_device = false;
  const std::string backend(backend_name(backend_id));
  Result<std::vector<std::string>> names = device_names(backend_id);
  if (!names || names->empty()) {
    no_device = true;
    return make_error("no " + backend + " device" +
                      (names ? std::string(" is listed") : ": " + names.error().message));
  }
  std::vector<ListedDevice> out;
  for (const std::string& item : items) {
    if (item == "all") {
      for (size_t i = 0; i < names->size(); ++i) out.push_back({std::to_string(i), (*names)[i]});
      continue;
    }
    size_t index = 0;
    if (!is_index(item, index)) {
      // Case-insensitive, as --device is for one device.
      auto lower = [](std::string t) {
        for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return t;
      };
      const std::string want = lower(item);
      const auto it = std::find_if(names->begin(), names->end(), [&](const std::string& n) {
        return lower(n).find(want) != std::string::npos;
      });
      if (it == names->end()) return make_error("no " + backend + " device matches '" + item + "'");
      index = static_cast<size_t>(it - names->begin());
    }
    if (index >= names->size()) {
      return make_error("no " + backend + " device " + item + " (there are " +
                        std::to_string(names->size()) + ")");
    }
    const std::string selector = std::to_string(index);
    if (std::any_of(out.begin(), out.end(),
                    [&](const ListedDevice& d) { return d.selector == selector; }))
      return make_error("--device names " + backend + " device " + selector + " twice");
    out.push_back({selector, (*names)[index]});
  }
  return out;
}

Result<std::vector<ListedDevice>> resolve_device_list(Backend backend, const std::string& text,
                                                      bool& no_device) {
  no_device = false;
  Result<std::vector<std::string>> items = parse_device_list(text);
  if (!items) return items.error();
  return expand_device_list(backend, *items, no_device);
}

DeviceSectionHead device_section_head(size_t section, Backend backend, const ListedDevice& device) {
  return {static_cast<uint32_t>(section),
          std::string(backend_name(backend)),
          device.selector,
          device.name,
          std::nullopt,
          "",
          ""};
}

void set_physical_identities(Backend backend, std::span<DeviceSectionHead* const> heads) {
  const std::vector<PhysicalIdentity> ids = list_physical_devices(backend);
  for (DeviceSectionHead* head : heads) {
    const PhysicalIdentity* id = find_identity(ids, backend, std::stoi(head->selector));
    if (id == nullptr) continue;
    head->physical_device = id->group;
    head->uuid = id->uuid;
    head->pci_bus_id = id->pci_bus_id;
  }
}

}  // namespace latlab
