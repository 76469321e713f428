// ClockInterpolation: device ticks -> host-clock ns after the fact, from
// every calibration pair of a run (the latency run's final mapping).
//
// A device time between two pairs is placed on the straight line through
// them. If the device clock keeps a constant rate against the host clock
// between two neighbouring pairs, the mapped time is off by at most
// (1 - l) * e_a + l * e_b, where l (0..1) says how far the time lies from
// pair a towards pair b and e is each pair's bound (pair_error_bound_ns):
// nothing is extrapolated, no drift has to be known, and the bound does not
// grow with the distance from a pair. ClockFit::map, used while a run goes
// on, can only extrapolate past its newest pair (and, until a second pair,
// knows the drift only within ClockModelDesc::max_drift_ppm).
//
// The constant-rate assumption is checked on the pairs themselves: each inner
// pair against the line through its two neighbours. The largest miss beyond
// the three pairs' bounds (misfit_ns, the whole miss) widens every bound, as
// residuals beyond the deviations widen a ClockModel's. A bend smaller than
// the pairs' own bounds cannot be seen, and is not covered.
//
// A time outside the pairs (before the first, after the last) is mapped by
// the `outside` fit, with that fit's own extrapolation bound.
//
// Thread safety: immutable once built; map() may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "latlab/clock_model.hpp"
#include "latlab/tick_format.hpp"

namespace latlab {

struct InterpolatedTime {
  MappedTime time;
  bool between_pairs = false;  // interpolated; false: mapped by the outside fit
};

class ClockInterpolation {
 public:
  // `pairs` in any order (sorted by host time here); a pair whose device
  // ticks do not rise with its host time is dropped (dropped_pairs()), as is
  // one with a negative deviation. `outside`: the fit for times outside the
  // pairs (null: those are not mapped).
  ClockInterpolation(TickFormat ticks, std::vector<CalibrationPair> pairs,
                     std::shared_ptr<const ClockFit> outside);

  // Maps raw device ticks. `near_host_ns`: a host time within a quarter of
  // the counter's wrap period of the tick's (a frame's submit time will do);
  // it says which wrap the tick lies in when valid_bits < 64. nullopt: the
  // tick lies outside the pairs and there is no outside fit.
  std::optional<InterpolatedTime> map(uint64_t device_ticks, int64_t near_host_ns) const;

  size_t pair_count() const { return points_.size(); }
  uint64_t dropped_pairs() const { return dropped_; }
  int64_t misfit_ns() const { return misfit_ns_; }

 private:
  struct Point {
    uint64_t unwrapped = 0;  // device ticks, one sequence for the whole run
    int64_t host_ns = 0;
    int64_t error_ns = 0;  // pair_error_bound_ns
  };
  // Host ns and bound of unwrapped tick `t` on the line through a and b
  // (a.unwrapped <= t <= b.unwrapped), the bound without the misfit.
  MappedTime between(const Point& a, const Point& b, uint64_t t) const;
  uint64_t unwrap_near(uint64_t raw, const Point& ref, int64_t host_ns) const;

  TickFormat ticks_;
  std::vector<Point> points_;  // rising in ticks and host time
  std::shared_ptr<const ClockFit> outside_;
  int64_t misfit_ns_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace latlab
