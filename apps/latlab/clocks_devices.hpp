// `latlab clocks --device all` (or a list): one clock study per device, all
// at the same time on the one host clock, each with its own fit and bound;
// optionally the two-device cross-check (clock_cross_check.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "latlab/bench/backend.hpp"
#include "latlab/bench/clock_study.hpp"
#include "latlab/core/latency_device.hpp"
#include "report/clocks_report.hpp"

namespace latlab::cli {

struct ClocksDevicesOptions {
  Backend backend = Backend::vulkan;
  std::string device;  // "all" or a list (device_list.hpp)
  bool json = false;
  bool cross_check = false;
  uint32_t cross_trials = 200;
};

// Runs the studies and prints the result; returns the exit code: 0 when every
// device was studied, 1 when one failed (its section says why), 2 for a bad
// list, 3 when no device could be opened.
int run_clocks_devices(const ClocksDevicesOptions& o, const ClockStudyDesc& desc,
                       const ClocksSettings& settings);

}  // namespace latlab::cli
