// The bookkeeping diagnostic: how much of latlab's own work (clock refresh
// windows) falls inside a frame's path, and the calibrator's windows.
#include <gtest/gtest.h>

#include <vector>

#include "latlab/bench/latency_run.hpp"
#include "latlab/bench/sim.hpp"
#include "latlab/calibrator.hpp"
#include "latlab/host_clock.hpp"

namespace latlab {
namespace {

// A frame signalled at `signal` whose fence woke at `wake`.
FrameRecord frame(int64_t signal, int64_t wake) {
  FrameRecord f;
  f.signal_ns = signal;
  f.set(Marker::signal);
  f.submit_end_ns = signal + 10;
  f.set(Marker::submit_end);
  f.fence_wake_ns = wake;
  f.set(Marker::fence_wake);
  return f;
}

TEST(Bookkeeping, OverlapIsTheSpansTimeInsideTheFramesPath) {
  const std::vector<BookkeepingSpan> spans = {
      {100, 200}, {900, 1'100}, {1'500, 1'600}, {3'000, 3'100}};
  EXPECT_EQ(bookkeeping_overlap_ns(frame(1'000, 1'550), spans),
            100 + 50);  // tail of one, head of the next
  EXPECT_EQ(bookkeeping_overlap_ns(frame(1'520, 1'540), spans), 20);  // inside one span
  EXPECT_EQ(bookkeeping_overlap_ns(frame(0, 5'000), spans), 100 + 200 + 100 + 100);
  EXPECT_EQ(bookkeeping_overlap_ns(frame(1'200, 1'400), spans), 0);  // between spans
  EXPECT_EQ(bookkeeping_overlap_ns(frame(200, 300), spans), 0);      // touching is not overlapping
  EXPECT_EQ(bookkeeping_overlap_ns(frame(1'000, 1'550), {}), 0);
}

TEST(Bookkeeping, ThePathEndsAtItsLastCompletionMarker) {
  const std::vector<BookkeepingSpan> spans = {{2'000, 2'500}};
  FrameRecord f = frame(1'000, 1'500);
  EXPECT_EQ(bookkeeping_overlap_ns(f, spans), 0);
  f.poll_wake_ns = 2'100;  // the poller saw completion later than the fence wake
  f.set(Marker::poll_wake);
  EXPECT_EQ(bookkeeping_overlap_ns(f, spans), 100);
  f.gpu_end_host_ns = 2'300;
  f.set(Marker::gpu_end_host);
  EXPECT_EQ(bookkeeping_overlap_ns(f, spans), 300);
}

TEST(Bookkeeping, AFrameWithoutASignalOrAnEndHasNoValue) {
  const std::vector<BookkeepingSpan> spans = {{0, 10'000}};
  FrameRecord no_signal = frame(1'000, 2'000);
  no_signal.present = 0;
  no_signal.set(Marker::fence_wake);
  EXPECT_EQ(bookkeeping_overlap_ns(no_signal, spans), std::nullopt);
  FrameRecord signal_only;
  signal_only.signal_ns = 1'000;
  signal_only.set(Marker::signal);
  EXPECT_EQ(bookkeeping_overlap_ns(signal_only, spans), std::nullopt);
}

// Each refresh leaves its window on the host clock, failed ones too, the
// newest kept_pairs of them.
TEST(Bookkeeping, TheCalibratorKeepsEveryRefreshsWindow) {
  int calls = 0;
  Calibrator cal(
      [&]() -> Result<CalibrationPair> {
        ++calls;
        if (calls > 2) return make_error("scripted failure");
        const int64_t t = host_now_ns();
        return CalibrationPair{
            .device_ticks = static_cast<uint64_t>(t), .host_ns = t, .max_deviation_ns = 100};
      },
      TickFormat{}, CalibratorDesc{.samples_per_refresh = 1, .max_tries = 1, .kept_pairs = 3});
  const int64_t before = host_now_ns();
  for (int i = 0; i < 4; ++i) (void)cal.calibrate_now();
  const std::vector<RefreshWindow> w = cal.refresh_windows();
  ASSERT_EQ(w.size(), 3u);  // the newest 3 of 4
  EXPECT_TRUE(w[0].ok);     // the second refresh
  EXPECT_FALSE(w[1].ok);
  EXPECT_FALSE(w[2].ok);
  for (size_t i = 0; i < w.size(); ++i) {
    EXPECT_GE(w[i].start_ns, before);
    EXPECT_LE(w[i].start_ns, w[i].end_ns);
    EXPECT_FALSE(w[i].periodic);
    if (i > 0) {
      EXPECT_GE(w[i].start_ns, w[i - 1].end_ns);
    }
  }
}

}  // namespace
}  // namespace latlab
