#include "latlab/bench/clock_studies.hpp"

#include <thread>

#include "latlab/bench/device_factory.hpp"
#include "latlab/bench/tick_mapper.hpp"
#include "latlab/calibrator.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/host_time.hpp"

namespace latlab {

std::vector<DeviceClockStudy> study_clocks_together(std::span<LatencyDevice* const> devices,
                                                    const ClockStudyDesc& desc) {
  std::vector<DeviceClockStudy> out(devices.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < devices.size(); ++i) {
    LatencyDevice* dev = devices[i];
    if (dev == nullptr) {
      out[i].failure = "the device could not be opened";
      continue;
    }
    if (dev->info().calibration_domain.empty()) {
      out[i].failure = "the device offers no calibration pairs";
      continue;
    }
    threads.emplace_back([dev, &desc, &s = out[i]] {
      ClockStudyDesc d = desc;
      d.host_domain = dev->info().calibration_domain;
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
  return out;
}

Result<ClockCrossCheckResult> cross_check_devices(LatencyDevice& a, LatencyDevice& b,
                                                  uint32_t trials) {
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

ListedClockStudies study_listed_clocks(Backend backend, const std::vector<ListedDevice>& listed,
                                       const ClockStudyDesc& desc, uint32_t cross_trials) {
  ListedClockStudies out;
  std::vector<LatencyDevice*> opened;
  std::vector<DeviceSectionHead*> heads;
  out.devices.reserve(listed.size());
  for (size_t i = 0; i < listed.size(); ++i) {
    ListedClockStudy& s = out.devices.emplace_back();
    s.head = device_section_head(i, backend, listed[i]);
    heads.push_back(&s.head);
    if (auto dev = open_listed_device(
            DeviceSelector{.backend = backend, .device = listed[i].selector}, false)) {
      s.device = std::move(dev.value());
    } else {
      s.failure = "cannot open: " + dev.error().message;
    }
    opened.push_back(s.device.get());
  }
  std::vector<DeviceClockStudy> studies = study_clocks_together(opened, desc);
  for (size_t i = 0; i < out.devices.size(); ++i) {
    out.devices[i].study = std::move(studies[i].study);
    if (out.devices[i].failure.empty()) out.devices[i].failure = studies[i].failure;
  }
  if (cross_trials > 0) {
    const std::vector<ListedClockStudy>& d = out.devices;
    if (d.size() < 2) {
      out.cross_check_skipped =
          "fewer than two devices of backend " + std::string(backend_name(backend));
    } else if (!d[0].study || !d[1].study) {
      out.cross_check_skipped = "the first two devices were not both studied";
    } else {
      out.cross_check = cross_check_devices(*d[0].device, *d[1].device, cross_trials);
    }
  }
  set_physical_identities(backend, heads);
  return out;
}

}  // namespace latlab
