// The timestamp query pool contract on a real CUDA device (skips without one).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "cuda/cuda_test_util.hpp"
#include "latlab/cuda.hpp"
#include "latlab/host_clock.hpp"

namespace latlab {
namespace {

std::string uid(const std::string& name, uint64_t frame) {
  return "c:0:" + name + ":f" + std::to_string(frame);
}

// A seed-000 pool on its own CUDA slots (the test writes through `slots`).
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

TEST_F(CudaPoolTest, DurationsAgreeWithCudaEvents) {
  auto probe = probe_globaltimer(0, 1000);
  ASSERT_TRUE(probe.ok()) << probe.error().message;
  ASSERT_GT(probe->steps, 0u);
  // 1 us (the target) plus the quantisation of the two %globaltimer reads.
  const double per_sample_tolerance_ns = 1000.0 + 2.0 * static_cast<double>(probe->median_step_ns);
  const double median_tolerance_ns = 500.0 + static_cast<double>(probe->median_step_ns);

  auto pool = make_pool(128);
  ASSERT_TRUE(pool);
  float* data = nullptr;
  const FrameWorkload work{.passes = 1, .complexity = 1, .width = 1024, .height = 1024};
  ASSERT_EQ(cudaMalloc(&data, sizeof(float) * work.width * work.height), cudaSuccess);

  struct Case {
    std::string name;
    uint32_t offset;
  };
  std::vector<Case> cases;
  const uint64_t frame = 1;
  // Warm-up, untimed: on the H200 the first measured span after an idle GPU
  // differed from its event by 1.8 us (every later one by < 0.8 us).
  ASSERT_TRUE(cuda_launch_spin(stream_, 200'000).ok());
  ASSERT_TRUE(cuda_launch_workload(stream_, work, data).ok());
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  for (int rep = 0; rep < 3; ++rep) {
    for (int64_t ns : {50'000, 200'000, 1'000'000, 5'000'000}) {
      const std::string u = uid("spin" + std::to_string(ns) + "_" + std::to_string(rep), frame);
      const auto off = pool->allocate_queries_for_context(u, frame);
      ASSERT_TRUE(off.has_value());
      time_spin(pool, *off, ns);
      cases.push_back({u, *off});
    }
    for (uint32_t complexity : {64u, 512u, 4096u}) {
      const std::string u =
          uid("work" + std::to_string(complexity) + "_" + std::to_string(rep), frame);
      const auto off = pool->allocate_queries_for_context(u, frame);
      ASSERT_TRUE(off.has_value());
      ASSERT_TRUE(pool.slots->write_timestamp(stream_, *off).ok());
      FrameWorkload w = work;
      w.complexity = complexity;
      ASSERT_TRUE(cuda_launch_workload(stream_, w, data).ok());
      ASSERT_TRUE(pool.slots->write_timestamp(stream_, *off + 1).ok());
      cases.push_back({u, *off});
    }
  }
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);

  // Events first: their slots are intact until the next write into them.
  std::vector<double> event_ns;
  for (const auto& c : cases) {
    const auto span = pool.slots->event_elapsed(c.offset);
    ASSERT_EQ(span.status, QueryStatus::ok) << c.name;
    event_ns.push_back(span.ms * 1e6);
  }
  const auto ticket = pool->resolve_queries_async();
  ASSERT_TRUE(ticket.is_ready());
  EXPECT_EQ(ticket.summary().resolved_ok, cases.size());

  std::vector<double> abs_diff;
  for (size_t i = 0; i < cases.size(); ++i) {
    const TimestampResult r = pool->timestamp(cases[i].name);
    ASSERT_EQ(r.status, QueryStatus::ok) << cases[i].name;
    const double diff = static_cast<double>(r.duration_ns) - event_ns[i];
    std::printf("%-24s latlab %12.3f us  cudaEvent %12.3f us  diff %+8.3f us\n",
                cases[i].name.c_str(), static_cast<double>(r.duration_ns) / 1e3, event_ns[i] / 1e3,
                diff / 1e3);
    EXPECT_LE(std::abs(diff), per_sample_tolerance_ns) << cases[i].name;
    abs_diff.push_back(std::abs(diff));
  }
  std::sort(abs_diff.begin(), abs_diff.end());
  const double median = abs_diff[abs_diff.size() / 2];
  std::printf("globaltimer median step %llu ns; median |diff| %.1f ns\n",
              static_cast<unsigned long long>(probe->median_step_ns), median);
  EXPECT_LE(median, median_tolerance_ns);
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

TEST_F(CudaPoolTest, NotReadyBeforeTheStreamRunsOkAfter) {
  auto gate = CudaStreamGate::create(0);
  ASSERT_TRUE(gate.ok()) << gate.error().message;
  auto pool = make_pool(8);
  ASSERT_TRUE(pool);
  ASSERT_TRUE((*gate)->hold(stream_).ok());
  const std::string u = uid("held", 1);
  const auto off = pool->allocate_queries_for_context(u, 1);
  ASSERT_TRUE(off.has_value());
  time_spin(pool, *off, 50'000);

  const auto pending = pool->resolve_queries_async();
  EXPECT_FALSE(pending.is_ready());
  EXPECT_EQ(pool->timestamp(u).status, QueryStatus::not_ready);
  EXPECT_FALSE(pool->has_timestamp_query(u));
  EXPECT_EQ(pool.slots->event_elapsed(*off).status, QueryStatus::not_ready);

  (*gate)->open();
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  const auto done = pool->resolve_queries_async();
  EXPECT_TRUE(done.is_ready());
  EXPECT_TRUE(done.same_as(pending));
  EXPECT_EQ(pool->timestamp(u).status, QueryStatus::ok);
  EXPECT_GE(pool->timestamp(u).duration_ns, 50'000);
}

TEST_F(CudaPoolTest, OverflowWhileWorkIsQueuedLosesNoResult) {
  auto gate = CudaStreamGate::create(0);
  ASSERT_TRUE(gate.ok()) << gate.error().message;
  auto pool = make_pool(4);  // two pairs
  ASSERT_TRUE(pool);
  ASSERT_TRUE((*gate)->hold(stream_).ok());
  for (const char* name : {"a", "b"}) {
    const auto off = pool->allocate_queries_for_context(uid(name, 1), 1);
    ASSERT_TRUE(off.has_value()) << name;
    time_spin(pool, *off, 50'000);
  }
  EXPECT_FALSE(pool->allocate_queries_for_context(uid("c", 1), 1).has_value());
  EXPECT_EQ(pool->timestamp(uid("c", 1)).status, QueryStatus::overflowed);
  EXPECT_EQ(pool->overflow_count(), 1u);

  (*gate)->open();
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  EXPECT_TRUE(pool->resolve_queries_async().is_ready());
  EXPECT_EQ(pool->timestamp(uid("a", 1)).status, QueryStatus::ok);
  EXPECT_EQ(pool->timestamp(uid("b", 1)).status, QueryStatus::ok);
}

TEST_F(CudaPoolTest, FullPoolFreesWrittenPairsWithoutLosingThem) {
  auto pool = make_pool(4);
  ASSERT_TRUE(pool);
  for (const char* name : {"a", "b"}) {
    const auto off = pool->allocate_queries_for_context(uid(name, 1), 1);
    ASSERT_TRUE(off.has_value()) << name;
    time_spin(pool, *off, 50'000);
  }
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  // Full: allocation reads what was written, frees it, and succeeds.
  EXPECT_TRUE(pool->allocate_queries_for_context(uid("c", 2), 2).has_value());
  EXPECT_EQ(pool->timestamp(uid("a", 1)).status, QueryStatus::ok);
  EXPECT_EQ(pool->timestamp(uid("b", 1)).status, QueryStatus::ok);
  EXPECT_EQ(pool->overflow_count(), 0u);
}

TEST_F(CudaPoolTest, LateWriteIntoReusedSlotIsInvalid) {
  auto gate = CudaStreamGate::create(0);
  ASSERT_TRUE(gate.ok()) << gate.error().message;
  auto pool = make_pool(2);  // one pair: reuse is certain
  ASSERT_TRUE(pool);
  ASSERT_TRUE((*gate)->hold(stream_).ok());
  const auto first = pool->allocate_queries_for_context(uid("old", 1), 1);
  ASSERT_TRUE(first.has_value());
  time_spin(pool, *first, 10'000);  // queued behind the gate
  pool->retire_frame(1);             // the owner gives frame 1 up: its stamps have not landed
  EXPECT_EQ(pool->timestamp(uid("old", 1)).status, QueryStatus::invalid);

  const auto second = pool->allocate_queries_for_context(uid("new", 2), 2);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(*second, *first);
  (*gate)->open();  // frame 1's stamps now land in the reused slot
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  EXPECT_TRUE(pool->resolve_queries_async().is_ready());
  EXPECT_EQ(pool->timestamp(uid("new", 2)).status, QueryStatus::invalid);
  EXPECT_EQ(pool->late_result_count(), 1u);
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

TEST_F(CudaPoolTest, DisposeWaitsForQueuedStamps) {
  auto gate = CudaStreamGate::create(0);
  ASSERT_TRUE(gate.ok()) << gate.error().message;
  auto pool = make_pool(4);
  ASSERT_TRUE(pool);
  ASSERT_TRUE((*gate)->hold(stream_).ok());
  const auto off = pool->allocate_queries_for_context(uid("a", 1), 1);
  ASSERT_TRUE(off.has_value());
  time_spin(pool, *off, 10'000);
  std::thread opener([&gate] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    (*gate)->open();
  });
  pool.slots.reset();  // the pool holds the last reference: disposing it destroys the slots
  const int64_t t0 = host_now_ns();
  pool->dispose();  // must not free the slots while the stamps are queued
  const int64_t waited = host_now_ns() - t0;
  opener.join();
  EXPECT_GE(waited, 40'000'000);
  EXPECT_TRUE(pool->is_disposed());
}

}  // namespace
}  // namespace latlab
