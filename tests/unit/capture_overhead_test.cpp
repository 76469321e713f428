// What capture reports it cost the program (src/capture/capture_overhead.hpp,
// src/capture/thread_cpu.hpp): the CPU of latlab's threads, per frame, with the
// bracketing probe's estimate for the driver, and every missing span's
// reason on the console.
#include "capture/capture_overhead.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "capture/thread_cpu.hpp"

namespace latlab::capture {
namespace {

int64_t thread_cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Burns `ns` of its own CPU under `name`, then waits for `release`.
void burn(const char* name, int64_t ns, std::atomic<int>& ready, std::atomic<bool>& release) {
  pthread_setname_np(pthread_self(), name);
  const int64_t t0 = thread_cpu_now();
  volatile uint64_t x = 0;
  while (thread_cpu_now() - t0 < ns) x = x + 1;
  ++ready;
  while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

TEST(LatlabThreadsCpu, CountsThreadsNamedLatlabOnlyAndKeepsThemAfterExit) {
  std::atomic<int> ready{0};
  std::atomic<bool> release{false};
  LatlabThreadsCpu cpu;
  const int64_t before = cpu.sample();
  std::thread ours(burn, "latlab-test", 30'000'000, std::ref(ready), std::ref(release));
  std::thread theirs(burn, "program-work", 60'000'000, std::ref(ready), std::ref(release));
  while (ready < 2) std::this_thread::yield();
  const int64_t during = cpu.sample() - before;
  EXPECT_GE(during, 30'000'000);
  EXPECT_LT(during, 50'000'000) << "the program's own thread (60 ms) is not latlab's";
  EXPECT_EQ(cpu.threads(), 1u);
  release = true;
  ours.join();
  theirs.join();
  EXPECT_GE(cpu.sample() - before, during) << "an exited thread keeps its last figure";
}

TEST(CaptureCost, PerFrameFiguresAddTheCallsTheThreadsAndTheProbesEstimate) {
  CaptureSummary s;
  s.frame_count = 10;
  s.has_cost = true;
  s.latlab_threads_cpu_ns = 200'000;  // 20 us a frame
  s.latlab_threads = 2;
  s.bracketed = 20;
  const std::vector<double> submit_us{1.0, 1.0, 2.0, 4.0};
  const std::vector<double> present_us{2.0, 2.0};
  s.submit_figures[static_cast<size_t>(SubmitFigure::layer_cpu)] = summarize(submit_us);
  s.frame_figures[static_cast<size_t>(FrameFigure::layer_present_cpu)] = summarize(present_us);
  CapturedBracket b;
  b.record.cpu_plain_p50_ns = 10'000;
  b.record.cpu_bracketed_p50_ns = 60'000;  // 50 us a submission
  b.record.before_p50_ns = 4'000;
  b.record.after_p50_ns = 6'000;  // 10 us of device time a submission
  const CaptureOverhead o = overhead_of(s, {b});
  ASSERT_TRUE(o.threads_cpu_per_frame_us && o.layer_cpu_per_frame_us && o.driver_cpu_per_frame_us);
  EXPECT_DOUBLE_EQ(*o.threads_cpu_per_frame_us, 20.0);
  EXPECT_DOUBLE_EQ(*o.layer_cpu_per_frame_us, 20.0 + (8.0 + 4.0) / 10);
  EXPECT_DOUBLE_EQ(*o.driver_cpu_per_frame_us, 50.0 * 20 / 10);
  EXPECT_DOUBLE_EQ(*o.layer_cpu_us, 200.0 + 8.0 + 4.0);
  EXPECT_DOUBLE_EQ(*o.driver_cpu_us, 50.0 * 20);
  ASSERT_TRUE(o.gpu_per_frame_us && o.gpu_us);
  EXPECT_DOUBLE_EQ(*o.gpu_per_frame_us, 10.0 * 20 / 10);
  EXPECT_DOUBLE_EQ(*o.gpu_us, 10.0 * 20);
  EXPECT_EQ(o.threads, 2u);
}

TEST(CaptureCost, NoFrameGivesTotalsOnlyAndNoCostRecordNothing) {
  CaptureSummary s;
  s.has_cost = true;
  EXPECT_FALSE(overhead_of(s, {}).layer_cpu_per_frame_us) << "no frame";
  EXPECT_TRUE(overhead_of(s, {}).layer_cpu_us) << "the totals need no frame";
  s.frame_count = 3;
  s.has_cost = false;
  EXPECT_FALSE(overhead_of(s, {}).threads_cpu_per_frame_us) << "no CostRecord";
  EXPECT_FALSE(overhead_of(s, {}).layer_cpu_us) << "no CostRecord";
}

TEST(CaptureCost, MissingSpansAreListedWithTheirReasons) {
  CaptureSummary s;
  EXPECT_EQ(missing_span_reasons(s), "");
  s.no_span_counts[static_cast<size_t>(NoSpan::none)] = 100;
  s.no_span_counts[static_cast<size_t>(NoSpan::no_work)] = 5;
  s.no_span_counts[static_cast<size_t>(NoSpan::ring_full)] = 140;
  s.no_span_counts[static_cast<size_t>(NoSpan::not_read)] = 2;
  EXPECT_EQ(missing_span_reasons(s), "ring_full 140, not_read 2");
}

}  // namespace
}  // namespace latlab::capture
