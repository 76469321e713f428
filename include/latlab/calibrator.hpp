// Calibrator: samples calibration pairs into a ClockModel - best-of-N with a
// bounded number of tries at start, then periodically on its own thread so
// the frame loop never stalls - and publishes the fit for any thread to read.
//
// Ownership: owns its thread; the destructor stops it. The source must stay
// valid until stop() or destruction. Thread safety: fit() and stats() may be
// called from any thread; the rest from the owning thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "latlab/clock_model.hpp"
#include "latlab/result.hpp"

namespace latlab {

struct CalibratorDesc {
  // Pairs sampled per refresh; the best (lowest deviation) is kept.
  uint32_t samples_per_refresh = 8;
  // Give up a refresh after this many source calls (never loops forever).
  uint32_t max_tries = 32;
  int64_t refresh_interval_ns = 1'000'000'000;  // periodic refresh period, ns (default 1 s)
  ClockModelDesc model{};                       // passed to the ClockModel
  // Accepted pairs kept for reports, the newest (older ones are only
  // counted): memory stays flat however long the run. Default 4096 (68 min at
  // the default 1 s refresh).
  uint32_t kept_pairs = 4096;
};

struct CalibratorStats {
  uint64_t refreshes = 0;         // refreshes that updated the fit (start + periodic)
  uint64_t failed_refreshes = 0;  // refreshes that got no usable pair (source failed
                                  // max_tries times, or the model rejected the best pair)
  uint64_t source_calls = 0;
  uint64_t accepted_pairs =
      0;  // accepted by the model, all of them (accepted_pairs() keeps the newest)
  uint64_t rejected_pairs = 0;       // rejected by the model (ClockModel::rejected_count)
  int64_t last_refresh_cost_ns = 0;  // host time one refresh took (on the calibrator's thread)
  int64_t max_refresh_cost_ns = 0;
};

// One refresh's window on the host clock: when its sampling began and ended
// (on the thread that ran it), and whether it updated the fit. A source that
// stalls other work (a driver lock, a context switch) shows as frames
// overlapping these windows (the run's bookkeeping diagnostic).
struct RefreshWindow {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  bool ok = false;
  bool periodic = false;  // on the refresh thread (false: calibrate_now)
  bool operator==(const RefreshWindow&) const = default;
};

class Calibrator {
 public:
  using Source = std::function<Result<CalibrationPair>()>;

  Calibrator(Source source, TickFormat ticks, CalibratorDesc desc = {});
  ~Calibrator();
  Calibrator(const Calibrator&) = delete;
  Calibrator& operator=(const Calibrator&) = delete;

  // One refresh now, on the caller's thread (start-up). Error if no try in
  // max_tries gave a usable pair.
  Result<void> calibrate_now();
  // Starts the periodic refresh thread (idempotent).
  void start_periodic();
  // Stops it and joins (idempotent).
  void stop();

  // Latest fit; null until a refresh succeeded. Any thread.
  std::shared_ptr<const ClockFit> fit() const;
  CalibratorStats stats() const;
  // The newest pairs the model accepted (up to CalibratorDesc::kept_pairs),
  // oldest first (for reports); stats().accepted_pairs counts them all.
  std::vector<CalibrationPair> accepted_pairs() const;
  // Every refresh's window (the newest CalibratorDesc::kept_pairs), oldest first.
  std::vector<RefreshWindow> refresh_windows() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// What one best-of-N sampling found.
struct BestOfN {
  CalibrationPair pair;  // the lowest-deviation pair that came back
  uint32_t calls = 0;    // source calls made (<= max_tries)
  uint32_t errors = 0;   // calls that returned an Error
};

// Calls `source` until `samples` pairs came back or `max_tries` calls were
// made (never more), and keeps the pair with the lowest deviation. Error,
// with the last source error, when no call gave a pair. Runs on the caller's
// thread.
Result<BestOfN> sample_best_of(const Calibrator::Source& source, uint32_t samples,
                               uint32_t max_tries);

}  // namespace latlab
