// The timestamp contract suite on a real CUDA device (skips without one).
#include <cuda_runtime.h>

#include "conformance/timestamp_contract.hpp"
#include "cuda/cuda_test_util.hpp"
#include "latlab/bench/cuda_rig.hpp"  // CudaStreamGate, cuda_launch_spin
#include "latlab/cuda.hpp"

namespace latlab::test {
namespace {

// Spin kernels of `complexity` us on one non-blocking stream of device 0;
// a frame's wait synchronises the stream (frames run in order on it).
// hold() launches a CudaStreamGate's kernel, which release() opens.
class CudaRig {
 public:
  static constexpr const char* kName = "cuda";
  static constexpr uint32_t kScaleBase = 50;  // 50 us of spin vs 200 us
  static constexpr int64_t kNsPerComplexity = 1'000;

  std::optional<std::string> open(const RigOptions& /*opts*/) {
    if (auto why = cuda_unavailable_reason()) return why;
    EXPECT_EQ(cudaSetDevice(0), cudaSuccess);
    EXPECT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
    return std::nullopt;
  }
  void close() {
    if (stream_ == nullptr) return;
    if (gate_) gate_->open();
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    gate_.reset();
    EXPECT_EQ(cudaStreamDestroy(stream_), cudaSuccess);
    stream_ = nullptr;
  }
  Result<std::unique_ptr<TimestampQueryPool>> make_pool(const QueryPoolDesc& desc) {
    return create_cuda_query_pool({.pool = desc, .device = 0, .cross_check_events = true});
  }
  TickFormat expected_ticks() { return TickFormat{1, 1, 64}; }  // %globaltimer: 64-bit ns
  void begin(uint32_t /*slot*/) {}
  GpuCommandStream stream(uint32_t /*slot*/) { return stream_; }
  void barrier(uint32_t /*slot*/) {}
  void work(uint32_t /*slot*/, uint32_t complexity, uint32_t /*index*/) {
    const auto launched = cuda_launch_spin(stream_, complexity * kNsPerComplexity);
    EXPECT_TRUE(launched.ok()) << launched.error().message;
  }
  void submit(uint32_t /*slot*/) {}  // launches are queued as they are made
  void wait(uint32_t /*slot*/) { ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess); }
  std::optional<std::string> cannot_hold() { return std::nullopt; }
  void hold(uint32_t /*slot*/) {
    auto gate = CudaStreamGate::create(0);  // one-shot: a new gate per hold
    ASSERT_TRUE(gate.ok()) << gate.error().message;
    gate_ = std::move(gate.value());
    ASSERT_TRUE(gate_->hold(stream_).ok());
  }
  void release() { gate_->open(); }
  std::optional<std::string> cannot_write_late() { return std::nullopt; }
  std::optional<std::string> reads_may_wait() { return std::nullopt; }
  std::optional<std::string> dispose_needs_no_wait() { return std::nullopt; }
  bool separates_small_work() { return true; }
  std::optional<std::string> skips(ContractCase /*c*/) { return std::nullopt; }

 private:
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<CudaStreamGate> gate_;
};

using CudaRigs = ::testing::Types<CudaRig>;
INSTANTIATE_TYPED_TEST_SUITE_P(Cuda, TimestampContract, CudaRigs, RigName);

}  // namespace
}  // namespace latlab::test
