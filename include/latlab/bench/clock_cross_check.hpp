// Cross-check of two devices' clock models on the one host clock: a minimal
// frame is submitted to both at the same host deadline (two threads waking on
// one clock_nanosleep deadline), and each device's GPU begin is mapped to the
// host clock through its own model. Corrected for the measured difference of
// the two submit calls, the two starts should differ by no more than the sum
// of the two models' bounds, plus whatever differs in the two devices'
// submit-to-start latency (for two GPUs of one kind, little). The check uses
// the median over the trials, so one trial's jitter does not decide it.
//
// All times are host-clock (CLOCK_MONOTONIC) ns.
#pragma once

#include <cstdint>
#include <string>

#include "latlab/bench/tick_mapper.hpp"
#include "latlab/core/latency_device.hpp"
#include "latlab/result.hpp"
#include "latlab/stats.hpp"

namespace latlab {

struct ClockCrossCheckDesc {
  uint32_t trials = 50;             // synchronised submits (>= 1)
  int64_t interval_ns = 5'000'000;  // between trials' deadlines, ns (default 5 ms)
  uint64_t first_frame_id_a = 0;    // frame ids on device a, rising by one per trial
  uint64_t first_frame_id_b = 0;
  FrameWorkload work{};  // default: one minimal pass
};

struct ClockCrossCheckResult {
  uint32_t trials = 0;
  uint32_t trials_mapped = 0;  // both starts were timed and mapped
  // Per mapped trial: (start_a - start_b) - (submit_a - submit_b), us.
  Distribution start_skew_us;
  Distribution submit_skew_us;  // submit_a - submit_b (host, when each submit call returned), us
  Distribution
      launch_a_us;  // start_a - submit_a, us (may be negative: work starts inside the call)
  Distribution launch_b_us;
  int64_t bound_a_ns = 0;  // median bound of device a's mapped starts
  int64_t bound_b_ns = 0;
  bool agree = false;   // |median start skew| <= bound_a + bound_b
  std::string verdict;  // one line saying so, with the numbers
};

// Runs the trials on devices a and b, whose mappers must be started (and
// outlive the call). Error when a device fails or no trial could be mapped.
Result<ClockCrossCheckResult> run_clock_cross_check(LatencyDevice& a, const TickMapper& map_a,
                                                    LatencyDevice& b, const TickMapper& map_b,
                                                    const ClockCrossCheckDesc& desc);

}  // namespace latlab
