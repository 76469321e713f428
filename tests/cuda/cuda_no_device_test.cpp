// Without a usable GPU every CUDA factory fails with a message that says why.
// These run on machines without a GPU (CI); on a GPU machine they skip.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

#include "latlab/bench/cuda_rig.hpp"
#include "latlab/cuda.hpp"

namespace latlab {
namespace {

class CudaNoDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
      GTEST_SKIP() << n << " CUDA device(s) present: the no-device path cannot be exercised here";
    }
  }
  static void expect_explains(const Error& e) {
    EXPECT_NE(e.message.find("no usable device"), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("cudaGetDeviceCount"), std::string::npos) << e.message;
  }
};

TEST_F(CudaNoDevice, LatencyDeviceFactoryExplainsWhy) {
  auto dev = create_cuda_latency_device("");
  ASSERT_FALSE(dev.ok());
  expect_explains(dev.error());
}

TEST_F(CudaNoDevice, EnumerationExplainsWhy) {
  auto devices = enumerate_cuda_devices();
  ASSERT_FALSE(devices.ok());
  expect_explains(devices.error());
}

TEST_F(CudaNoDevice, SlotsFactoryExplainsWhy) {
  auto slots = CudaTimestampSlots::create();
  ASSERT_FALSE(slots.ok());
  expect_explains(slots.error());
}

TEST_F(CudaNoDevice, PoolFactoryExplainsWhy) {
  auto pool = create_cuda_query_pool();
  ASSERT_FALSE(pool.ok());
  expect_explains(pool.error());
}

TEST_F(CudaNoDevice, CalibrationSamplerFactoryExplainsWhy) {
  auto sampler = CudaCalibrationSampler::create();
  ASSERT_FALSE(sampler.ok());
  expect_explains(sampler.error());
}

TEST_F(CudaNoDevice, ProbeExplainsWhy) {
  auto probe = probe_globaltimer();
  ASSERT_FALSE(probe.ok());
  expect_explains(probe.error());
}

TEST(CudaPoolDesc, OddCapacityIsRefusedBeforeTouchingTheDevice) {
  CudaQueryPoolDesc desc;
  desc.pool.max_queries = 3;
  auto pool = create_cuda_query_pool(desc);
  ASSERT_FALSE(pool.ok());
  EXPECT_NE(pool.error().message.find("max_queries"), std::string::npos) << pool.error().message;
}

}  // namespace
}  // namespace latlab
