// Several devices' clocks studied over the same seconds (latlab clocks
// --device all), and two of them cross-checked with models refitted for the
// purpose: what the command line calls, with the devices it opened.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "latlab/bench/clock_cross_check.hpp"
#include "latlab/bench/clock_study.hpp"
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

}  // namespace latlab
