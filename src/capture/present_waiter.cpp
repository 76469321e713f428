#include "capture/present_waiter.hpp"

#include <pthread.h>

#include <utility>

#include "latlab/host_clock.hpp"

namespace latlab::capture {

PresentWaiter::PresentWaiter(Wait wait, Done done, PresentWaiterDesc desc)
    : wait_(std::move(wait)), done_(std::move(done)), desc_(desc) {
  if (desc_.capacity == 0) desc_.capacity = 1;
  ring_.resize(desc_.capacity);
  thread_ = std::thread([this] { run(); });
}

PresentWaiter::~PresentWaiter() { stop(NoComplete::retired); }

PresentWaiter::Push PresentWaiter::push(uint64_t present_id, uint64_t frame) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return Push::stopped;
    if (count_ == desc_.capacity) {
      ++dropped_;
      return Push::full;
    }
    ring_[(head_ + count_) % desc_.capacity] = Item{present_id, frame};
    ++count_;
    wake = idle_;
  }
  // Only a sleeping thread needs the futex wake; one in a Wait looks at the
  // queue again when its Wait returns.
  if (wake) cv_.notify_one();
  return Push::queued;
}

void PresentWaiter::run() {
  // Named for `top -H` (a thread of latlab's in the captured program).
  pthread_setname_np(pthread_self(), "latlab-present");
  for (;;) {
    Item item;
    {
      std::unique_lock lock(mu_);
      idle_ = true;
      cv_.wait(lock, [this] { return stopping_ || count_ > 0; });
      idle_ = false;
      if (stopping_) return;
      item = ring_[head_];
    }
    WaitOutcome r = WaitOutcome::timeout;
    for (;;) {
      r = wait_(item.present_id, desc_.slice_ns);
      if (r != WaitOutcome::timeout) break;
      std::lock_guard lock(mu_);
      if (stopping_) return;  // the item stays queued: stop() resolves it
    }
    const int64_t returned = host_now_ns();
    {
      std::lock_guard lock(mu_);
      head_ = (head_ + 1) % desc_.capacity;
      --count_;
    }
    if (r == WaitOutcome::done) {
      done_(item.frame, returned, NoComplete::none);
    } else {
      done_(item.frame, kNoTime, NoComplete::failed);
    }
  }
}

void PresentWaiter::stop(NoComplete why) {
  std::lock_guard serial(stop_mu_);
  if (stopped_) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::vector<Item> left;
  {
    std::lock_guard lock(mu_);
    for (; count_ > 0; --count_, head_ = (head_ + 1) % desc_.capacity) left.push_back(ring_[head_]);
  }
  for (const Item& item : left) done_(item.frame, kNoTime, why);
  stopped_ = true;
}

uint64_t PresentWaiter::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

}  // namespace latlab::capture
