// HostTime: the clock and the waiter the latency engine and the sim device
// use, injectable so tests can run the same code on a virtual clock.
//
// Every implementation speaks host-clock ns (latlab/host_clock.hpp):
//  * RealHostTime   - host_now_ns() and clock_nanosleep(TIMER_ABSTIME) on
//                     CLOCK_MONOTONIC: the real run. Never busy-polls.
//  * ScaledHostTime - the host clock running `scale` times faster (sim backend
//                     only: long runs in short wall time, e.g. the RSS check).
//                     Sleeps for real, for 1/scale of the span.
// (The sim backend also runs on a virtual time that moves only when someone
// sleeps: SimTime::virtual_time in latlab/bench/sim.hpp.)
//
// Thread safety: both are safe to call from any thread.
#pragma once

#include <cstdint>

#include "latlab/host_clock.hpp"

namespace latlab {

class HostTime {
 public:
  virtual ~HostTime() = default;
  // Now, host-clock ns.
  virtual int64_t now_ns() = 0;
  // Blocks until now_ns() >= deadline_ns (absolute); returns at once if past.
  virtual void sleep_until(int64_t deadline_ns) = 0;
  // A short name for reports ("real", "scaled x100", "virtual").
  virtual const char* name() const = 0;
};

// Sleeps on an absolute CLOCK_MONOTONIC deadline; resumes after signals
// (EINTR) so a handler never shortens a wait.
void host_sleep_until(int64_t deadline_ns);

class RealHostTime final : public HostTime {
 public:
  int64_t now_ns() override { return host_now_ns(); }
  void sleep_until(int64_t deadline_ns) override { host_sleep_until(deadline_ns); }
  const char* name() const override { return "real"; }
};

class ScaledHostTime final : public HostTime {
 public:
  // `scale` >= 1: scaled time runs `scale` times faster than the host clock,
  // starting equal to it at construction.
  explicit ScaledHostTime(int64_t scale) : scale_(scale < 1 ? 1 : scale), origin_(host_now_ns()) {}
  int64_t now_ns() override { return origin_ + (host_now_ns() - origin_) * scale_; }
  void sleep_until(int64_t deadline_ns) override {
    const int64_t real = origin_ + (deadline_ns - origin_ + scale_ - 1) / scale_;
    host_sleep_until(real);
  }
  const char* name() const override { return "scaled"; }
  int64_t scale() const { return scale_; }

 private:
  int64_t scale_;
  int64_t origin_;
};

}  // namespace latlab
