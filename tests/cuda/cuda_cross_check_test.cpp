// The two-device clock cross-check on CUDA (clock_cross_check.hpp): with two
// GPUs, a minimal frame submitted to both at one host deadline starts, on
// the host clock through each device's own model, within the sum of the two
// models' bounds. Skips with the reason below two CUDA devices.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "cuda_test_util.hpp"
#include "latlab/bench/clock_cross_check.hpp"
#include "latlab/bench/cuda_rig.hpp"
#include "latlab/bench/tick_mapper.hpp"
#include "latlab/cuda.hpp"

namespace latlab {
namespace {

TEST(CudaCrossCheck, TwoDevicesAgreeOnTheHostClock) {
  LATLAB_REQUIRE_CUDA_DEVICE();
  int n = 0;
  ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
  if (n < 2) GTEST_SKIP() << "fewer than two CUDA devices (" << n << "): nothing to cross-check";
  auto a = create_cuda_latency_device("0");
  auto b = create_cuda_latency_device("1");
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(b.ok()) << b.error().message;
  auto ma = make_calibrated_mapper(**a);
  auto mb = make_calibrated_mapper(**b);
  ASSERT_TRUE(ma->start().ok());
  ASSERT_TRUE(mb->start().ok());
  ClockCrossCheckDesc desc;
  desc.trials = 100;
  const Result<ClockCrossCheckResult> r = run_clock_cross_check(**a, *ma, **b, *mb, desc);
  ma->stop();
  mb->stop();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->trials_mapped, 100u);
  RecordProperty("verdict", r->verdict);
  EXPECT_TRUE(r->agree) << r->verdict;
}

}  // namespace
}  // namespace latlab
