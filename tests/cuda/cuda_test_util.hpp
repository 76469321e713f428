// Shared helpers of the CUDA tests: skip without a usable GPU, a stream
// fixture, and mapping GPU ns onto the host clock between two calibration
// pairs (the ClockModel does this in the library; here the bound is exact
// and simple: the pairs' deviations interpolated).
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "latlab/clock_model.hpp"

namespace latlab::test {

// Why the CUDA device tests cannot run here; nullopt when they can.
inline std::optional<std::string> cuda_unavailable_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    return std::string("no usable CUDA device: cudaGetDeviceCount failed (") + cudaGetErrorName(e) +
           ": " + cudaGetErrorString(e) + ")";
  }
  if (n == 0) return std::string("no CUDA device visible (cudaGetDeviceCount returned 0)");
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess ||
      major < 9) {
    return std::string(
        "device 0 is older than compute capability 9.0 (kernels are built for sm_90)");
  }
  return std::nullopt;
}

#define LATLAB_REQUIRE_CUDA_DEVICE()                                  \
  do {                                                                \
    if (const auto why = ::latlab::test::cuda_unavailable_reason()) { \
      GTEST_SKIP() << *why;                                           \
    }                                                                 \
  } while (0)

// A test with device 0 current and one non-blocking stream.
class CudaStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LATLAB_REQUIRE_CUDA_DEVICE();
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    if (stream_) {
      EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
      EXPECT_EQ(cudaStreamDestroy(stream_), cudaSuccess);
    }
  }
  cudaStream_t stream_ = nullptr;
};

// A GPU time on the host clock and |truth - host_ns| <= error_ns.
struct HostTime {
  int64_t host_ns = 0;
  int64_t error_ns = 0;
};

// Linear interpolation between pairs `a` and `b` (a before b). If the GPU
// clock runs linearly against the host clock, the error at weight w is
// |1-w| * a.max_deviation + |w| * b.max_deviation, exactly.
inline HostTime map_between(const CalibrationPair& a, const CalibrationPair& b, uint64_t ticks) {
  const auto span = static_cast<double>(static_cast<int64_t>(b.device_ticks - a.device_ticks));
  const double w =
      span > 0 ? static_cast<double>(static_cast<int64_t>(ticks - a.device_ticks)) / span : 0.0;
  HostTime t;
  t.host_ns = a.host_ns + std::llround(w * static_cast<double>(b.host_ns - a.host_ns));
  t.error_ns =
      static_cast<int64_t>(std::ceil(std::abs(1.0 - w) * static_cast<double>(a.max_deviation_ns) +
                                     std::abs(w) * static_cast<double>(b.max_deviation_ns))) +
      1;
  return t;
}

}  // namespace latlab::test
