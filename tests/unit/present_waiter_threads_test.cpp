// The capture layer's present waiter (src/capture/present_waiter.hpp) on
// real threads, with a scripted presentation engine in place of
// vkWaitForPresentKHR: presents are waited for in order and never make a
// push wait; a full queue drops and counts; stop() resolves what is queued
// and no Wait is made once it returned (the layer destroys the swapchain
// then); every queued present gets exactly one Done, with several threads.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "capture/present_waiter.hpp"
#include "latlab/host_clock.hpp"

namespace latlab::capture {
namespace {

using namespace std::chrono_literals;

// Presents complete when the test says so (complete(id)); a Wait blocks
// until then or its timeout, as vkWaitForPresentKHR does.
class Engine {
 public:
  WaitOutcome wait(uint64_t id, uint64_t timeout_ns) {
    calls_.fetch_add(1);
    std::unique_lock lock(mu_);
    const bool ok = cv_.wait_for(lock, std::chrono::nanoseconds(timeout_ns),
                                 [&] { return completed_ >= id || id == fail_id_; });
    if (!ok) return WaitOutcome::timeout;
    return id == fail_id_ && completed_ < id ? WaitOutcome::failed : WaitOutcome::done;
  }
  // Marks every present up to `id` complete; returns the host time just before.
  int64_t complete(uint64_t id) {
    const int64_t t = host_now_ns();
    {
      std::lock_guard lock(mu_);
      completed_ = id;
    }
    cv_.notify_all();
    return t;
  }
  void fail(uint64_t id) {
    {
      std::lock_guard lock(mu_);
      fail_id_ = id;
    }
    cv_.notify_all();
  }
  uint64_t calls() const { return calls_.load(); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t completed_ = 0;
  uint64_t fail_id_ = UINT64_MAX;
  std::atomic<uint64_t> calls_{0};
};

struct Resolved {
  uint64_t frame;
  int64_t ns;
  NoComplete why;
};

class Log {
 public:
  void add(uint64_t f, int64_t ns, NoComplete why) {
    std::lock_guard lock(mu_);
    items_.push_back({f, ns, why});
    cv_.notify_all();
  }
  bool wait_for_count(size_t n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 10s, [&] { return items_.size() >= n; });
  }
  std::vector<Resolved> items() {
    std::lock_guard lock(mu_);
    return items_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Resolved> items_;
};

struct Rig {
  Engine engine;
  Log log;
  PresentWaiter waiter;
  explicit Rig(PresentWaiterDesc desc = {})
      : waiter([this](uint64_t id, uint64_t t) { return engine.wait(id, t); },
               [this](uint64_t f, int64_t ns, NoComplete why) { log.add(f, ns, why); }, desc) {}
};

// push() on a thread of its own, with a bound: a push that waited for the
// engine would fail the test instead of hanging it.
PresentWaiter::Push bounded_push(PresentWaiter& w, uint64_t id, uint64_t frame) {
  auto f = std::async(std::launch::async, [&] { return w.push(id, frame); });
  if (f.wait_for(5s) != std::future_status::ready) {
    ADD_FAILURE() << "push of present " << id << " blocked";
    std::abort();
  }
  return f.get();
}

TEST(PresentWaiterThreads, InOrderWithTheTimeTheWaitReturned) {
  Rig rig;
  for (uint64_t i = 1; i <= 5; ++i)
    ASSERT_EQ(bounded_push(rig.waiter, i, 100 + i), PresentWaiter::Push::queued);
  std::vector<int64_t> completed_at;
  for (uint64_t i = 1; i <= 5; ++i) {
    completed_at.push_back(rig.engine.complete(i));
    ASSERT_TRUE(rig.log.wait_for_count(i));
  }
  const auto items = rig.log.items();
  ASSERT_EQ(items.size(), 5u);
  for (size_t i = 0; i < items.size(); ++i) {
    EXPECT_EQ(items[i].frame, 101 + i);
    EXPECT_EQ(items[i].why, NoComplete::none);
    EXPECT_GE(items[i].ns, completed_at[i]) << "not before the present completed";
  }
}

TEST(PresentWaiterThreads, PushNeverWaitsForTheEngineAndAFullQueueDrops) {
  Rig rig(PresentWaiterDesc{.capacity = 4, .slice_ns = 1'000'000});
  // Nothing completes: the waiter sits in its Wait for present 1.
  for (uint64_t i = 1; i <= 4; ++i)
    EXPECT_EQ(bounded_push(rig.waiter, i, i), PresentWaiter::Push::queued);
  EXPECT_EQ(bounded_push(rig.waiter, 5, 5), PresentWaiter::Push::full);
  EXPECT_EQ(bounded_push(rig.waiter, 6, 6), PresentWaiter::Push::full);
  EXPECT_EQ(rig.waiter.dropped(), 2u);
  rig.engine.complete(2);  // 1 and 2 done, their slots free again
  ASSERT_TRUE(rig.log.wait_for_count(2));
  EXPECT_EQ(bounded_push(rig.waiter, 7, 7), PresentWaiter::Push::queued);
  rig.waiter.stop(NoComplete::retired);
  const auto items = rig.log.items();
  ASSERT_EQ(items.size(), 5u) << "1, 2 completed; 3, 4, 7 resolved by stop";
  const uint64_t frames[] = {1, 2, 3, 4, 7};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(items[i].frame, frames[i]);
    EXPECT_EQ(items[i].why, i < 2 ? NoComplete::none : NoComplete::retired);
    if (i >= 2) {
      EXPECT_EQ(items[i].ns, kNoTime);
    }
  }
}

TEST(PresentWaiterThreads, NoWaitOnceStopReturned) {
  Rig rig(PresentWaiterDesc{.capacity = 8, .slice_ns = 2'000'000});
  ASSERT_EQ(bounded_push(rig.waiter, 1, 1), PresentWaiter::Push::queued);
  while (rig.engine.calls() < 3) std::this_thread::sleep_for(1ms);  // in its Wait loop
  rig.waiter.stop(NoComplete::retired);
  const uint64_t calls = rig.engine.calls();
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(rig.engine.calls(), calls) << "a Wait after stop() returned";
  EXPECT_EQ(rig.waiter.push(2, 2), PresentWaiter::Push::stopped);
  rig.waiter.stop(NoComplete::late);  // a second stop does nothing
  const auto items = rig.log.items();
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].why, NoComplete::retired);
}

