// The GPU profiler on CUDA streams (create_cuda_profiler): nested zones
// around real kernels, a zone's duration against a known spin, several
// recording threads with their own streams, frames in flight. Skips without
// a CUDA device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <latch>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "cuda/cuda_test_util.hpp"
#include "latlab/bench/cuda_rig.hpp"
#include "latlab/cuda.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_cuda.hpp"

namespace latlab {
namespace {

constexpr uint32_t kSide = 256;  // workload: 256x256 elements

const ProfilerZone* find(const ProfilerFrame& f, std::string_view name) {
  for (const auto& z : f.zones) {
    if (z.name == name) return &z;
  }
  return nullptr;
}

// Every zone ok, and each child's ticks within its parent's.
void expect_nested_within_parents(const ProfilerFrame& f) {
  for (const auto& z : f.zones) {
    EXPECT_EQ(z.status, QueryStatus::ok) << z.name;
    if (z.parent == kNoZone) continue;
    const ProfilerZone& p = f.zones[z.parent];
    EXPECT_EQ(z.thread, p.thread) << z.name;
    EXPECT_GE(z.begin_ticks, p.begin_ticks) << z.name << " in " << p.name;
    EXPECT_LE(z.end_ticks, p.end_ticks) << z.name << " in " << p.name;
  }
}

class ProfilerCudaTest : public test::CudaStreamTest {
 protected:
  void make(GpuProfilerDesc desc = {.max_zones_per_frame = 64}) {
    auto p = create_cuda_profiler(0, desc);
    ASSERT_TRUE(p.ok()) << p.error().message;
    prof_ = std::move(p.value());
    ASSERT_EQ(cudaMalloc(&data_, sizeof(float) * kSide * kSide), cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(data_, 0, sizeof(float) * kSide * kSide, stream_), cudaSuccess);
  }
  void TearDown() override {
    if (stream_) {
      EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    }
    prof_.reset();  // would wait for queued stamps itself; the stream is idle anyway
    if (data_) {
      EXPECT_EQ(cudaFree(data_), cudaSuccess);
    }
    test::CudaStreamTest::TearDown();
  }
  void pass(cudaStream_t s, uint32_t complexity) {
    const FrameWorkload w{.passes = 1, .complexity = complexity, .width = kSide, .height = kSide};
    ASSERT_TRUE(cuda_launch_workload(s, w, data_).ok());
  }
  // latlab profile's reference frame: frame{simulate, lighting{direct, indirect}}.
  void record_frame(cudaStream_t s) {
    LATLAB_GPU_ZONE(prof_, s, "frame");
    {
      LATLAB_GPU_ZONE(prof_, s, "simulate");
      pass(s, 64);
    }
    {
      LATLAB_GPU_ZONE(prof_, s, "lighting");
      {
        LATLAB_GPU_ZONE(prof_, s, "direct");
        pass(s, 128);
      }
      {
        LATLAB_GPU_ZONE(prof_, s, "indirect");
        pass(s, 64);
      }
    }
  }

