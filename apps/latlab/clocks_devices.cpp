// latlab clocks with several devices (clocks_devices.hpp).
#include "clocks_devices.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <vector>

#include "command.hpp"
#include "device_list.hpp"
#include "latlab/bench/clock_studies.hpp"
#include "latlab/bench/device_factory.hpp"
#include "report/result_json.hpp"

namespace latlab::cli {

namespace {

struct Studied {
  ListedDevice listed;
  std::unique_ptr<LatencyDevice> device;
  std::string failure;  // why there is no study
  std::optional<ClockStudyResult> study;
};

nlohmann::ordered_json cross_check_json(const Result<ClockCrossCheckResult>& r,
                                        const std::vector<Studied>& devs) {
  nlohmann::ordered_json j = {{"device_a", devs[0].listed.selector},
                              {"device_b", devs[1].listed.selector}};
  if (!r) {
    j["error"] = r.error().message;
    return j;
  }
  j["error"] = nullptr;
  j["trials"] = r->trials;
  j["trials_mapped"] = r->trials_mapped;
  j["start_skew_us"] = distribution_to_json(r->start_skew_us);
  j["submit_skew_us"] = distribution_to_json(r->submit_skew_us);
  j["launch_a_us"] = distribution_to_json(r->launch_a_us);
  j["launch_b_us"] = distribution_to_json(r->launch_b_us);
  j["bound_a_ns"] = r->bound_a_ns;
  j["bound_b_ns"] = r->bound_b_ns;
  j["agree"] = r->agree;
  j["verdict"] = r->verdict;
  return j;
}

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
    if (o.backend == Backend::sim) {
      s.device = open_sim_list_device(std::stoul(s.listed.selector), false);
    } else if (auto opened = open_latency_device(
                   DeviceSelector{.backend = o.backend, .device = s.listed.selector})) {
      s.device = std::move(opened.value());
    } else {
      s.failure = "cannot open: " + opened.error().message;
    }
    devs.push_back(std::move(s));
  }
  return devs;
}

void print_console(const ClocksDevicesOptions& o, const std::vector<Studied>& devs,
                   const std::vector<PhysicalIdentity>& ids, const CrossCheck& cc,
                   const ClocksPrintFn& print) {
  for (size_t i = 0; i < devs.size(); ++i) {
    const Studied& s = devs[i];
    const PhysicalIdentity* id = find_identity(ids, o.backend, std::stoi(s.listed.selector));
    fmt::print("\n== device section {}: {} {} ({}){}\n", i, backend_name(o.backend),
               s.listed.selector, s.listed.name,
               id != nullptr ? fmt::format(", physical device #{}", id->group) : "");
    if (s.study) {
      print(s.device->info(), *s.study);
    } else {
      fmt::print("failed: {}\n", s.failure);
    }
  }
  if (!o.cross_check) return;
  if (!cc.result) {
    fmt::print("\ncross-check skipped: {}\n", cc.skipped);
  } else if (!*cc.result) {
    fmt::print("\ncross-check failed: {}\n", cc.result->error().message);
  } else {
    fmt::print("\ncross-check of devices {} and {}: {}\n", devs[0].listed.selector,
               devs[1].listed.selector, (*cc.result)->verdict);
  }
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
                       const ClocksDocFn& doc, const ClocksPrintFn& print) {
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

  const std::vector<PhysicalIdentity> ids =
      o.backend == Backend::sim ? std::vector<PhysicalIdentity>{} : list_physical_devices();
  nlohmann::ordered_json sections = nlohmann::ordered_json::array();
  nlohmann::ordered_json top;
  size_t failed = 0;
  for (size_t i = 0; i < devs.size(); ++i) {
    const Studied& s = devs[i];
    nlohmann::ordered_json result;
    if (s.study) result = doc(s.device->info(), *s.study);
    if (top.is_null() && s.study) top = result;
    if (!s.study) ++failed;
    sections.push_back(device_section_json(i, o.backend, s.listed, ids, s.study ? "ok" : "failed",
                                           s.failure, std::move(result)));
  }
  if (top.is_null()) {
    print_failures(o, devs);
    return kExitMissingCapability;
  }
  top["per_device"] = std::move(sections);
  if (o.cross_check) {
    top["cross_check"] = cc.result ? cross_check_json(*cc.result, devs)
                                   : nlohmann::ordered_json{{"skipped", cc.skipped}};
  }
  if (o.json) {
    fmt::print("{}\n", top.dump(2));
  } else {
    print_console(o, devs, ids, cc, print);
  }
  print_failures(o, devs);
  const bool cc_failed = cc.result && !*cc.result;
  if (cc_failed)
    std::fprintf(stderr, "latlab clocks: cross-check: %s\n", cc.result->error().message.c_str());
  return failed > 0 || cc_failed ? kExitRunFailed : kExitOk;
}

}  // namespace latlab::cli
