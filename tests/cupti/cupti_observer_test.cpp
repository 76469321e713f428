// The CUPTI observer on a real CUDA device (skips without one, or where CUPTI
// cannot start, with the reason).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cuda/cuda_test_util.hpp"
#include "latlab/cuda.hpp"
#include "latlab/cupti.hpp"
#include "latlab/host_clock.hpp"

namespace latlab {
namespace {

class CuptiObserverTest : public test::CudaStreamTest {
 protected:
  void SetUp() override {
    test::CudaStreamTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto o = CuptiKernelObserver::create();
    if (!o) GTEST_SKIP() << "CUPTI unavailable: " << o.error().message;
    observer_ = std::move(*o);
  }
  void TearDown() override {
    test::CudaStreamTest::TearDown();
    observer_.reset();
  }
  std::vector<CuptiKernelRecord> records_of_stream() {
    auto id = observer_->stream_id(stream_);
    EXPECT_TRUE(id.ok()) << id.error().message;
    auto all = observer_->take();
    EXPECT_TRUE(all.ok()) << all.error().message;
    std::vector<CuptiKernelRecord> out;
    if (!id.ok() || !all.ok()) return out;
    for (auto& r : *all)
      if (r.stream_id == *id) out.push_back(std::move(r));
    std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.start_ns < b.start_ns; });
    return out;
  }
  std::unique_ptr<CuptiKernelObserver> observer_;
};

TEST_F(CuptiObserverTest, OnlyOneObserverAtATime) {
  auto second = CuptiKernelObserver::create();
  EXPECT_FALSE(second.ok());
}

// 50 spins of 200 us: CUPTI sees each, on the host clock (between the host
// time before the launch and after the wait, to within 2 us: CUPTI's
// conversion is not bracketed; the mapping target), lasting the spin.
TEST_F(CuptiObserverTest, RecordsEverySpinOnTheHostClock) {
  constexpr int kReps = 50;
  constexpr int64_t kSpin = 200'000;
  constexpr int64_t kSlack = 2'000;
  ASSERT_TRUE(cuda_launch_spin(stream_, 1000).ok());  // warm-up
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  (void)records_of_stream();
  std::vector<int64_t> before;
  std::vector<int64_t> after;
  for (int i = 0; i < kReps; ++i) {
    before.push_back(host_now_ns());
    ASSERT_TRUE(cuda_launch_spin(stream_, kSpin).ok());
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    after.push_back(host_now_ns());
  }
  const auto rec = records_of_stream();
  ASSERT_EQ(rec.size(), static_cast<size_t>(kReps)) << "dropped " << observer_->dropped();
  std::vector<double> dur;
  for (int i = 0; i < kReps; ++i) {
    EXPECT_NE(rec[i].name.find("spin_kernel"), std::string::npos) << rec[i].name;
    EXPECT_GE(rec[i].start_ns, before[i] - kSlack) << i;
    EXPECT_LE(rec[i].end_ns, after[i] + kSlack) << i;
    dur.push_back(static_cast<double>(rec[i].end_ns - rec[i].start_ns));
  }
  std::sort(dur.begin(), dur.end());
  std::printf("CUPTI spin durations: p50 %.1f ns, p90 %.1f ns\n", dur[dur.size() / 2],
              dur[dur.size() * 9 / 10]);
  EXPECT_GE(dur[dur.size() / 2], static_cast<double>(kSpin));
  EXPECT_LE(dur[dur.size() * 9 / 10], static_cast<double>(kSpin + kSlack));
}

// Fused stamps vs CUPTI on the same spin kernel, on distributions of 50:
// the median |difference| within the p99 target (1 us); the figure
// against the 0.1 us p50 target is bench/cuda_timing's to report.
TEST_F(CuptiObserverTest, FusedStampsAgreeWithCupti) {
  auto slots = CudaTimestampSlots::create({.count = 2, .device = 0});
  ASSERT_TRUE(slots.ok()) << slots.error().message;
  auto fused = CudaFusedStamps::create(*slots);
  ASSERT_TRUE(fused.ok()) << fused.error().message;
  (void)records_of_stream();
  std::vector<double> ours;
  for (int i = 0; i < 50; ++i) {
    (*slots)->reset(0, 2, true);
    ASSERT_TRUE((*fused)->launch_spin(stream_, 200'000, 0).ok());
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    SlotReading r[2];
    (*slots)->read(0, r);
    ASSERT_TRUE(r[0].available && r[1].available);
    ours.push_back(static_cast<double>(r[1].ticks - r[0].ticks));
  }
  const auto rec = records_of_stream();
  ASSERT_EQ(rec.size(), ours.size());
  std::vector<double> diff;
  for (size_t i = 0; i < rec.size(); ++i)
    diff.push_back(std::abs(ours[i] - static_cast<double>(rec[i].end_ns - rec[i].start_ns)));
  std::sort(diff.begin(), diff.end());
  std::printf("|fused - CUPTI|: p50 %.1f ns, p90 %.1f ns, max %.1f ns\n", diff[diff.size() / 2],
              diff[diff.size() * 9 / 10], diff.back());
  EXPECT_LE(diff[diff.size() / 2], 1000.0);
}

}  // namespace
}  // namespace latlab