  std::unique_ptr<CudaGpuProfiler> prof_;
  float* data_ = nullptr;
};

TEST_F(ProfilerCudaTest, NestedZonesAreOkAndChildrenLieInsideTheirParents) {
  ASSERT_NO_FATAL_FAILURE(make());
  record_frame(stream_);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  prof_->next_frame();
  const auto f = prof_->frame(0);
  ASSERT_TRUE(f.has_value());
  ASSERT_EQ(f->zones.size(), 5u);
  expect_nested_within_parents(*f);
  ASSERT_NE(find(*f, "direct"), nullptr);
  EXPECT_EQ(find(*f, "direct")->depth, 2u);
  EXPECT_EQ(f->zones[find(*f, "direct")->parent].name, std::string_view("lighting"));
  EXPECT_GT(find(*f, "direct")->duration_ns, 0);
  EXPECT_GT(find(*f, "frame")->duration_ns, find(*f, "lighting")->duration_ns);
  // Siblings on one stream run in order: simulate ends before lighting begins.
  EXPECT_LE(find(*f, "simulate")->end_ticks, find(*f, "lighting")->begin_ticks);
  const ProfilerCounters c = prof_->counters();
  EXPECT_EQ(c.zones_ok, 5u);
  EXPECT_EQ(c.zones_invalid, 0u);
  EXPECT_EQ(c.zones_dropped, 0u);
}

// The spin kernel runs until %globaltimer advanced by N ns from its own
// first read; the begin stamp reads the same timer before it and the end
// stamp after it, so every zone is >= N. Above N: the stamps' own cost (an
// empty pair measured about 6 us on an H200) and timer steps.
TEST_F(ProfilerCudaTest, ZoneAroundASpinMeasuresAtLeastItAndCloseToIt) {
  auto probe = probe_globaltimer(0, 1000);
  ASSERT_TRUE(probe.ok()) << probe.error().message;
  ASSERT_GT(probe->steps, 0u);
  constexpr int64_t kSpinNs = 200'000;
  constexpr int kFrames = 30;
  // Median tolerance: 20 us for the stamp kernels around the spin (about 3x
  // the measured empty pair) plus two timer steps of quantisation.
  const int64_t tolerance_ns = 20'000 + 2 * static_cast<int64_t>(probe->median_step_ns);
  ASSERT_NO_FATAL_FAILURE(make());
  std::vector<int64_t> spans;
  prof_->set_frame_sink([&spans](const ProfilerFrame& f) {
    for (const auto& z : f.zones) {
      if (z.name == std::string_view("spin") && z.ok()) spans.push_back(z.duration_ns);
    }
  });
  ASSERT_TRUE(cuda_launch_spin(stream_, kSpinNs).ok());  // warm-up, untimed
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  prof_->next_frame();
  for (int i = 0; i < kFrames; ++i) {
    {
      LATLAB_GPU_ZONE(prof_, stream_, "spin");
      ASSERT_TRUE(cuda_launch_spin(stream_, kSpinNs).ok());
    }
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    prof_->next_frame();
  }
  prof_->collect();
  ASSERT_EQ(spans.size(), static_cast<size_t>(kFrames));
  std::sort(spans.begin(), spans.end());
  const int64_t median = spans[spans.size() / 2];
  std::printf(
      "spin %lld ns: zone min %lld, median %lld, max %lld ns (timer step %llu ns, tolerance "
      "%lld)\n",
      static_cast<long long>(kSpinNs), static_cast<long long>(spans.front()),
      static_cast<long long>(median), static_cast<long long>(spans.back()),
      static_cast<unsigned long long>(probe->median_step_ns), static_cast<long long>(tolerance_ns));
  EXPECT_GE(spans.front(), kSpinNs);
  EXPECT_LE(median, kSpinNs + tolerance_ns);
}

// Two threads, each with its own stream (created on the thread, device 0
// current), record nested zones into the same frame at the same time.
TEST_F(ProfilerCudaTest, ZonesFromTwoThreadsOnTwoStreamsAreAllOk) {
  ASSERT_NO_FATAL_FAILURE(make());
  constexpr int kThreads = 2;
  constexpr int kOuterPerThread = 8;
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  std::vector<cudaError_t> status(kThreads, cudaSuccess);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      cudaStream_t s = nullptr;
      cudaError_t e = cudaSetDevice(0);
      if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      start.arrive_and_wait();
      for (int i = 0; i < kOuterPerThread && e == cudaSuccess; ++i) {
        LATLAB_GPU_ZONE(prof_, s, "outer");
        {
          LATLAB_GPU_ZONE(prof_, s, "inner");
          if (!cuda_launch_spin(s, 5'000).ok()) e = cudaErrorLaunchFailure;
        }
      }
      if (s != nullptr) {
        if (e == cudaSuccess) e = cudaStreamSynchronize(s);
        (void)cudaStreamDestroy(s);
      }
      status[t] = e;
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) ASSERT_EQ(status[t], cudaSuccess) << "thread " << t;
  prof_->next_frame();
  const auto f = prof_->frame(0);
  ASSERT_TRUE(f.has_value());
  ASSERT_EQ(f->zones.size(), static_cast<size_t>(kThreads * kOuterPerThread * 2));
  expect_nested_within_parents(*f);
  std::map<uint32_t, int> roots_per_thread;
  for (const auto& z : f->zones) {
    if (z.parent == kNoZone) {
      EXPECT_EQ(z.name, std::string_view("outer"));
      ++roots_per_thread[z.thread];
    } else {
      EXPECT_EQ(z.name, std::string_view("inner"));
      EXPECT_EQ(f->zones[z.parent].name, std::string_view("outer"));
    }
    EXPECT_FALSE(z.orphan) << z.name;
  }
  ASSERT_EQ(roots_per_thread.size(), static_cast<size_t>(kThreads));
  for (const auto& [thread, roots] : roots_per_thread) EXPECT_EQ(roots, kOuterPerThread) << thread;
  EXPECT_EQ(prof_->counters().zones_ok, static_cast<uint64_t>(kThreads * kOuterPerThread * 2));
}

// Three frames queued behind a closed gate: next_frame never waits and
// collects nothing; once each frame's event completed and the frame is
// retired, all three are collected, in order, every zone ok.
TEST_F(ProfilerCudaTest, FramesInFlightAreCollectedWithoutWaiting) {
  constexpr uint32_t kInFlight = 3;
  ASSERT_NO_FATAL_FAILURE(make({.max_zones_per_frame = 64, .frames_in_flight = kInFlight}));
  auto gate = CudaStreamGate::create(0);
  ASSERT_TRUE(gate.ok()) << gate.error().message;
  ASSERT_TRUE((*gate)->hold(stream_).ok());
  std::vector<cudaEvent_t> done(kInFlight, nullptr);
  for (auto& ev : done) {
    ASSERT_EQ(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), cudaSuccess);
  }
  std::vector<uint64_t> ids;
  int64_t longest_next_frame_ns = 0;
  for (uint32_t i = 0; i < kInFlight; ++i) {
    ids.push_back(prof_->current_frame_id());
    record_frame(stream_);
    ASSERT_EQ(cudaEventRecord(done[i], stream_), cudaSuccess);
    const int64_t t0 = host_now_ns();
    prof_->next_frame();
    longest_next_frame_ns = std::max(longest_next_frame_ns, host_now_ns() - t0);
  }
  EXPECT_EQ(prof_->counters().frames_collected, 0u);
  EXPECT_EQ(prof_->counters().frames_without_queries, 0u);
  EXPECT_FALSE(prof_->frame(ids[0]).has_value());
  // The gate holds the GPU: a next_frame that waited for it would take the
  // gate's 10 s timeout. 100 ms leaves room for a loaded host.
  EXPECT_LT(longest_next_frame_ns, 100'000'000);

  (*gate)->open();
  for (uint32_t i = 0; i < kInFlight; ++i) {
    ASSERT_EQ(cudaEventSynchronize(done[i]), cudaSuccess);
    prof_->retire_frame(ids[i]);
  }
  EXPECT_EQ(prof_->collect(), kInFlight);
  const ProfilerCounters c = prof_->counters();
  EXPECT_EQ(c.frames_collected, kInFlight);
  EXPECT_EQ(c.zones_ok, 5u * kInFlight);
  EXPECT_EQ(c.zones_invalid, 0u);
  for (uint64_t id : ids) {
    const auto f = prof_->frame(id);
    ASSERT_TRUE(f.has_value()) << id;
    EXPECT_EQ(f->zones.size(), 5u);
    expect_nested_within_parents(*f);
  }
  // Stream order: each frame's root begins after the previous one ended.
  for (size_t i = 1; i < ids.size(); ++i) {
    EXPECT_GE(prof_->frame(ids[i])->zones[0].begin_ticks,
              prof_->frame(ids[i - 1])->zones[0].end_ticks);
  }
  for (auto ev : done) EXPECT_EQ(cudaEventDestroy(ev), cudaSuccess);
}

TEST(ProfilerCudaFactory, RefusesADeviceThatDoesNotExist) {
  LATLAB_REQUIRE_CUDA_DEVICE();
  auto p = create_cuda_profiler(1000, {});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("does not exist"), std::string::npos) << p.error().message;
}

}  // namespace
}  // namespace latlab
