#include "latlab/bench/signal_generator.hpp"

#include <sys/prctl.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "core/splitmix64.hpp"

namespace latlab {

void SignalChannel::publish(uint64_t count) {
  {
    std::lock_guard lock(mutex_);
    published_ = count;
  }
  // Notify after unlocking so the consumer does not wake into a held mutex.
  cv_.notify_one();
}

void SignalChannel::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  cv_.notify_one();
}

SignalChannel::Wait SignalChannel::wait_for(uint64_t index) {
  std::unique_lock lock(mutex_);
  Wait w;
  w.was_pending = published_ > index;
  cv_.wait(lock, [&] { return published_ > index || closed_; });
  w.available = published_ > index;
  return w;
}

TimerSlack read_thread_timer_slack() {
  TimerSlack t;
  const int cur = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  if (cur >= 0) {
    t.previous_ns = cur;
    t.obtained_ns = cur;
  } else {
    t.error = std::string("prctl(PR_GET_TIMERSLACK) failed: ") + std::strerror(errno);
  }
  return t;
}

TimerSlack set_thread_timer_slack(int64_t requested_ns) {
  TimerSlack t = read_thread_timer_slack();
  if (requested_ns <= 0) return t;
  t.requested = true;
  t.requested_ns = requested_ns;
  if (prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(requested_ns), 0, 0, 0) != 0) {
    t.error = std::string("prctl(PR_SET_TIMERSLACK) failed: ") + std::strerror(errno);
    return t;
  }
  t.applied = true;
  const int now = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  t.obtained_ns = now >= 0 ? now : -1;
  return t;
}

int64_t thread_cpu_time_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

uint64_t cpu_simulation_step(uint64_t frame_id, uint32_t iterations) {
  uint64_t x = frame_id ^ 0x6A09E667F3BCC909ull;
  // splitmix64 with its output fed back in as the next state.
  for (uint32_t i = 0; i < iterations; ++i) x = splitmix64_mix(x + kSplitMix64Gamma);
  return x;
}

}  // namespace latlab
