// latlab clocks with several devices (clocks_devices.hpp).
#include "clocks_devices.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <thread>
#include <vector>

#include "command.hpp"
#include "device_list.hpp"
#include "latlab/bench/clock_cross_check.hpp"
#include "latlab/bench/device_factory.hpp"
#include "latlab/bench/tick_mapper.hpp"
#include "latlab/calibrator.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/host_time.hpp"
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

Result<ClockCrossCheckResult> cross_check(std::vector<Studied>& devs, uint32_t trials) {
  LatencyDevice& a = *devs[0].device;
  LatencyDevice& b = *devs[1].device;
  // Fresh models, refreshed every 100 ms and given 2 s of pairs before the
  // first trial: a model of one start-up pair has a drift bound so wide that
  // any skew "agrees" (the H200 pair gave 254 us per device 2 s after start
  // with the default 1 s refresh, against about 3 us once fitted).
  CalibratorDesc cal;
  cal.refresh_interval_ns = 100'000'000;
  auto ma = make_calibrated_mapper(a, cal);
  auto mb = make_calibrated_mapper(b, cal);
  if (Result<void> s = ma->start(); !s) return make_error("device a: " + s.error().message);
  if (Result<void> s = mb->start(); !s) {
    ma->stop();
    return make_error("device b: " + s.error().message);
  }
  host_sleep_until(host_now_ns() + 2'000'000'000);
  ClockCrossCheckDesc desc;
  desc.trials = trials;
  Result<ClockCrossCheckResult> r = run_clock_cross_check(a, *ma, b, *mb, desc);
  ma->stop();
  mb->stop();
  return r;
}

}  // namespace

int run_clocks_devices(const ClocksDevicesOptions& o, const ClockStudyDesc& desc,
                       const ClocksDocFn& doc, const ClocksPrintFn& print) {
  std::vector<ListedDevice> listed;
  if (const int rc = resolve_device_list("clocks", o.backend, o.device, listed); rc != kExitOk)
    return rc;
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
    if (s.device && s.device->info().calibration_domain.empty())
      s.failure = "the device offers no calibration pairs";
    devs.push_back(std::move(s));
  }
  if (!o.json) {
    fmt::print("latlab clocks: backend {}, {} devices ({}), studied at the same time, {} s\n",
               backend_name(o.backend), devs.size(), o.device, desc.seconds);
    std::fflush(stdout);
  }
  // Every study on its own thread over the same seconds: one host clock,
  // one window, each device its own model.
  std::vector<std::thread> threads;
  for (Studied& s : devs) {
    if (!s.failure.empty()) continue;
    threads.emplace_back([&s, &desc] {
      ClockStudyDesc d = desc;
      d.host_domain = s.device->info().calibration_domain;
      LatencyDevice* dev = s.device.get();
      Result<ClockStudyResult> r =
          run_clock_study([dev] { return dev->sample_calibration(); }, dev->info().ticks, d);
      if (r) {
        s.study = std::move(r.value());
      } else {
        s.failure = r.error().message;
      }
    });
  }
  for (std::thread& t : threads) t.join();

  std::optional<Result<ClockCrossCheckResult>> cc;
  std::string cc_skipped;
  if (o.cross_check) {
    if (devs.size() < 2 || !devs[0].study || !devs[1].study) {
      cc_skipped = devs.size() < 2
                       ? "fewer than two devices of backend " + std::string(backend_name(o.backend))
                       : "the first two devices were not both studied";
    } else {
      cc = cross_check(devs, o.cross_trials);
    }
  }

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
    for (const Studied& s : devs)
      std::fprintf(stderr, "latlab clocks: %s device %s: %s\n",
                   std::string(backend_name(o.backend)).c_str(), s.listed.selector.c_str(),
                   s.failure.c_str());
    return kExitMissingCapability;
  }
  top["per_device"] = std::move(sections);
  if (o.cross_check) {
    top["cross_check"] =
        cc ? cross_check_json(*cc, devs) : nlohmann::ordered_json{{"skipped", cc_skipped}};
  }
  if (o.json) {
    fmt::print("{}\n", top.dump(2));
  } else {
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
    if (o.cross_check) {
      if (!cc) {
        fmt::print("\ncross-check skipped: {}\n", cc_skipped);
      } else if (!*cc) {
        fmt::print("\ncross-check failed: {}\n", cc->error().message);
      } else {
        fmt::print("\ncross-check of devices {} and {}: {}\n", devs[0].listed.selector,
                   devs[1].listed.selector, (*cc)->verdict);
      }
    }
  }
  for (const Studied& s : devs) {
    if (!s.study)
      std::fprintf(stderr, "latlab clocks: %s device %s: %s\n",
                   std::string(backend_name(o.backend)).c_str(), s.listed.selector.c_str(),
                   s.failure.c_str());
  }
  if (cc && !*cc)
    std::fprintf(stderr, "latlab clocks: cross-check: %s\n", cc->error().message.c_str());
  return failed > 0 || (cc && !*cc) ? kExitRunFailed : kExitOk;
}

}  // namespace latlab::cli
