#include "latlab/calibrator.hpp"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "latlab/host_clock.hpp"

namespace latlab {

Result<BestOfN> sample_best_of(const Calibrator::Source& source, uint32_t samples,
                               uint32_t max_tries) {
  samples = std::max<uint32_t>(samples, 1);
  max_tries = std::max<uint32_t>(max_tries, 1);
  BestOfN best;
  uint32_t good = 0;
  std::string last_error;
  while (good < samples && best.calls < max_tries) {
    ++best.calls;
    Result<CalibrationPair> r =
        source ? source() : Result<CalibrationPair>(make_error("no calibration source"));
    if (!r) {
      ++best.errors;
      last_error = r.error().message;
      continue;
    }
    if (good == 0 || r->max_deviation_ns < best.pair.max_deviation_ns) best.pair = *r;
    ++good;
  }
  if (good == 0) {
    return make_error("no calibration pair in " + std::to_string(best.calls) +
                      " tries; last error: " + last_error);
  }
  return best;
}

struct Calibrator::Impl {
  Source source;
  CalibratorDesc desc;

  std::mutex refresh_mu;  // one refresh at a time (calibrate_now vs the thread)

  mutable std::mutex state_mu;  // guards model, stats, accepted
  ClockModel model;
  CalibratorStats stats;
  std::deque<CalibrationPair> accepted;  // the newest desc.kept_pairs
  std::deque<RefreshWindow> windows;     // the newest desc.kept_pairs

  mutable std::mutex fit_mu;  // guards fit only: readers hold it for a pointer copy
  std::shared_ptr<const ClockFit> fit;

  std::mutex thread_mu;  // guards stop_requested; the thread waits on cv with it
  std::condition_variable cv;
  bool stop_requested = false;
  std::thread thread;

  Impl(Source s, TickFormat ticks, CalibratorDesc d)
      : source(std::move(s)), desc(d), model(ticks, d.model) {}

  Result<void> refresh(bool periodic);
  void run();
};

Result<void> Calibrator::Impl::refresh(bool periodic) {
  std::lock_guard refresh_lock(refresh_mu);
  const int64_t t0 = host_now_ns();
  Result<BestOfN> best = sample_best_of(source, desc.samples_per_refresh, desc.max_tries);
  Result<void> outcome;
  std::shared_ptr<const ClockFit> new_fit;
  {
    std::lock_guard lock(state_mu);
    if (!best) {
      stats.source_calls += std::max<uint32_t>(desc.max_tries, 1);
      ++stats.failed_refreshes;
      outcome = best.error();
    } else {
      stats.source_calls += best->calls;
      const bool added = model.add_pair(best->pair);
      // Includes pairs dropped from the window later.
      stats.rejected_pairs = model.rejected_count();
      if (added) {
        ++stats.refreshes;
        ++stats.accepted_pairs;
        accepted.push_back(best->pair);
        while (accepted.size() > desc.kept_pairs) accepted.pop_front();
        new_fit = model.fit();
      } else {
        ++stats.failed_refreshes;
        outcome = make_error("calibration pair rejected: deviation " +
                             std::to_string(best->pair.max_deviation_ns) +
                             " ns is far above the best seen (" +
                             std::to_string(model.best_deviation_ns()) + " ns)");
      }
    }
  }
  if (new_fit) {
    std::lock_guard lock(fit_mu);
    fit = std::move(new_fit);
  }
  const int64_t t1 = host_now_ns();
  const int64_t cost = t1 - t0;
  std::lock_guard lock(state_mu);
  stats.last_refresh_cost_ns = cost;
  stats.max_refresh_cost_ns = std::max(stats.max_refresh_cost_ns, cost);
  windows.push_back({t0, t1, outcome.ok(), periodic});
  while (windows.size() > desc.kept_pairs) windows.pop_front();
  return outcome;
}

void Calibrator::Impl::run() {
  // Named for `top -H` and for capture's cost of latlab's threads in a
  // program (src/capture/thread_cpu.hpp).
  pthread_setname_np(pthread_self(), "latlab-clock");
  using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC on Linux: the host clock
  const auto interval = std::chrono::nanoseconds(desc.refresh_interval_ns);
  auto next = Clock::now() + interval;
  std::unique_lock lock(thread_mu);
  while (!cv.wait_until(lock, next, [this] { return stop_requested; })) {
    lock.unlock();
    (void)refresh(true);  // a failure is counted in stats; the next period tries again
    lock.lock();
    // Absolute deadlines; after a late refresh skip the missed ones rather
    // than refreshing in a burst.
    next += interval;
    const auto now = Clock::now();
    if (next <= now) next = now + interval;
  }
}

Calibrator::Calibrator(Source source, TickFormat ticks, CalibratorDesc desc) {
  desc.samples_per_refresh = std::max<uint32_t>(desc.samples_per_refresh, 1);
  desc.max_tries = std::max(desc.max_tries, 1u);
  desc.refresh_interval_ns = std::max<int64_t>(desc.refresh_interval_ns, 1'000);
  impl_ = std::make_unique<Impl>(std::move(source), ticks, desc);
}

Calibrator::~Calibrator() { stop(); }

Result<void> Calibrator::calibrate_now() { return impl_->refresh(false); }

void Calibrator::start_periodic() {
  std::lock_guard lock(impl_->thread_mu);
  if (impl_->thread.joinable()) return;
  impl_->stop_requested = false;
  impl_->thread = std::thread([impl = impl_.get()] { impl->run(); });
}

void Calibrator::stop() {
  {
    std::lock_guard lock(impl_->thread_mu);
    impl_->stop_requested = true;
  }
  impl_->cv.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::shared_ptr<const ClockFit> Calibrator::fit() const {
  std::lock_guard lock(impl_->fit_mu);
  return impl_->fit;
}

CalibratorStats Calibrator::stats() const {
  std::lock_guard lock(impl_->state_mu);
  return impl_->stats;
}

std::vector<CalibrationPair> Calibrator::accepted_pairs() const {
  std::lock_guard lock(impl_->state_mu);
  return {impl_->accepted.begin(), impl_->accepted.end()};
}

std::vector<RefreshWindow> Calibrator::refresh_windows() const {
  std::lock_guard lock(impl_->state_mu);
  return {impl_->windows.begin(), impl_->windows.end()};
}

}  // namespace latlab
