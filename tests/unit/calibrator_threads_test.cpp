// The calibrator's refresh thread with concurrent readers of fit() (runs
// under TSan). No timed assertions: waits are bounded only to turn a hang
// into a failure.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "latlab/bench/sim.hpp"
#include "latlab/calibrator.hpp"
#include "latlab/host_clock.hpp"

namespace latlab {
namespace {

// Wraps a SimClock source and lets the test wait for N source calls.
struct CountingSource {
  explicit CountingSource(SimClock& c) : clock(c) {}
  SimClock& clock;
  std::mutex mu;
  std::condition_variable cv;
  uint64_t calls = 0;

  Calibrator::Source source() {
    return [this] {
      Result<CalibrationPair> p = clock.sample();
      {
        std::lock_guard lock(mu);
        ++calls;
      }
      cv.notify_all();
      return p;
    };
  }
  // False if `n` calls did not happen within a minute (a hang, not a timing).
  bool wait_for_calls(uint64_t n) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::minutes(1), [&] { return calls >= n; });
  }
};

TEST(CalibratorThreads, PeriodicRefreshWithConcurrentReaders) {
  SimClock clock(SimClockDesc{
      .ticks = TickFormat{.valid_bits = 36}, .offset_ns = -1'000'000'000, .drift_ppm = 40.0});
  CountingSource counting{clock};
  Calibrator cal(
      counting.source(), clock.ticks(),
      CalibratorDesc{.samples_per_refresh = 4, .refresh_interval_ns = 200'000});  // 0.2 ms
  ASSERT_TRUE(cal.calibrate_now());
  cal.start_periodic();
  cal.start_periodic();  // idempotent

  std::atomic<bool> done{false};
  std::atomic<uint64_t> reads{0}, out_of_bound{0}, null_fits{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      while (!done.load()) {
        const auto fit = cal.fit();
        if (!fit) {
          null_fits.fetch_add(1);
          continue;
        }
        const int64_t t = host_now_ns();
        const uint64_t tick = clock.device_ticks_at(t);
        const MappedTime m = fit->map(tick);
        if (std::llabs(m.host_ns - clock.true_host_ns(tick, t)) > m.error_ns)
          out_of_bound.fetch_add(1);
        (void)cal.stats();
        reads.fetch_add(1);
        std::this_thread::yield();
      }
    });
  }
  ASSERT_TRUE(counting.wait_for_calls(4 * 40)) << "the refresh thread stalled";
  ASSERT_TRUE(cal.calibrate_now());  // concurrent with the thread: serialised
  done = true;
  for (auto& t : readers) t.join();
  cal.stop();
  cal.stop();  // idempotent

  const CalibratorStats st = cal.stats();
  EXPECT_GE(st.refreshes, 40u);
  EXPECT_EQ(st.failed_refreshes + st.refreshes, st.source_calls / 4);
  EXPECT_GT(reads.load(), 0u);
  EXPECT_EQ(null_fits.load(), 0u);  // published before the readers started
  EXPECT_EQ(out_of_bound.load(), 0u);
  EXPECT_EQ(cal.accepted_pairs().size(), st.refreshes);
}

TEST(CalibratorThreads, RestartsAfterStop) {
  SimClock clock(SimClockDesc{.drift_ppm = -5.0});
  CountingSource counting{clock};
  Calibrator cal(counting.source(), clock.ticks(),
                 CalibratorDesc{.samples_per_refresh = 1, .refresh_interval_ns = 100'000});
  cal.start_periodic();
  ASSERT_TRUE(counting.wait_for_calls(5));
  cal.stop();
  const uint64_t n = counting.calls;  // thread joined: no race
  cal.start_periodic();
  ASSERT_TRUE(counting.wait_for_calls(n + 5));
  // Destructor stops and joins.
}

TEST(CalibratorThreads, FailingSourceNeverWedgesTheThread) {
  SimClock clock(SimClockDesc{});
  clock.set_failing(true);
  CountingSource counting{clock};
  Calibrator cal(
      counting.source(), clock.ticks(),
      CalibratorDesc{.samples_per_refresh = 2, .max_tries = 3, .refresh_interval_ns = 100'000});
  cal.start_periodic();
  ASSERT_TRUE(counting.wait_for_calls(3 * 10));
  cal.stop();
  const CalibratorStats st = cal.stats();
  EXPECT_GE(st.failed_refreshes, 10u);
  EXPECT_EQ(st.refreshes, 0u);
  EXPECT_EQ(st.source_calls, 3 * st.failed_refreshes);
  EXPECT_EQ(cal.fit(), nullptr);
}

}  // namespace
}  // namespace latlab
