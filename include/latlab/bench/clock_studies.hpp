// Several devices' clocks studied over the same seconds (latlab clocks
// --device all), and two of them cross-checked with models refitted for the
// purpose: what the command line calls, with the devices it opened.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "latlab/bench/clock_cross_check.hpp"
#include "latlab/bench/clock_study.hpp"
#include "latlab/bench/device_list.hpp"
#include "latlab/bench/run_result.hpp"
#include "latlab/core/latency_device.hpp"
#include "latlab/result.hpp"

namespace latlab {

// One device's study, or why there is none.
struct DeviceClockStudy {
  std::optional<ClockStudyResult> study;
  std::string failure;  // "" when studied
};

// Studies every device at once, each on its own thread, over the same
// seconds: one host clock, one window, each device its own model. A null
// device, or one without calibration pairs, is not studied (its failure
// says why). desc.host_domain is taken from each device.
std::vector<DeviceClockStudy> study_clocks_together(std::span<LatencyDevice* const> devices,
                                                    const ClockStudyDesc& desc);

// run_clock_cross_check on fresh models of `a` and `b`, refreshed every
// 100 ms and given 2 s of pairs before the first trial: a model of one
// start-up pair has a drift bound so wide that any skew agrees.
Result<ClockCrossCheckResult> cross_check_devices(LatencyDevice& a, LatencyDevice& b,
                                                  uint32_t trials);

// `latlab clocks --device all` (or a list): one listed device, opened and
// studied, or why not.
struct ListedClockStudy {
  DeviceSectionHead head;                 // with its physical identity where known
  std::unique_ptr<LatencyDevice> device;  // null when it did not open
  std::optional<ClockStudyResult> study;
  std::string failure;  // why there is no study; "" when studied
};

struct ListedClockStudies {
  std::vector<ListedClockStudy> devices;
  // The first two devices cross-checked, when asked and both were studied;
  // else `cross_check_skipped` says why (asked) or is "" (not asked).
  std::optional<Result<ClockCrossCheckResult>> cross_check;
  std::string cross_check_skipped;
};

// Opens every listed device of `backend`, studies them together
// (study_clocks_together) and, with `cross_trials` > 0, cross-checks the
// first two (cross_check_devices).
ListedClockStudies study_listed_clocks(Backend backend, const std::vector<ListedDevice>& listed,
                                       const ClockStudyDesc& desc, uint32_t cross_trials);

}  // namespace latlab
