// `latlab run` after its options are planned: the engine's result handed to
// the reporters' exit code, and several devices.
// run.cpp calls them. Private to apps/latlab/run*.cpp.
#pragma once

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>

#include "command.hpp"
#include "latlab/bench/latency_report.hpp"
#include "latlab/bench/latency_run.hpp"
#include "latlab/bench/load_calibration.hpp"
#include "latlab/bench/performance_mode.hpp"
#include "latlab/bench/run_result.hpp"
#include "latlab/bench/tick_mapper.hpp"
#include "latlab/core/latency_device.hpp"
#include "report/reporters/reporters.hpp"
#include "run_options.hpp"

namespace latlab::cli {

// The exit code of a run's reporting (command.hpp): 0, 1 incomplete, 4 an
// output not written.
inline int run_exit_code(RunReported r) {
  switch (r) {
    case RunReported::complete:
      return kExitOk;
    case RunReported::incomplete:
      return kExitRunFailed;
    case RunReported::write_failed:
      return kExitWriteFailed;
  }
  return kExitRunFailed;
}

// `run --device all` or a device list (run_devices.cpp): every device in
// interleaved blocks, one section per device, appended to `store` when not
// null. Returns the exit code.
int run_device_list(RunCommand& c, std::FILE* info, const std::atomic<bool>* interrupt,
                    store::ResultsStore* store);

}  // namespace latlab::cli
