#include "bench/completion_poll.hpp"

#include "latlab/bench/signal_generator.hpp"
#include "latlab/host_clock.hpp"

namespace latlab {

namespace {

constexpr uint32_t kStop = 0xFFFF'FFFFu;
constexpr uint32_t kOpening = 0;  // armed_/done_ value before the first frame

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// One poll's verdict into `out`: true when the spin ends (complete, failed,
// or the limit reached: missing, never 0), false to poll again.
bool poll_settles(PollStatus s, int64_t now, int64_t start, int64_t limit_ns, PollOutcome& out) {
  if (s == PollStatus::complete) {
    out.status = QueryStatus::ok;
    out.seen_ns = now;
    return true;
  }
  if (s == PollStatus::failed) {
    out.status = QueryStatus::invalid;
    return true;
  }
  if (now - start >= limit_ns) {
    out.status = QueryStatus::not_ready;
    return true;
  }
  return false;
}

}  // namespace

PollOutcome poll_inline(CompletionPoller& poller, const PollTarget& target, HostTime& time,
                        int64_t limit_ns, int64_t step_ns) {
  PollOutcome out;
  const int64_t cpu0 = thread_cpu_time_ns();
  const int64_t start = time.now_ns();
  for (;;) {
    const PollStatus status = poller.poll(target);
    const int64_t now = time.now_ns();  // after the poll: when it saw the status
    if (poll_settles(status, now, start, limit_ns, out)) break;
    time.sleep_until(now + step_ns);
  }
  out.cpu_ns = thread_cpu_time_ns() - cpu0;
  return out;
}

PollThread::PollThread(LatencyDevice& device, HostTime& time, int64_t limit_ns)
    : device_(device), time_(time), limit_ns_(limit_ns) {
  // The poller is opened on its own thread (a GL context is current per
  // thread); the constructor waits until it is open or failed.
  thread_ = std::thread([this] { run(); });
  done_.wait(kOpening, std::memory_order_acquire);
  if (!error_.empty()) {
    thread_.join();
  }
}

PollThread::~PollThread() {
  if (!thread_.joinable()) return;
  armed_.store(kStop, std::memory_order_release);
  armed_.notify_one();
  thread_.join();
}

void PollThread::arm(const PollTarget& target) {
  seq_ = seq_ + 1 == kStop ? 1 : seq_ + 1;
  target_ = target;
  armed_.store(seq_, std::memory_order_release);
  armed_.notify_one();
}

PollOutcome PollThread::finish(bool cancel) {
  if (cancel) cancel_.store(seq_, std::memory_order_relaxed);
  for (uint32_t d = done_.load(std::memory_order_acquire); d != seq_;
       d = done_.load(std::memory_order_acquire)) {
    done_.wait(d, std::memory_order_acquire);
  }
  return outcome_;
}

void PollThread::run() {
  Result<std::unique_ptr<CompletionPoller>> opened = device_.open_poller();
  if (!opened) {
    error_ = opened.error().message;
    if (error_.empty()) error_ = "the device's poller could not be opened";
    done_.store(kStop, std::memory_order_release);
    done_.notify_one();
    return;
  }
  std::unique_ptr<CompletionPoller> poller = std::move(opened.value());
  done_.store(kStop, std::memory_order_release);  // open: the constructor returns
  done_.notify_one();
  uint32_t last = kOpening;
  for (;;) {
    armed_.wait(last, std::memory_order_acquire);
    const uint32_t seq = armed_.load(std::memory_order_acquire);
    if (seq == kStop) break;
    if (seq == last) continue;
    last = seq;
    const PollTarget target = target_;
    PollOutcome out;
    const int64_t cpu0 = thread_cpu_time_ns();
    const int64_t start = time_.now_ns();
    for (;;) {
      const PollStatus status = poller->poll(target);
      if (poll_settles(status, time_.now_ns(), start, limit_ns_, out)) break;
      if (cancel_.load(std::memory_order_relaxed) == seq) break;  // the frame failed: missing
      cpu_relax();
    }
    out.cpu_ns = thread_cpu_time_ns() - cpu0;
    outcome_ = out;
    done_.store(seq, std::memory_order_release);
    done_.notify_one();
  }
  poller.reset();  // on the thread that opened it
}

}  // namespace latlab
