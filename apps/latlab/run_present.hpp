// `latlab run --present`: the present path's options and opening it (after
// a probe in a child process); the engine lists what could not run
// (note_present_unavailable). Private to apps/latlab/run*.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>

#include "latlab/bench/latency_run.hpp"
#include "latlab/bench/run_engine.hpp"
#include "latlab/core/latency_device.hpp"
#include "latlab/core/present_path.hpp"
#include "run_options.hpp"

namespace latlab::cli {

void add_present_options(CLI::App* sub, RunOptions* opts);

// Before the device is opened (it forks): the probe of --present.
PresentSetup probe_run_present(const RunCommand& c);
// After: opens the present path on `device` unless the probe failed.
void open_run_present(const RunCommand& c, LatencyDevice& device, PresentSetup& setup,
                      std::FILE* info);

}  // namespace latlab::cli
