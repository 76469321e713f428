// CUDA-specific pool behaviour on a real device (skips without one): stamps
// against cudaEvents, spin durations, write_timestamp errors. The contract
// itself is tests/conformance, run by timestamp_contract_cuda_test.cpp.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "cuda/cuda_test_util.hpp"
#include "latlab/bench/cuda_rig.hpp"
#include "latlab/cuda.hpp"
#include "latlab/host_clock.hpp"

namespace latlab {
namespace {

std::string uid(const std::string& name, uint64_t frame) {
  return "c:0:" + name + ":f" + std::to_string(frame);
}

// A timestamp query pool on its own CUDA slots (the test writes through `slots`).
struct CudaPool {
  std::shared_ptr<CudaTimestampSlots> slots;
  std::unique_ptr<TimestampQueryPool> pool;
  TimestampQueryPool* operator->() const { return pool.get(); }
  explicit operator bool() const { return pool != nullptr; }
};

CudaPool make_cuda_pool(const QueryPoolDesc& pool_desc, bool cross_check_events = true) {
  CudaPool p;
  auto slots = CudaTimestampSlots::create(
      {.count = pool_desc.max_queries, .device = 0, .cross_check_events = cross_check_events});
  EXPECT_TRUE(slots.ok()) << slots.error().message;
  if (!slots.ok()) return p;
  p.slots = slots.value();
  auto pool = TimestampQueryPool::create(p.slots, pool_desc);
  EXPECT_TRUE(pool.ok()) << pool.error().message;
  if (pool.ok()) p.pool = std::move(pool.value());
  return p;
}

class CudaPoolTest : public test::CudaStreamTest {
 protected:
  CudaPool make_pool(uint32_t max_queries) {
    return make_cuda_pool(QueryPoolDesc{.max_queries = max_queries, .kind = QueryKind::compute});
  }
  // begin stamp, spin `ns`, end stamp for an allocated uid.
  void time_spin(CudaPool& pool, uint32_t offset, int64_t ns) {
    ASSERT_TRUE(pool.slots->write_timestamp(stream_, offset).ok());
    ASSERT_TRUE(cuda_launch_spin(stream_, ns).ok());
    ASSERT_TRUE(pool.slots->write_timestamp(stream_, offset + 1).ok());
  }
};

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

// The smallest positive gap between distinct values: the quantum a clock
// reports in (cudaEventElapsedTime's float ms hides its tick).
double smallest_gap(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  double gap = 0;
  for (size_t i = 1; i < v.size(); ++i) {
    const double d = v[i] - v[i - 1];
    if (d > 0 && (gap == 0 || d < gap)) gap = d;
  }
  return gap;
}

// latlab's durations (stamp kernels) vs cudaEventElapsedTime of the events
// recorded right after each stamp, on distributions: kSamples spans per
// kernel size. The tolerance is measured here, not assumed: an empty stamp
// pair (nothing between the stamps) shows what the two ways disagree by with
// no work in between (each side's resolution: %globaltimer's update step,
// the event tick, and the jitter of the stamp kernel's tail that the event
// follows). A kernel in between must not add to that disagreement:
//  * median: |p50(diff) - p50(empty)| <= p90(empty) - p10(empty) + q + j,
//  * p90:    p90(|diff - p50(empty)|) <= p99(|empty - p50(empty)|) + q + j,
// with q = one %globaltimer step (measured: probe_globaltimer) + the event
// span's resolution: the larger of the smallest gap between event spans and
// the 0.5 us that CUDA documents for cudaEventElapsedTime; and j = 3.5 us,
// the stamp kernels' own tail jitter after a kernel, which an empty pair
// does not show: against CUPTI's record of the kernel between them, a stamp
// pair's span has p90 - p50 of 0.7 to 3.4 us (bench/cuda_timing on the
// H200, two runs, docs/cuda-timing.md); the events recorded after the
// stamps share most of it, not all (p90 |diff| reached 1.56 and 3.14 us on
// 5 ms spins, and in 1 of 5 repeats the whole 5 ms batch moved: median
// 1.70 us, where the other repeats gave at most 0.13 us).
// Everything runs on the legacy NULL stream: CUDA documents that events
// recorded in any other stream may time more than what lies between them
// (on a non-blocking stream the H200 once gave p90 +3.1 us on a 5 ms spin
// against 0.16 us on 1 ms spins of the same run). The GPU's own kernel
// records are the reference for the stamps' tails: CuptiObserverTest.
TEST_F(CudaPoolTest, DurationsAgreeWithCudaEvents) {
  constexpr int kSamples = 50;
  constexpr double kEventResolutionNs = 500;  // cudaEventElapsedTime's documented resolution
  const cudaStream_t null_stream = cudaStreamLegacy;
  auto probe = probe_globaltimer(0, 1000);
  ASSERT_TRUE(probe.ok()) << probe.error().message;
  ASSERT_GT(probe->steps, 0u);
  auto pool = make_pool(2 * kSamples);
  ASSERT_TRUE(pool);
  float* data = nullptr;
  const FrameWorkload work{.passes = 1, .complexity = 1, .width = 1024, .height = 1024};
  ASSERT_EQ(cudaMalloc(&data, sizeof(float) * work.width * work.height), cudaSuccess);
  // Warm-up, untimed (the first span after an idle GPU is slower).
  ASSERT_TRUE(cuda_launch_spin(null_stream, 200'000).ok());
  ASSERT_TRUE(cuda_launch_workload(null_stream, work, data).ok());
  ASSERT_EQ(cudaStreamSynchronize(null_stream), cudaSuccess);

  uint64_t frame = 0;
  // kSamples spans of `launch` between stamps; latlab - event per span (ns),
  // and the event spans (ns).
  auto measure = [&](const std::string& name, const std::function<void()>& launch,
                     std::vector<double>& diff, std::vector<double>& events) {
    for (int i = 0; i < kSamples; ++i) {
      ++frame;
      const std::string u = uid(name, frame);
      const auto off = pool->allocate_queries_for_context(u, frame);
      ASSERT_TRUE(off.has_value()) << name;
      ASSERT_TRUE(pool.slots->write_timestamp(null_stream, *off).ok());
      launch();
      ASSERT_TRUE(pool.slots->write_timestamp(null_stream, *off + 1).ok());
      ASSERT_EQ(cudaStreamSynchronize(null_stream), cudaSuccess);
      const auto span = pool.slots->event_elapsed(*off);
      ASSERT_EQ(span.status, QueryStatus::ok) << name;
      ASSERT_TRUE(pool->resolve_queries_async().is_ready());
      const TimestampResult r = pool->timestamp(u);
      ASSERT_EQ(r.status, QueryStatus::ok) << name;
      diff.push_back(static_cast<double>(r.duration_ns) - span.ms * 1e6);
      events.push_back(span.ms * 1e6);
    }
  };
  std::vector<double> empty;
  std::vector<double> empty_events;
  measure(
      "empty", [] {}, empty, empty_events);
  ASSERT_FALSE(HasFatalFailure());
  const double q = static_cast<double>(probe->median_step_ns) +
                   std::max(smallest_gap(empty_events), kEventResolutionNs);
  const double e50 = percentile(empty, 0.5);
  std::vector<double> empty_dev;
  for (double e : empty) empty_dev.push_back(std::abs(e - e50));
  constexpr double kStampTailJitterNs = 3500;
  const double median_tol =
      percentile(empty, 0.9) - percentile(empty, 0.1) + q + kStampTailJitterNs;
  const double p90_tol = percentile(empty_dev, 0.99) + q + kStampTailJitterNs;
  std::printf(
      "empty pair: latlab - event p10 %.1f p50 %.1f p90 %.1f ns; q %.1f ns "
      "(globaltimer step %llu ns); tolerance median %.1f ns, p90 %.1f ns\n",
      percentile(empty, 0.1), e50, percentile(empty, 0.9), q,
      static_cast<unsigned long long>(probe->median_step_ns), median_tol, p90_tol);

  struct Size {
    std::string name;
    std::function<void()> launch;
  };
  std::vector<Size> sizes;
  for (int64_t ns : {50'000, 200'000, 1'000'000, 5'000'000}) {
    sizes.push_back({"spin" + std::to_string(ns / 1000) + "us",
                     [null_stream, ns] { ASSERT_TRUE(cuda_launch_spin(null_stream, ns).ok()); }});
  }
  for (uint32_t complexity : {64u, 512u, 4096u}) {
    sizes.push_back({"work_c" + std::to_string(complexity), [null_stream, complexity, work, data] {
                       FrameWorkload w = work;
                       w.complexity = complexity;
                       ASSERT_TRUE(cuda_launch_workload(null_stream, w, data).ok());
                     }});
  }
  for (const auto& size : sizes) {
    std::vector<double> diff;
    std::vector<double> events;
    measure(size.name, size.launch, diff, events);
    ASSERT_FALSE(HasFatalFailure());
    std::vector<double> dev;
    for (double d : diff) dev.push_back(std::abs(d - e50));
    const double d50 = percentile(diff, 0.5);
    const double dev90 = percentile(dev, 0.9);
    std::printf(
        "%-10s event p50 %10.3f us  latlab - event p50 %+8.1f p90 %+8.1f max %+8.1f ns; "
        "p90 |diff - empty p50| %.1f ns\n",
        size.name.c_str(), percentile(events, 0.5) / 1e3, d50, percentile(diff, 0.9),
        percentile(diff, 1.0), dev90);
    EXPECT_LE(std::abs(d50 - e50), median_tol) << size.name;
    EXPECT_LE(dev90, p90_tol) << size.name;
  }
  EXPECT_EQ(cudaFree(data), cudaSuccess);
}

TEST_F(CudaPoolTest, SpinDurationIsMeasured) {
  auto pool = make_pool(8);
  ASSERT_TRUE(pool);
  const auto off = pool->allocate_queries_for_context(uid("spin", 1), 1);
  ASSERT_TRUE(off.has_value());
  time_spin(pool, *off, 1'000'000);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  ASSERT_TRUE(pool->resolve_queries_async().is_ready());
  const TimestampResult r = pool->timestamp(uid("spin", 1));
  ASSERT_EQ(r.status, QueryStatus::ok);
  EXPECT_GE(r.duration_ns, 1'000'000);
  EXPECT_LT(r.duration_ns, 1'000'000 + 200'000);  // a stamp costs microseconds, not 200
  EXPECT_LT(r.begin_ticks, r.end_ticks);
}

TEST_F(CudaPoolTest, WriteTimestampRefusesBadQueries) {
  auto pool = make_pool(4);
  ASSERT_TRUE(pool);
  auto out_of_range = pool.slots->write_timestamp(stream_, 4);
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_NE(out_of_range.error().message.find("out of range"), std::string::npos);
  auto never_allocated = pool.slots->write_timestamp(stream_, 0);
  ASSERT_FALSE(never_allocated.ok());
  EXPECT_NE(never_allocated.error().message.find("never allocated"), std::string::npos);
}

TEST_F(CudaPoolTest, EventCrossCheckIsMissingWhenOff) {
  auto pool = make_cuda_pool(QueryPoolDesc{.max_queries = 4, .kind = QueryKind::compute}, false);
  ASSERT_TRUE(pool);
  const auto off = pool->allocate_queries_for_context(uid("a", 1), 1);
  ASSERT_TRUE(off.has_value());
  ASSERT_TRUE(pool.slots->write_timestamp(stream_, *off).ok());
  ASSERT_TRUE(pool.slots->write_timestamp(stream_, *off + 1).ok());
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  EXPECT_EQ(pool.slots->event_elapsed(*off).status, QueryStatus::missing);
  EXPECT_TRUE(pool->resolve_queries_async().is_ready());
  EXPECT_EQ(pool->timestamp(uid("a", 1)).status, QueryStatus::ok);
}

}  // namespace
}  // namespace latlab
