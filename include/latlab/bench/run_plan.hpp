// The checked plan of a benchmark run (`latlab run`): what the engine
// (run_engine.hpp) runs. The CLI turns its options into one; nothing of the
// command line travels past it.
#pragma once

#include <cstdint>
#include <string>

#include "latlab/bench/backend.hpp"
#include "latlab/bench/latency_run.hpp"
#include "latlab/bench/load_calibration.hpp"
#include "latlab/calibrator.hpp"

namespace latlab {

struct RunPlan {
  // As asked (the result's `settings`): mode (baseline, loaded, latency,
  // performance, all), backend, device selector ("" = the default).
  std::string mode = "latency";
  Backend backend = Backend::vulkan;
  std::string device;

  LatencyRunDesc desc;  // schedule, frames, blocks, the Baseline workload; modes set later
  bool want_baseline = false;
  bool want_loaded = false;
  bool want_perf = false;

  // Loaded: 4 passes at the load size; complexity given or calibrated
  // (prepare_loaded sets it).
  FrameWorkload loaded_work;
  bool load_size_auto = false;   // the calibration picks the size (auto_load_sizes())
  std::string load_size_text;    // the size as asked, "WxH" or "auto"
  uint32_t load_complexity = 0;  // given; 0: calibrate
  double load_target_ms = kLoadedTargetMs;
  double load_tolerance = 0.02;  // accepted |median - target| / target

  // Performance: 4 passes at its size and complexity, this many frames.
  FrameWorkload perf_work;
  uint32_t perf_frames = 300;

  CalibratorDesc calibrator;  // the clock model's refresh
  // Turn warm-up given explicitly (else several devices take
  // kSeveralDevicesTurnWarmupNs).
  bool turn_warmup_given = false;
  bool per_frame = false;   // the result carries every measured frame's series
  bool validation = false;  // the API's validation findings go into the result

  bool want_latency() const { return want_baseline || want_loaded; }
};

// Turn warm-up with several devices unless the plan gives one: on the 2-GPU
// H200 without it, Vulkan Loaded frames at the start of a turn took up to
// 47.7 ms instead of 8.3 (docs/BENCHMARKS.md).
inline constexpr int64_t kSeveralDevicesTurnWarmupNs = 250'000'000;

}  // namespace latlab
