// ClockModel: device ticks -> host-clock ns, drift-corrected, with an error
// bound.
//
// Fed calibration pairs (device ticks, host ns, max deviation), it fits
// host = offset + slope * device_ns over a bounded window of the newest good
// pairs, rejects pairs whose deviation is far above the best seen, and maps a
// device timestamp to host ns with a bound that covers the pair deviations,
// the fit's residuals and the extrapolation since the newest pair.
//
// The fit is weighted least squares (weights 1/e^2, e = deviation + one tick)
// of (host - device ns) against device ns, both taken relative to the newest
// pair in exact integers. Its offset and drift are linear in the pairs' host
// errors, so if every pair's error is within its e (what the deviation
// promises), |offset error| <= sum |c_i| e_i and |drift error| <=
// sum |g_i| e_i, c_i and g_i being the fit's coefficients: a worst-case bound,
// not a standard deviation. Residuals larger than e_i (the clock does not
// follow a line, or a device understates its deviation) widen every e_i.
//
// One pair is not enough: a device drifting 4 ppm against the host is off by
// 2.4 ms after ten minutes on a single start-up pair.
//
// Thread safety: ClockModel is not thread-safe (the calibrator owns it);
// ClockFit is an immutable snapshot, safe to share and read from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "latlab/tick_format.hpp"

namespace latlab {

struct CalibrationPair {
  uint64_t device_ticks = 0;     // raw device timestamp (valid bits only)
  int64_t host_ns = 0;           // host-clock ns taken together with it
  int64_t max_deviation_ns = 0;  // how far apart the two reads may be (>= 0)
  bool estimated = false;        // bracketed estimate, not a calibrated read
  bool operator==(const CalibrationPair&) const = default;
};

// A pair's host error bound as a fit sees it: its stated deviation plus one
// tick (the device reading is quantised to the tick below the true time)
// plus 1 ns of rounding.
int64_t pair_error_bound_ns(const TickFormat& ticks, const CalibrationPair& pair);

struct MappedTime {
  int64_t host_ns = 0;   // the device time on the host clock
  int64_t error_ns = 0;  // |truth - host_ns| <= error_ns, by the model's bound
};

struct ClockModelDesc {
  uint32_t window = 64;        // newest good pairs kept for the fit (>= 2)
  double reject_factor = 4.0;  // reject a pair whose deviation > factor * best + reject_slack_ns;
                               // best = lowest deviation of the last `window` pairs offered
                               // (so one freak low value ages out instead of starving the fit)
  int64_t reject_slack_ns = 2'000;
  double max_drift_ppm = 500.0;  // a fit beyond this is a broken clock: fall back to offset only
};

// An immutable fit: what the model knew at one moment.
struct ClockFit {
  TickFormat ticks;
  // host_ns = anchor_host_ns + (device_ns - anchor_device_ns) * (1 + drift)
  uint64_t anchor_device_ticks = 0;  // unwrapped anchor (newest pair)
  int64_t anchor_host_ns = 0;        // the fitted host time of the anchor tick
  double drift = 0.0;                // relative rate, e.g. 4e-6 for 4 ppm
  int64_t base_error_ns = 0;         // bound at the anchor (deviations + residual spread), ns
  double drift_error = 0.0;          // bound on |drift - true drift| (relative); the bound grows
                                     // by drift_error * |device ns - anchor|. A fit of one pair
                                     // knows no drift: then drift = 0, drift_error =
                                     // max_drift_ppm * 1e-6.
  int64_t newest_pair_host_ns = 0;
  uint32_t pairs_used = 0;
  bool estimated = false;  // built from estimated pairs only

  // Maps a device timestamp (wrap-aware around the anchor) to the host clock.
  // A raw tick is resolved to the unwrapped value nearest the anchor, so with
  // valid_bits < 64 it must lie within half a wrap period of the anchor.
  MappedTime map(uint64_t device_ticks) const;
  // The unwrapped tick nearest the anchor whose low valid_bits are `device_ticks`.
  uint64_t unwrap(uint64_t device_ticks) const;
  // Maps an already unwrapped tick (same sequence as anchor_device_ticks).
  MappedTime map_unwrapped(uint64_t unwrapped_ticks) const;
  double drift_ppm() const { return drift * 1e6; }
};

class ClockModel {
 public:
  explicit ClockModel(TickFormat ticks, ClockModelDesc desc = {});

  // Adds a pair; false if it was rejected (deviation too far above the best,
  // or negative). Pairs already in the window that a new, better best shows
  // to be far above it are dropped too (and counted as rejected).
  bool add_pair(const CalibrationPair& pair);
  bool ready() const;  // at least one accepted pair
  // Snapshot of the current fit; null before ready().
  std::shared_ptr<const ClockFit> fit() const;
  // Residuals (pair host - fitted host, ns) of the pairs in the window.
  std::vector<int64_t> residuals() const;
  uint64_t accepted_count() const;
  uint64_t rejected_count() const;
  // Lowest deviation of the last `window` pairs offered (0 before any).
  int64_t best_deviation_ns() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace latlab
