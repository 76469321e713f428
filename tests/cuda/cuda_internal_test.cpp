// CUDA backend internals that need no GPU: run on every machine.
#include "backends/cuda/cuda_internal.hpp"

#include <gtest/gtest.h>

#include "backends/cuda/cuda_kernels.hpp"
#include "latlab/cuda.hpp"

namespace latlab {
namespace {

using cuda_detail::decode_stamp;
using cuda_detail::stamp_tag;

constexpr uint64_t kTicks = 1'760'000'000'123'456'789ull;  // a plausible %globaltimer value

TEST(CudaStampDecode, UnwrittenSlotIsNotAvailable) {
  const auto q = decode_stamp(0, 0, 7);
  EXPECT_FALSE(q.available);
}

TEST(CudaStampDecode, WriteOfTheExpectedGenerationIsAccepted) {
  const auto q = decode_stamp(stamp_tag(7, kTicks), kTicks, 7);
  ASSERT_TRUE(q.available);
  EXPECT_EQ(q.ticks, kTicks);
  EXPECT_EQ(q.generation, 7u);
}

TEST(CudaStampDecode, LateWriteReportsItsOwnGeneration) {
  const auto q = decode_stamp(stamp_tag(6, kTicks), kTicks, 7);
  ASSERT_TRUE(q.available);
  EXPECT_EQ(q.generation, 6u);
}

TEST(CudaStampDecode, TagOfOneWriteWithValueOfAnotherIsRejected) {
  // The new use's tag landed, then a late write of the old use overwrote the
  // value: the value must not pass as the new use's.
  const auto q = decode_stamp(stamp_tag(7, kTicks + 1000), kTicks, 7);
  ASSERT_TRUE(q.available);
  EXPECT_NE(q.generation, 7u);
  EXPECT_NE(q.generation, 0u);
}

TEST(CudaStampDecode, TagBindsEveryBitOfTheValue) {
  for (int bit = 0; bit < 64; ++bit) {
    const uint64_t other = kTicks ^ (1ull << bit);
    EXPECT_NE(decode_stamp(stamp_tag(7, kTicks), other, 7).generation, 7u) << "bit " << bit;
  }
}

TEST(CudaDeviceSelector, EmptyPicksTheFirstDevice) {
  auto r = cuda_detail::select_device_index("", {"NVIDIA H200", "NVIDIA L4"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, 0);
}

TEST(CudaDeviceSelector, IndexPicksThatDevice) {
  auto r = cuda_detail::select_device_index("1", {"NVIDIA H200", "NVIDIA L4"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, 1);
}

TEST(CudaDeviceSelector, NameSubstringIsCaseInsensitive) {
  auto r = cuda_detail::select_device_index("l4", {"NVIDIA H200", "NVIDIA L4"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, 1);
}

TEST(CudaDeviceSelector, IndexOutOfRangeListsDevices) {
  auto r = cuda_detail::select_device_index("2", {"NVIDIA H200", "NVIDIA L4"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("out of range"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("1: NVIDIA L4"), std::string::npos) << r.error().message;
}

TEST(CudaDeviceSelector, UnknownNameListsDevices) {
  auto r = cuda_detail::select_device_index("A100", {"NVIDIA H200"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("A100"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("0: NVIDIA H200"), std::string::npos) << r.error().message;
}

TEST(CudaWorkload, DefaultWorkloadIsValid) {
  EXPECT_TRUE(cuda_detail::validate_workload(FrameWorkload{}).ok());
}

TEST(CudaWorkload, ComplexityOutsideRangeIsRefused) {
  for (uint32_t c : {0u, 4097u}) {
    auto r = cuda_detail::validate_workload(FrameWorkload{.complexity = c});
    ASSERT_FALSE(r.ok()) << c;
    EXPECT_NE(r.error().message.find("complexity"), std::string::npos) << r.error().message;
  }
}

TEST(CudaWorkload, FragmentFormIsRefused) {
  auto r = cuda_detail::validate_workload(FrameWorkload{.form = WorkloadForm::fragment});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("compute"), std::string::npos) << r.error().message;
}

TEST(CudaWorkload, EmptyTargetIsRefused) {
  auto r = cuda_detail::validate_workload(FrameWorkload{.width = 0});
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(cuda_detail::validate_workload(FrameWorkload{.passes = 0}).ok());
}

TEST(CudaVersion, FormatsMajorMinor) {
  EXPECT_EQ(format_cuda_version(13000), "13.0");
  EXPECT_EQ(format_cuda_version(12040), "12.4");
}

}  // namespace
}  // namespace latlab
