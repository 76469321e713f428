// TickMapper: how the latency engine places GPU ticks on the host clock.
//
// The engine maps through this small interface so that the clock model behind
// it can change (the Calibrator in production, a ground-truth function in sim
// tests) without touching the frame loop.
//
// Ownership: the run owns its mapper. Thread safety: map_pair() and report()
// may be called from any thread; start()/stop() from the owning thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "latlab/calibrator.hpp"
#include "latlab/clock_model.hpp"
#include "latlab/latency_device.hpp"
#include "latlab/result.hpp"

namespace latlab {

// What the result says about the clock model.
struct ClockModelReport {
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
  bool estimated = false;              // fit built from bracketed estimates only
  std::vector<CalibrationPair> pairs;  // accepted pairs, oldest first (bounded)
  // The periodic refresh period (ns); 0: none (the start-up calibration only).
  int64_t refresh_interval_ns = 0;
  // Every refresh's host window, oldest first (bounded): latlab's own work
  // beside the frames (LatencyRun::bookkeeping).
  std::vector<RefreshWindow> refresh_windows;
};

// Both GPU markers of a frame mapped by one fit snapshot.
struct MappedSpan {
  int64_t begin_host_ns = 0;
  int64_t end_host_ns = 0;
  int64_t error_ns = 0;  // the larger of the two bounds
};

class TickMapper {
 public:
  virtual ~TickMapper() = default;
  // Start-up calibration (bounded, on the caller's thread) and the periodic
  // refresh. Error when no mapping can be made (the run goes on without it).
  virtual Result<void> start() = 0;
  // Stops the refresh (idempotent).
  virtual void stop() = 0;
  // Maps begin/end ticks; nullopt when there is no fit (never a guess).
  virtual std::optional<MappedSpan> map_pair(uint64_t begin_ticks, uint64_t end_ticks) const = 0;
  virtual ClockModelReport report() const = 0;
};

// The Calibrator-driven mapper over `device` (which must outlive it).
// desc.refresh_interval_ns <= 0: the start-up calibration only, no periodic
// refresh (a diagnostic setting: the fit's drift stays unknown).
// Defined in src/latency/calibrated_mapper.cpp.
std::unique_ptr<TickMapper> make_calibrated_mapper(LatencyDevice& device,
                                                   const CalibratorDesc& desc = {});

// A mapper from a function (sim ground truth, tests). `fn` must be thread-safe.
std::unique_ptr<TickMapper> make_function_mapper(
    std::function<std::optional<MappedTime>(uint64_t)> fn, std::string source);

}  // namespace latlab
