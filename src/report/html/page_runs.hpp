// What the comparison and history pages show of one run, read from the typed
// result (of its top-level device, for a several-device run): the device it
// measured, its latency modes with their workloads or why they did not run,
// and its `settings` as the document holds them. Private to src/report/html.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "latlab/bench/run_result.hpp"

namespace latlab::html {

// The device a run measured: its latency run's, a run without latency
// blocks' own, or a capture's first frame source (API as backend, no driver).
struct RunDevice {
  std::string backend, name, driver;
};
RunDevice run_device(const RunResult& r);

// A latency mode of a run in the document's order; an unavailable Loaded
// last, with its reason and no workload.
struct RunMode {
  std::string name;
  bool available = false;
  std::string reason;                       // why not, when !available
  const FrameWorkload* workload = nullptr;  // set when available
};
std::vector<RunMode> run_modes(const RunResult& r);

// The run's `settings` (keys sorted; an empty object for a capture).
nlohmann::json run_settings(const RunResult& r);

}  // namespace latlab::html
