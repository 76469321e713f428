// ClockSync: a device's clock kept on the host clock for a program, in one
// call. It owns the Calibrator (best-of-N pairs now, then a refresh on its
// own thread, never in the frame loop) and hands out the mapper the profiler
// takes:
//
//   auto clock = start_clock_sync(device);   // vulkan.hpp, opengl.hpp, cuda.hpp
//   prof->set_clock_mapper(clock->mapper());
//
// instead of a Calibrator, calibrate_now(), start_periodic() and a lambda
// over fit(). Without a way to calibrate (no calibrated timestamps and no
// queue handed over, GL_TIME_ELAPSED only, ...) the ClockSync is
// unavailable with the reason, its mapper maps nothing (zones keep device
// durations), and the program goes on.
//
// Clock: host times are host_now_ns() (CLOCK_MONOTONIC), as everywhere.
// Threads: every member is safe from any thread. Ownership: the source (the
// device it samples) must outlive the ClockSync; a mapper may outlive it and
// then maps with the last fit it had.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "latlab/calibrator.hpp"
#include "latlab/clock_model.hpp"
#include "latlab/tick_format.hpp"

namespace latlab {

class ClockSync {
 public:
  // Calibrates now on the caller's thread (bounded: desc.max_tries source
  // calls) and, when that gave a fit, refreshes every
  // desc.refresh_interval_ns on its own thread. A failed start leaves it
  // unavailable with the source's error, and starts no thread. `method`
  // names how pairs are taken (for reports).
  static std::unique_ptr<ClockSync> start(Calibrator::Source source, TickFormat ticks,
                                          std::string method, CalibratorDesc desc = {});
  // One that cannot map, with the reason (the backends' start_clock_sync
  // when the device has no way to calibrate).
  static std::unique_ptr<ClockSync> unavailable(std::string reason);
  ~ClockSync();  // stops the refresh
  ClockSync(const ClockSync&) = delete;
  ClockSync& operator=(const ClockSync&) = delete;

  // A fit exists (start-up calibration succeeded).
  bool available() const;
  // Why not available; "" when available.
  const std::string& reason() const { return reason_; }
  // How pairs are taken, e.g. "vkGetCalibratedTimestampsEXT(device, clock_monotonic)".
  const std::string& method() const { return method_; }
  // The newest fit; null when unavailable.
  std::shared_ptr<const ClockFit> fit() const;
  // Zeros when unavailable without a calibrator.
  CalibratorStats stats() const;
  // Stops the refresh now (idempotent); the last fit stays.
  void stop();

  // Device ticks -> host clock through the newest fit, nullopt when there is
  // none: what GpuProfiler::set_clock_mapper takes. Thread-safe; it may
  // outlive this object (it keeps the last fit then).
  std::function<std::optional<MappedTime>(uint64_t)> mapper() const;

 private:
  struct Shared;
  ClockSync() = default;
  std::unique_ptr<Calibrator> calibrator_;
  std::shared_ptr<Shared> shared_;
  std::string reason_;
  std::string method_;
};

}  // namespace latlab
