// The poll observer (not public): a thread that spins on a frame's
// completion (CompletionPoller) while the consumer thread blocks in
// wait_frame() on the same frame, so both observe the same completion.
//
// Per frame: the consumer arms it right after submit (arm), blocks in its
// wait, then collects what the poller saw (finish). After a successful
// blocking wait the frame has completed, so the spin ends at its next poll;
// after a failed one finish(cancel) ends it. The poll target is never used
// after finish() returns. The hand-off is two atomics with wait/notify (futex): no lock, no
// allocation per frame. The spin is bounded by `limit_ns` of the host clock;
// past it the frame's poll value is missing (spin limit), never 0.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "latlab/host_time.hpp"
#include "latlab/core/latency_device.hpp"

namespace latlab {

struct PollOutcome {
  // ok, not_ready (the spin limit), invalid (the driver failed), missing (cancelled)
  QueryStatus status = QueryStatus::missing;
  int64_t seen_ns = 0;  // host time right after poll() said complete
  int64_t cpu_ns = 0;   // the poller thread's CPU time for the frame
};

// One non-blocking poll loop on the calling thread, for lockstep runs (sim
// virtual time): polls, then sleeps `step_ns` on `time`, until complete,
// failed or `limit_ns` past the start.
PollOutcome poll_inline(CompletionPoller& poller, const PollTarget& target, HostTime& time,
                        int64_t limit_ns, int64_t step_ns);

class PollThread {
 public:
  // Starts the thread and opens `device`'s poller on it; check error().
  PollThread(LatencyDevice& device, HostTime& time, int64_t limit_ns);
  ~PollThread();
  PollThread(const PollThread&) = delete;
  PollThread& operator=(const PollThread&) = delete;

  // Why the poller could not be opened ("" when it runs).
  const std::string& error() const { return error_; }
  // Consumer thread: start spinning on `target` now.
  void arm(const PollTarget& target);
  // Consumer thread: wait for the spin to end and return what it saw.
  // `cancel`: end it now (the frame failed); the outcome is then missing
  // unless completion was already seen.
  PollOutcome finish(bool cancel = false);

 private:
  void run();

  LatencyDevice& device_;
  HostTime& time_;
  const int64_t limit_ns_;
  std::string error_;
  PollTarget target_;    // written by arm() before `armed_` is released
  PollOutcome outcome_;  // written by the poller before `done_` is released
  // Sequence of the armed frame (kStop ends the thread), the one the poller
  // finished, the one finish() wants stopped; each on its own cache line.
  alignas(64) std::atomic<uint32_t> armed_{0};
  alignas(64) std::atomic<uint32_t> done_{0};
  alignas(64) std::atomic<uint32_t> cancel_{0};
  uint32_t seq_ = 0;  // consumer thread only
  std::thread thread_;
};

}  // namespace latlab
