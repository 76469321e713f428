// The span budget (src/capture/span_budget.hpp) as the Vulkan layer's
// submit path shares it between a program's threads (take_shared): each
// thread reads its time before the threads meet at the budget's lock, so
// times come in out of order, and a present on another thread advances the
// frame while submissions race it. Times are a shared counter each
// submission advances (not the clock), so the budget's share is known
// whatever the machine's speed. Run under TSan in CI (label threads).
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "capture/span_budget.hpp"

namespace latlab::capture {
namespace {

constexpr double kShare = 0.02;
constexpr int64_t kProbeNs = 20'000;
constexpr int64_t kSubmitNs = 50'000;  // each submission advances the time this much

struct Device {
  SpanBudget budget{kShare, kProbeNs, 0};
  std::mutex mu;
  std::atomic<uint64_t> frame{0};
  std::atomic<int64_t> time{0};
};

// `threads` program threads, `per_thread` submissions each; with `present`,
// one more thread presents (advances the frame) every `per_frame`
// submissions, the submitters running at most half a frame ahead of it.
// Returns each submission's decision.
std::vector<SpanTake> submit_from_threads(Device& d, int threads, int per_thread, bool present,
                                          int per_frame = 12) {
  std::vector<std::vector<SpanTake>> taken(static_cast<size_t>(threads));
  std::atomic<int> submitted{0};
  std::atomic<bool> done{false};
  std::barrier start(threads + 1);
  std::thread presenter([&] {
    start.arrive_and_wait();
    int next = per_frame;
    while (present && !done.load()) {
      if (submitted.load() < next) {
        std::this_thread::yield();
        continue;
      }
      d.frame.fetch_add(1);
      next += per_frame;
    }
  });
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < per_thread; ++i) {
        // At most half a frame past the present that is due: submissions
        // race the presents, and the presenter keeps up on any machine.
        const auto ahead = [&] {
          return submitted.load() >=
                 static_cast<int>(d.frame.load() + 1) * per_frame + per_frame / 2;
        };
        while (present && ahead()) std::this_thread::yield();
        const int64_t enter = d.time.fetch_add(kSubmitNs);
        taken[static_cast<size_t>(t)].push_back(take_shared(d.budget, d.mu, d.frame, enter));
        submitted.fetch_add(1);
      }
    });
  }
  for (auto& th : pool) th.join();
  done = true;
  presenter.join();
  std::vector<SpanTake> all;
  for (auto& v : taken) all.insert(all.end(), v.begin(), v.end());
  return all;
}

int64_t timed_count(const std::vector<SpanTake>& taken) {
  int64_t n = 0;
  for (const SpanTake& t : taken) n += t.timed ? 1 : 0;
  return n;
}

class SpanBudgetThreads : public ::testing::TestWithParam<int> {};

TEST_P(SpanBudgetThreads, SubmissionsBeforeAPresentStayWithinTheShare) {
  Device d;
  const auto taken = submit_from_threads(d, GetParam(), 20'000, false);
  // The spans may cost kShare of the time, plus the bucket's burst, plus
  // the most it may go below zero: each burst at the dearest price.
  const double time = static_cast<double>(d.time.load());
  const double burst = static_cast<double>(kProbeNs) * SpanBudget::kMaxPriceOverProbe *
                       static_cast<double>(SpanBudget::kBurstSpans);
  const double spans_cost = static_cast<double>(timed_count(taken) * kProbeNs);
  EXPECT_LE(spans_cost, kShare * time + 2 * burst);
  // ... and out-of-order times do not starve it.
  EXPECT_GE(spans_cost, 0.5 * kShare * time);
}

TEST_P(SpanBudgetThreads, AFrameIsTimedWholeWhilePresentsRaceItsSubmissions) {
  Device d;
  const auto taken = submit_from_threads(d, GetParam(), 50'000, true);
  std::map<uint64_t, std::pair<int, int>> by_frame;  // frame: timed, untimed
  for (const SpanTake& t : taken) {
    if (t.frame == 0) continue;  // before the first present: blocks
    auto& [timed, untimed] = by_frame[t.frame];
    ++(t.timed ? timed : untimed);
  }
  int timed_frames = 0;
  int mixed = 0;
  for (const auto& [frame, n] : by_frame) {
    if (n.first > 0 && n.second > 0) ++mixed;
    if (n.first > 0) ++timed_frames;
  }
  EXPECT_EQ(mixed, 0) << "frames with timed and untimed submissions, of " << by_frame.size();
  // Enough frames of each kind for that to mean something.
  EXPECT_GE(by_frame.size(), 100u);
  EXPECT_GE(timed_frames, 10);
  EXPECT_LT(timed_frames, static_cast<int>(by_frame.size()) / 2);
}

INSTANTIATE_TEST_SUITE_P(Threads, SpanBudgetThreads, ::testing::Values(3, 8));

}  // namespace
}  // namespace latlab::capture