TEST(PresentWaiterThreads, AFailedWaitIsFailedAndTheNextGoesOn) {
  Rig rig;
  ASSERT_EQ(bounded_push(rig.waiter, 1, 1), PresentWaiter::Push::queued);
  ASSERT_EQ(bounded_push(rig.waiter, 2, 2), PresentWaiter::Push::queued);
  rig.engine.fail(1);
  ASSERT_TRUE(rig.log.wait_for_count(1));
  rig.engine.complete(2);
  ASSERT_TRUE(rig.log.wait_for_count(2));
  const auto items = rig.log.items();
  EXPECT_EQ(items[0].why, NoComplete::failed);
  EXPECT_EQ(items[0].ns, kNoTime);
  EXPECT_EQ(items[1].why, NoComplete::none);
}

// Pushers on several threads (serialised by the layer's caller in practice,
// not here), presents completing meanwhile, then stop: every queued present
// is resolved exactly once, and the drops account for the rest.
class PresentWaiterStress : public ::testing::TestWithParam<int> {};

TEST_P(PresentWaiterStress, EveryQueuedPresentResolvedOnce) {
  const int threads = GetParam();
  Rig rig(PresentWaiterDesc{.capacity = 8, .slice_ns = 500'000});
  std::atomic<uint64_t> next_id{1};
  std::atomic<uint64_t> queued{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pushers;
  for (int t = 0; t < threads; ++t) {
    pushers.emplace_back([&] {
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < 200; ++i) {
        const uint64_t id = next_id.fetch_add(1);
        if (rig.waiter.push(id, id) == PresentWaiter::Push::queued) queued.fetch_add(1);
        if (i % 16 == 0) rig.engine.complete(id);
      }
    });
  }
  go.store(true);
  for (auto& p : pushers) p.join();
  rig.waiter.stop(NoComplete::retired);
  const auto items = rig.log.items();
  EXPECT_EQ(items.size(), queued.load());
  EXPECT_EQ(queued.load() + rig.waiter.dropped(), static_cast<uint64_t>(threads) * 200);
  std::vector<int> seen(next_id.load() + 1, 0);
  for (const auto& r : items) ++seen[r.frame];
  for (size_t f = 0; f < seen.size(); ++f) ASSERT_LE(seen[f], 1) << "frame " << f;
}

INSTANTIATE_TEST_SUITE_P(Threads, PresentWaiterStress, ::testing::Values(2, 3, 8));

}  // namespace
}  // namespace latlab::capture
