// The pieces the signal generator and the consumer share: the channel that
// carries signals between them and the generator thread's timer slack.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

namespace latlab {

// SignalChannel: the generator publishes frames in order; the consumer blocks
// (condition variable over a futex, no spinning) until the frame it wants is
// published. Signals are counted, never coalesced or dropped: if the consumer
// is behind, later frames wait with their own signal times.
// Thread safety: one publisher thread, one consumer thread.
class SignalChannel {
 public:
  struct Wait {
    bool available = false;    // false: the channel closed before the frame was published
    bool was_pending = false;  // the frame was already published when the consumer looked
  };

  // Frames [0, count) are published (count grows by one per call).
  void publish(uint64_t count);
  // No more frames will come; wakes the consumer.
  void close();
  // Blocks until frame `index` is published or the channel is closed.
  Wait wait_for(uint64_t index);

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  uint64_t published_ = 0;
  bool closed_ = false;
};

// A thread's timer slack (Linux prctl PR_SET_TIMERSLACK): the kernel may delay
// a timer wake by up to this much to batch wake-ups (default 50 us). Lowering
// it is a per-thread setting: nothing machine-wide changes.
struct TimerSlack {
  bool requested = false;    // the run asked to lower it
  int64_t requested_ns = 0;  // what was asked (1 ns)
  int64_t previous_ns = -1;  // before the change (-1: unknown)
  int64_t obtained_ns = -1;  // read back after the change (-1: unknown)
  bool applied = false;      // the change was made
  std::string error;         // why not, when requested and not applied
  bool operator==(const TimerSlack&) const = default;
};

// Reads the calling thread's slack and, if `requested_ns` > 0, sets it.
TimerSlack set_thread_timer_slack(int64_t requested_ns);
// The calling thread's slack without changing it.
TimerSlack read_thread_timer_slack();

// CPU time the calling thread has used, ns (CLOCK_THREAD_CPUTIME_ID).
int64_t thread_cpu_time_ns();

// The consumer's deterministic CPU simulation step: `iterations` rounds of a
// fixed 64-bit integer hash seeded by the frame id. Returns the hash so the
// work cannot be optimised away (the run folds it into a checksum).
uint64_t cpu_simulation_step(uint64_t frame_id, uint32_t iterations);

}  // namespace latlab
