// `latlab run --present`: the present path's options, opening it (after a
// probe in a child process) and what the run lists as unavailable. Private
// to apps/latlab/run*.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "latlab/bench/latency_device.hpp"
#include "latlab/bench/latency_run.hpp"
#include "latlab/bench/present_path.hpp"
#include "run_options.hpp"

namespace latlab::cli {

void add_present_options(CLI::App* sub, RunOptions* opts);

struct PresentSetup {
  bool asked = false;
  std::string probe_error;            // the child probe's finding; "" when it passed
  std::unique_ptr<PresentPath> path;  // null when unavailable (destroy before the device)
  std::string unavailable;            // why there is no present path
};

// Before the device is opened (it forks): the probe of --present.
PresentSetup probe_run_present(const RunOptions& o);
// After: opens the present path on `device` unless the probe failed.
void open_run_present(const RunOptions& o, LatencyDevice& device, PresentSetup& setup,
                      std::FILE* info);
// Adds present, screen and each observer that could not run to run.unavailable.
void note_present_unavailable(const PresentSetup& setup, LatencyRun& run);

}  // namespace latlab::cli
