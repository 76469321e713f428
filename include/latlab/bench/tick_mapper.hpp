// TickMapper: how the latency engine places GPU ticks on the host clock.
//
// The engine maps through this small interface so that the clock model behind
// it can change (the Calibrator in production, a ground-truth function in sim
// tests) without touching the frame loop.
//
// Ownership: the run owns its mapper. Thread safety: map_pair() and report()
// may be called from any thread; start(), stop() and take_pair() from the
// owning thread; map_final() from any thread once stop() returned.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "latlab/calibrator.hpp"
#include "latlab/clock_model.hpp"
#include "latlab/core/latency_device.hpp"
#include "latlab/result.hpp"

namespace latlab {

// What the result says about the clock model.
struct ClockModelReport {
  // How frames' GPU times were placed on the host clock: "interpolated" (after
  // the run, between the run's calibration pairs: ClockInterpolation),
  // "function" (a given function, e.g. the sim's truth), "" (none).
  std::string frame_mapping;
  bool available = false;      // a fit existed at the end of the run
  std::string reason;          // why not, when !available
  std::string source;          // "calibrator", "function", ...
  double drift_ppm = 0.0;      // of the newest fit
  int64_t error_bound_ns = 0;  // bound at the newest fit's anchor (base_error_ns)
  double drift_error_ppm = 0.0;
  uint32_t pairs_used = 0;  // pairs in the newest fit
  uint64_t pairs_accepted = 0;
  uint64_t pairs_rejected = 0;
  uint64_t refreshes = 0;
  uint64_t failed_refreshes = 0;
  int64_t max_refresh_cost_ns = 0;
  bool estimated = false;  // fit built from bracketed estimates only
  // Pairs taken at the end of blocks (TickMapper::take_pair; in `refreshes`)
  // and block ends that got none (in `failed_refreshes`).
  uint64_t block_end_pairs = 0;
  uint64_t failed_block_end_pairs = 0;
  // The final mapping (filled by the run): frames whose GPU end lay between
  // two pairs (interpolated) or outside them (the newest fit extrapolated),
  // and by how much the pairs' straight-line check widened every bound.
  uint64_t frames_between_pairs = 0;
  uint64_t frames_outside_pairs = 0;
  int64_t interpolation_misfit_ns = 0;
  std::vector<CalibrationPair> pairs;  // accepted pairs, oldest first (bounded)
  // The periodic refresh period (ns); 0: none (the start-up calibration only).
  int64_t refresh_interval_ns = 0;
  // Every refresh's host window, oldest first (bounded): latlab's own work
  // beside the frames (LatencyRun::bookkeeping).
  std::vector<RefreshWindow> refresh_windows;
  bool operator==(const ClockModelReport&) const = default;
};

// Both GPU markers of a frame mapped by one fit snapshot.
struct MappedSpan {
  int64_t begin_host_ns = 0;
  int64_t end_host_ns = 0;
  int64_t error_ns = 0;        // the larger of the two bounds
  bool between_pairs = false;  // map_final: both ends interpolated between two pairs
};

class TickMapper {
 public:
  virtual ~TickMapper() = default;
  // Start-up calibration (bounded, on the caller's thread) and the periodic
  // refresh. Error when no mapping can be made (the run goes on without it).
  virtual Result<void> start() = 0;
  // Stops the refresh (idempotent) and fixes the final mapping from every
  // pair taken since start().
  virtual void stop() = 0;
  // One calibration pair now, on the caller's thread. The run takes one at
  // the end of every block with GPU frames (outside the timed frames), so a
  // block's last frames have a pair after them. Error when none was
  // accepted (the run goes on).
  virtual Result<void> take_pair() = 0;
  // Online: maps begin/end ticks with the newest fit (an extrapolation past
  // its newest pair), for what needs a host time while the run goes on;
  // nullopt when there is no fit (never a guess).
  virtual std::optional<MappedSpan> map_pair(uint64_t begin_ticks, uint64_t end_ticks) const = 0;
  // Final, after stop(): begin/end ticks mapped with every pair of the run
  // (calibrator: interpolated between the pairs on both sides,
  // ClockInterpolation). `near_host_ns`: a host time near the ticks' (the
  // frame's submit). nullopt when nothing can map them. The latency run maps
  // every frame with it once the run is over.
  virtual std::optional<MappedSpan> map_final(uint64_t begin_ticks, uint64_t end_ticks,
                                              int64_t near_host_ns) const = 0;
  virtual ClockModelReport report() const = 0;
};

// The Calibrator-driven mapper over `device` (which must outlive it).
// desc.refresh_interval_ns <= 0: the start-up calibration only, no periodic
// refresh (a diagnostic setting: the fit's drift stays unknown).
// Defined in src/bench/calibrated_mapper.cpp.
std::unique_ptr<TickMapper> make_calibrated_mapper(LatencyDevice& device,
                                                   const CalibratorDesc& desc = {});

// A mapper from a function (sim ground truth, tests). `fn` must be thread-safe.
std::unique_ptr<TickMapper> make_function_mapper(
    std::function<std::optional<MappedTime>(uint64_t)> fn, std::string source);

}  // namespace latlab
