#include "report/run_comparison.hpp"

#include <gtest/gtest.h>

#include "sim_result_doc.hpp"

namespace latlab {
namespace {

using testing::SimRunSpec;
using testing::sim_result_doc;

ReadResult read(const SimRunSpec& spec) {
  Result<ReadResult> r = read_result_json(sim_result_doc(spec), "sim");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return std::move(r.value());
}

const CompareRow* row(const Comparison& c, const std::string& series, const std::string& stat) {
  for (const CompareRow& r : c.rows) {
    if (r.series == series && r.statistic == stat) return &r;
  }
  return nullptr;
}

TEST(RunComparison, SameSettingsOtherNoiseIsNoSignificantChange) {
  // A/A: the same scripted distributions, different noise and schedule seeds.
  for (uint64_t s = 2; s <= 6; ++s) {
    const ReadResult a = read(SimRunSpec{.noise_seed = 1});
    const ReadResult b = read(SimRunSpec{.noise_seed = s, .schedule_seed = s});
    Result<Comparison> c = compare_results(a, b, "a", "b", CompareOptions{});
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(c->changes, 0u) << format_comparison(c.value());
    EXPECT_FALSE(c->fails);
    EXPECT_EQ(c->rows.size(), 10u * 2u);  // 7 stages + 3 observers, p50 and p99
  }
}

TEST(RunComparison, IdenticalRunsAreNoChange) {
  const ReadResult a = read(SimRunSpec{});
  Result<Comparison> c = compare_results(a, a, "a", "a", CompareOptions{});
  ASSERT_TRUE(c.ok());
  for (const CompareRow& r : c->rows) {
    EXPECT_EQ(r.call, ChangeCall::no_change) << r.series;
    EXPECT_DOUBLE_EQ(r.test.shift, 0.0);
  }
}

TEST(RunComparison, AnInjectedGpuDelayIsARegressionWhereItActs) {
  const ReadResult a = read(SimRunSpec{.noise_seed = 1});
  const ReadResult b = read(SimRunSpec{.noise_seed = 2, .extra_gpu_ns = 10'000});  // +10 us of ~50
  CompareOptions o;
  o.fail_on_regression_pct = 10;
  Result<Comparison> c = compare_results(a, b, "a", "b", o);
  ASSERT_TRUE(c.ok()) << c.error().message;
  const CompareRow* gpu = row(c.value(), "gpu_execution", "p50");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->call, ChangeCall::regression) << format_comparison(c.value());
  EXPECT_NEAR(gpu->test.shift, 10.0, 2.0);  // us
  ASSERT_TRUE(gpu->test.ci_low && gpu->test.ci_high);
  EXPECT_LE(*gpu->test.ci_low, 10.0 + 1.0);
  EXPECT_GE(*gpu->test.ci_high, 10.0 - 1.0);
  EXPECT_TRUE(gpu->fails);
  EXPECT_EQ(row(c.value(), "core_latency", "p50")->call, ChangeCall::regression);
  // Stages the delay does not touch stay unflagged.
  EXPECT_EQ(row(c.value(), "cpu_processing", "p50")->call, ChangeCall::no_change);
  EXPECT_TRUE(c->fails);
  // The other way round it is an improvement and nothing fails.
  Result<Comparison> back = compare_results(b, a, "b", "a", o);
  EXPECT_EQ(row(back.value(), "gpu_execution", "p50")->call, ChangeCall::improvement);
  EXPECT_FALSE(back->fails);
}

TEST(RunComparison, ASmallShiftBelowTheMinimumEffectIsNotFlagged) {
  const ReadResult a = read(SimRunSpec{.noise_seed = 1});
  const ReadResult b = read(SimRunSpec{.noise_seed = 2, .extra_gpu_ns = 10'000});
  CompareOptions o;
  o.min_effect = 0.5;  // 50 %: the +20 % is significant but too small to flag
  Result<Comparison> c = compare_results(a, b, "a", "b", o);
  const CompareRow* gpu = row(c.value(), "gpu_execution", "p50");
  EXPECT_LT(gpu->test.p_value, 0.05);
  EXPECT_EQ(gpu->call, ChangeCall::no_change);
}

TEST(RunComparison, TooFewBlocksIsSaid) {
  const ReadResult a = read(SimRunSpec{.noise_seed = 1, .frames = 60, .blocks = 3});
  const ReadResult b = read(SimRunSpec{.noise_seed = 2, .extra_gpu_ns = 30'000, .frames = 60, .blocks = 3});
  Result<Comparison> c = compare_results(a, b, "a", "b", CompareOptions{});
  EXPECT_EQ(row(c.value(), "gpu_execution", "p50")->call, ChangeCall::too_few_blocks);
}

}  // namespace
}  // namespace latlab
