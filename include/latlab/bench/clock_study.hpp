// Clock study: how a device clock behaves against the host clock over S
// seconds, and what a drift-corrected model buys over a single start-up pair.
//
// It takes a best-of-N pair at the start (the "single start-up pair"), then
// one every `interval_ns` into a ClockModel for `seconds`, and finally
// `fresh_pairs` more pairs that the fit never saw. Against those fresh pairs
// it measures the model's error, the single pair's error (no drift
// correction) and how many fall within the model's stated bound.
//
// Works with any calibration source: SimClock in tests, a Vulkan or CUDA
// device's sample_calibration() on a GPU machine. Runs on the caller's
// thread and waits on absolute deadlines (no busy polling).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "latlab/calibrator.hpp"
#include "latlab/clock_model.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/result.hpp"
#include "latlab/stats.hpp"
#include "latlab/tick_format.hpp"

namespace latlab {

struct ClockStudyDesc {
  double seconds = 10.0;                     // sampling duration after the start-up pair, s (> 0):
                                             // floor(seconds / interval) refreshes follow it
  int64_t interval_ns = 100'000'000;         // between model refreshes, ns (default 100 ms)
  uint32_t samples_per_refresh = 8;          // best-of-N per refresh (and per fresh pair)
  uint32_t max_tries = 32;                   // source calls per refresh at most
  uint32_t fresh_pairs = 32;                 // pairs taken at the end, not used in the fit (>= 1)
  ClockModelDesc model{.window = 640};       // ~a minute at 100 ms: long enough for drift, short
                                             // enough to follow a slewed host clock
  std::string host_domain = kHostClockName;  // the host clock the source's pairs are taken against
  // Time: null = the host clock (host_now_ns, clock_nanosleep TIMER_ABSTIME).
  // Tests pass a virtual clock whose sleep_until jumps to the deadline.
  std::function<int64_t()> now{};
  std::function<void(int64_t deadline_ns)> sleep_until{};
  // Optional, called after each refresh with the fraction of refreshes done, [0, 1].
  std::function<void(double fraction)> progress{};
};

struct ClockStudyResult {
  std::string host_domain;
  TickFormat ticks;
  double sampled_seconds = 0;     // host time from the start-up pair to the last refresh
  uint64_t refreshes = 0;         // refreshes whose pair the model accepted (start included)
  uint64_t failed_refreshes = 0;  // refreshes with no pair (source failed max_tries times)
  uint64_t rejected_pairs = 0;    // pairs the model rejected (ClockModel::rejected_count)
  uint64_t source_calls = 0;
  uint64_t source_errors = 0;
  Distribution deviation_us;         // max deviation of every pair the source gave, us
  double drift_ppm = 0;              // fitted drift at the end
  double drift_uncertainty_ppm = 0;  // the fit's drift bound (ClockFit::drift_error), ppm
  uint32_t pairs_used = 0;           // pairs in the final fit
  Distribution residual_us;          // residuals of the final fit's pairs, us
  int64_t bound_now_ns = 0;          // the model's error bound at the last fresh pair
  // Against the fresh pairs (signed: mapped host - pair host). `missing`
  // counts fresh pairs the source could not give.
  Distribution model_error_us;        // drift-corrected model
  Distribution single_pair_error_us;  // start-up pair alone, no drift correction
  uint32_t fresh_within_bound = 0;  // |model error| <= bound + the fresh pair's deviation + 1 tick
  uint32_t fresh_count = 0;
  double fresh_within_bound_fraction() const {
    return fresh_count == 0 ? 0.0 : static_cast<double>(fresh_within_bound) / fresh_count;
  }
  std::shared_ptr<const ClockFit> start_fit;  // the single start-up pair's fit
  std::shared_ptr<const ClockFit> fit;        // the final model fit
};

// Error when the source gives no pair at the start or for any fresh pair,
// or when desc is invalid (message says which field).
Result<ClockStudyResult> run_clock_study(const Calibrator::Source& source, TickFormat ticks,
                                         const ClockStudyDesc& desc = {});

}  // namespace latlab
