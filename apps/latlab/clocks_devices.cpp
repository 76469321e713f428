// latlab clocks with several devices (clocks_devices.hpp).
#include "clocks_devices.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <vector>

#include "command.hpp"
#include "bench/device_listing.hpp"
#include "device_list.hpp"
#include "latlab/bench/clock_studies.hpp"
#include "latlab/bench/device_factory.hpp"

namespace latlab::cli {

namespace {

struct Studied {
  ListedDevice listed;
  std::unique_ptr<LatencyDevice> device;
  std::string failure;  // why there is no study
  std::optional<ClockStudyResult> study;
};

// The cross-check of the first two devices, or why it was skipped.
struct CrossCheck {
  std::optional<Result<ClockCrossCheckResult>> result;
  std::string skipped;
};

CrossCheck cross_check(const ClocksDevicesOptions& o, std::vector<Studied>& devs) {
  CrossCheck cc;
  if (!o.cross_check) return cc;
  if (devs.size() < 2 || !devs[0].study || !devs[1].study) {
    cc.skipped = devs.size() < 2
                     ? "fewer than two devices of backend " + std::string(backend_name(o.backend))
                     : "the first two devices were not both studied";
  } else {
    cc.result = cross_check_devices(*devs[0].device, *devs[1].device, o.cross_trials);
  }
  return cc;
}

// Opens every listed device; a device that does not open keeps why.
std::vector<Studied> open_devices(const ClocksDevicesOptions& o,
                                  const std::vector<ListedDevice>& listed) {
  std::vector<Studied> devs;
  for (const ListedDevice& d : listed) {
    Studied s{d, nullptr, "", std::nullopt};
    if (auto opened = open_listed_device(
            DeviceSelector{.backend = o.backend, .device = s.listed.selector}, false)) {
      s.device = std::move(opened.value());
    } else {
      s.failure = "cannot open: " + opened.error().message;
    }
    devs.push_back(std::move(s));
  }
  return devs;
}

void print_failures(const ClocksDevicesOptions& o, const std::vector<Studied>& devs) {
  for (const Studied& s : devs) {
    if (!s.study)
      std::fprintf(stderr, "latlab clocks: %s device %s: %s\n",
                   std::string(backend_name(o.backend)).c_str(), s.listed.selector.c_str(),
                   s.failure.c_str());
  }
}

}  // namespace

int run_clocks_devices(const ClocksDevicesOptions& o, const ClockStudyDesc& desc,
                       const ClocksSettings& settings) {
  std::vector<ListedDevice> listed;
  if (const int rc = resolve_device_list("clocks", o.backend, o.device, listed); rc != kExitOk)
    return rc;
  std::vector<Studied> devs = open_devices(o, listed);
  if (!o.json) {
    fmt::print("latlab clocks: backend {}, {} devices ({}), studied at the same time, {} s\n",
               backend_name(o.backend), devs.size(), o.device, desc.seconds);
    std::fflush(stdout);
  }
  std::vector<LatencyDevice*> opened;
  for (const Studied& s : devs) opened.push_back(s.failure.empty() ? s.device.get() : nullptr);
  std::vector<DeviceClockStudy> studies = study_clocks_together(opened, desc);
  for (size_t i = 0; i < devs.size(); ++i) {
    devs[i].study = std::move(studies[i].study);
    if (devs[i].failure.empty()) devs[i].failure = studies[i].failure;
  }
  const CrossCheck cc = cross_check(o, devs);

  const std::vector<PhysicalIdentity> ids = list_physical_devices(o.backend);
  std::vector<ClocksDeviceSection> sections;
  bool failed = false;
  for (size_t i = 0; i < devs.size(); ++i) {
    const Studied& s = devs[i];
    failed = failed || !s.study;
    sections.push_back({device_section_head(i, o.backend, s.listed, ids),
                        s.device ? &s.device->info() : nullptr, s.study ? &*s.study : nullptr,
                        s.failure});
  }
  const ClocksCrossCheck cross{cc.result ? &*cc.result : nullptr, cc.skipped};
  const ClocksCrossCheck* asked = o.cross_check ? &cross : nullptr;
  const std::optional<std::string> doc = clocks_devices_json(settings, sections, asked);
  if (!doc) {
    print_failures(o, devs);
    return kExitMissingCapability;
  }
  if (o.json) {
    fmt::print("{}\n", *doc);
  } else {
    fmt::print("{}", clocks_devices_text(sections, asked));
  }
  print_failures(o, devs);
  const bool cc_failed = cc.result && !*cc.result;
  if (cc_failed)
    std::fprintf(stderr, "latlab clocks: cross-check: %s\n", cc.result->error().message.c_str());
  return failed || cc_failed ? kExitRunFailed : kExitOk;
}

}  // namespace latlab::cli
