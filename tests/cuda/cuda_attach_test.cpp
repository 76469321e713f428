// latlab on a program's own CUDA streams in its current context: the
// program selects its device and makes its streams; latlab's profiler and
// ClockSync take the current device (-1) and record into those streams.
// Skips without a CUDA device (runs on the GPU machine).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "cuda/cuda_test_util.hpp"
#include "latlab/bench/cuda_rig.hpp"
#include "latlab/clock_sync.hpp"
#include "latlab/cuda.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_cuda.hpp"

namespace latlab {
namespace {

// The program's two streams on its current device; latlab attaches to them.
TEST(CudaAttach, ZonesOnTheProgramsStreamsMapOntoTheHostClock) {
  LATLAB_REQUIRE_CUDA_DEVICE();
  int device_count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&device_count), cudaSuccess);
  const int program_device = device_count - 1;  // not necessarily latlab's default
  ASSERT_EQ(cudaSetDevice(program_device), cudaSuccess);
  cudaStream_t streams[2] = {nullptr, nullptr};
  for (auto& s : streams)
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);

  auto prof = create_cuda_profiler(
      -1, {.name = "program", .max_zones_per_frame = 8, .frames_in_flight = 2});
  ASSERT_TRUE(prof) << prof.error().message;
  const auto clock = start_cuda_clock_sync(-1, {}, {.refresh_interval_ns = 100'000'000});
  ASSERT_TRUE(clock->available()) << clock->reason();
  (*prof)->set_clock_mapper(clock->mapper());
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, program_device) << "latlab changed the program's current device";

  constexpr int kFrames = 6;
  constexpr int64_t kSpinNs = 200'000;
  std::vector<uint64_t> ids;
  const int64_t before = host_now_ns();
  for (int frame = 0; frame < kFrames; ++frame) {
    for (auto s : streams) {
      LATLAB_GPU_ZONE(*prof, s, "spin");
      ASSERT_TRUE(cuda_launch_spin(s, kSpinNs));
    }
    ids.push_back((*prof)->current_frame_id());
    for (auto s : streams) ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    (*prof)->next_frame();
    (*prof)->retire_frame(ids.back());
  }
  const int64_t after = host_now_ns();
  (*prof)->collect();
  const ProfilerCounters c = (*prof)->counters();
  EXPECT_EQ(c.zones_ok, 2u * kFrames);
  EXPECT_EQ(c.zones_invalid, 0u);
  const auto f = (*prof)->frame(ids.back());
  ASSERT_TRUE(f.has_value());
  ASSERT_TRUE(f->host_mapped);
  for (const auto& z : f->zones) {
    EXPECT_GE(z.duration_ns, kSpinNs) << "a zone spans at least its spin";
    EXPECT_GE(z.gpu_begin_host_ns + f->map_error_ns, before);
    EXPECT_LE(z.gpu_end_host_ns - f->map_error_ns, after);
  }
  for (auto s : streams) EXPECT_EQ(cudaStreamDestroy(s), cudaSuccess);
}

TEST(CudaAttach, ClockSyncWithoutAUsableDeviceIsUnavailableWithTheReason) {
  if (!test::cuda_unavailable_reason()) GTEST_SKIP() << "a CUDA device is usable here";
  const auto clock = start_cuda_clock_sync(-1);
  EXPECT_FALSE(clock->available());
  EXPECT_FALSE(clock->reason().empty());
  EXPECT_FALSE(clock->mapper()(1).has_value());
}

}  // namespace
}  // namespace latlab
