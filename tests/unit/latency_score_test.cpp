// The latency score (src/report/latency_score.hpp, docs/score.md): the
// formula on hand-computed values, the pooled percentiles against
// summarize(), the bootstrap against the algorithm docs/score.md spells out,
// determinism, and every case without a score.
#include "report/latency_score.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "latlab/bench/schedule.hpp"
#include "latlab/stats.hpp"

namespace latlab {
namespace {

ScoreMode mode_of(std::vector<std::vector<double>> blocks) {
  ScoreMode m;
  for (const auto& b : blocks) m.frames += b.size();
  m.blocks = std::move(blocks);
  return m;
}

ScoreInput both(std::vector<std::vector<double>> base, std::vector<std::vector<double>> loaded) {
  ScoreInput in;
  in.baseline = mode_of(std::move(base));
  in.loaded = mode_of(std::move(loaded));
  return in;
}

TEST(LatencyScore, OneMillisecondEverywhereScores1000AndHalvingEveryLatencyDoublesIt) {
  EXPECT_DOUBLE_EQ(score_of_components({1000, 1000, 1000, 1000}), 1000.0);
  EXPECT_DOUBLE_EQ(score_of_components({500, 500, 500, 500}), 2000.0);
  // Equal weights: halving two components and doubling the other two cancel.
  EXPECT_DOUBLE_EQ(score_of_components({500, 500, 2000, 2000}), 1000.0);
  // Halving one component multiplies the score by 2^(1/4).
  EXPECT_DOUBLE_EQ(score_of_components({500, 1000, 1000, 1000}), 1000.0 * std::pow(2.0, 0.25));
}

TEST(LatencyScore, TheWorkedExampleOfScoreMd) {
  // 0.5, 0.8, 9 and 12 ms: 1000 / (0.5 * 0.8 * 9 * 12)^(1/4) = 1000 / 43.2^(1/4).
  EXPECT_NEAR(score_of_components({500, 800, 9000, 12000}), 390.0578865534526, 1e-9);
}

TEST(LatencyScore, PooledPercentilesAreType7OverTheBlocksFrames) {
  const PooledBlocks p({{300, 100, 200}, {500, 400}});
  const std::vector<uint32_t> all{1, 1};
  // 100 200 300 400 500: p50 at rank 2; p99 at rank 3.96 = 400 + 0.96 * 100.
  const auto v = p.p50_p99(all);
  ASSERT_TRUE(v.has_value());
  EXPECT_DOUBLE_EQ((*v)[0], 300.0);
  EXPECT_DOUBLE_EQ((*v)[1], 496.0);
  // A resample of the first block twice: 100 100 200 200 300 300.
  const std::vector<uint32_t> first_twice{2, 0};
  EXPECT_DOUBLE_EQ((*p.p50_p99(first_twice))[0], 200.0);
  EXPECT_DOUBLE_EQ((*p.p50_p99(first_twice))[1], 300.0);
  // The second three times: 400 400 400 500 500 500; p50 at rank 2.5.
  const std::vector<uint32_t> second_thrice{0, 3};
  EXPECT_DOUBLE_EQ((*p.p50_p99(second_thrice))[0], 450.0);
  EXPECT_DOUBLE_EQ((*p.p50_p99(second_thrice))[1], 500.0);
  const std::vector<uint32_t> none{0, 0};
  EXPECT_FALSE(p.p50_p99(none).has_value());
}

// Pseudo-random block values, some repeated (ties), for exact comparisons.
std::vector<std::vector<double>> noisy_blocks(uint64_t seed, size_t blocks, size_t frames) {
  SplitMix64 rng(seed);
  std::vector<std::vector<double>> out(blocks);
  for (auto& b : out) {
    for (size_t i = 0; i < frames + rng.below(3); ++i)
      b.push_back(100.0 + static_cast<double>(rng.below(4000)) / 7.0);
  }
  return out;
}

TEST(LatencyScore, PooledPercentilesEqualSummarizeOfTheMaterialisedMultisetBitForBit) {
  const auto blocks = noisy_blocks(7, 6, 40);
  const PooledBlocks p(blocks);
  SplitMix64 rng(3);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<uint32_t> copies(blocks.size());
    for (auto& c : copies) c = static_cast<uint32_t>(trial == 0 ? 1 : rng.below(4));
    std::vector<double> all;
    for (size_t b = 0; b < blocks.size(); ++b)
      for (uint32_t k = 0; k < copies[b]; ++k)
        all.insert(all.end(), blocks[b].begin(), blocks[b].end());
    const auto v = p.p50_p99(copies);
    if (all.empty()) {
      EXPECT_FALSE(v.has_value());
      continue;
    }
    const Distribution d = summarize(all);
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ((*v)[0], d.p50) << "trial " << trial;
    EXPECT_EQ((*v)[1], d.p99) << "trial " << trial;
  }
}

TEST(LatencyScore, ComponentsArePooledPercentilesAndTheIntervalIsHandComputable) {
  // Baseline: blocks {400, 600} and {500, 500}: pooled 400 500 500 600, p50
  // 500, p99 at rank 2.97 = 597. Loaded: 8000 in every frame.
  const LatencyScore s =
      compute_latency_score(both({{400, 600}, {500, 500}}, {{8000, 8000}, {8000, 8000}}));
  ASSERT_TRUE(s.value.has_value()) << s.unavailable_reason;
  ASSERT_EQ(s.components.size(), 4u);
  EXPECT_EQ(s.components[0], (ScoreComponent{"baseline", "p50", 500.0, kScoreWeight}));
  EXPECT_EQ(s.components[1].mode, "baseline");
  EXPECT_EQ(s.components[1].statistic, "p99");
  EXPECT_DOUBLE_EQ(s.components[1].value_us, 597.0);
  EXPECT_EQ(s.components[2], (ScoreComponent{"loaded", "p50", 8000.0, kScoreWeight}));
  EXPECT_EQ(s.components[3], (ScoreComponent{"loaded", "p99", 8000.0, kScoreWeight}));
  // 1000 / (0.5 * 0.597 * 8 * 8)^(1/4)
  EXPECT_NEAR(*s.value, 478.32042097293686, 1e-9);
  // Resamples of Baseline: {400,600} twice (p99 600, prob. 1/4: the lowest
  // score), {500,500} twice (p99 500, 1/4: the highest), one of each (597,
  // 1/2). With 2000 resamples the 2.5 % and 97.5 % points are the extremes.
  EXPECT_NEAR(*s.ci_low, 1000.0 / std::pow(0.5 * 0.6 * 64, 0.25), 1e-9);
  EXPECT_NEAR(*s.ci_high, 1000.0 / std::pow(0.5 * 0.5 * 64, 0.25), 1e-9);  // 500
  EXPECT_EQ(s.baseline_blocks, 2u);
  EXPECT_EQ(s.loaded_blocks, 2u);
  EXPECT_EQ(s.resamples, kScoreResamples);
  EXPECT_EQ(s.seed, kScoreSeed);
  EXPECT_EQ(s.formula, "latency-score/1");
  EXPECT_TRUE(s.unavailable_reason.empty());
}

// docs/score.md's bootstrap, written out plainly: per resample, draw
// Baseline's n block indices then Loaded's m from one splitmix64 stream
// (seed 1, Lemire's below()), pool the drawn blocks' frames, summarize(),
// score; the interval is the type-7 2.5 and 97.5 percentiles of the scores.
std::pair<double, double> documented_interval(const ScoreInput& in) {
  SplitMix64 rng(1);
  auto resample = [&](const std::vector<std::vector<double>>& blocks) {
    std::vector<double> pooled;
    for (size_t i = 0; i < blocks.size(); ++i) {
      const auto& b = blocks[rng.below(blocks.size())];
      pooled.insert(pooled.end(), b.begin(), b.end());
    }
    return summarize(pooled);
  };
  std::vector<double> scores;
  for (int i = 0; i < 2000; ++i) {
    const Distribution b = resample(in.baseline->blocks);
    const Distribution l = resample(in.loaded->blocks);
    scores.push_back(score_of_components({b.p50, b.p99, l.p50, l.p99}));
  }
  std::sort(scores.begin(), scores.end());
  return {*percentile_sorted(scores, 0.025), *percentile_sorted(scores, 0.975)};
}

TEST(LatencyScore, TheIntervalIsTheDocumentedBootstrapExactly) {
  const ScoreInput in = both(noisy_blocks(11, 5, 30), noisy_blocks(12, 5, 30));
  const LatencyScore s = compute_latency_score(in);
  ASSERT_TRUE(s.value.has_value()) << s.unavailable_reason;
  const auto [lo, hi] = documented_interval(in);
  EXPECT_EQ(*s.ci_low, lo);
  EXPECT_EQ(*s.ci_high, hi);
  EXPECT_LE(*s.ci_low, *s.value);
  EXPECT_GE(*s.ci_high, *s.value);
  EXPECT_LT(*s.ci_low, *s.ci_high) << "blocks that differ give an interval of some width";
}

TEST(LatencyScore, TheDocumentedFirstDrawsOfSeed1) {
  // docs/score.md: with 5 blocks a mode, resample 1 draws Baseline blocks
  // 2 3 4 2 2 and Loaded blocks 3 4 2 1 3 (0-based).
  SplitMix64 rng(kScoreSeed);
  const std::vector<uint64_t> want{2, 3, 4, 2, 2, 3, 4, 2, 1, 3};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(rng.below(5), want[i]) << "draw " << i;
}

TEST(LatencyScore, TheSameInputGivesTheSameScoreAndInterval) {
  const ScoreInput in = both(noisy_blocks(21, 8, 50), noisy_blocks(22, 8, 50));
  const LatencyScore a = compute_latency_score(in);
  const LatencyScore b = compute_latency_score(in);
  ASSERT_TRUE(a.value.has_value());
  EXPECT_EQ(a, b);
}

TEST(LatencyScore, IdenticalBlocksGiveAZeroWidthInterval) {
  const LatencyScore s = compute_latency_score(
      both({{100, 200}, {100, 200}, {100, 200}}, {{900, 1100}, {900, 1100}, {900, 1100}}));
  ASSERT_TRUE(s.value.has_value());
  EXPECT_EQ(*s.ci_low, *s.value);
  EXPECT_EQ(*s.ci_high, *s.value);
}

// No score: value, interval and components empty, and the reason says why.
void expect_none(const ScoreInput& in, const std::string& why) {
  const LatencyScore s = compute_latency_score(in);
  EXPECT_FALSE(s.value.has_value());
  EXPECT_FALSE(s.ci_low.has_value());
  EXPECT_FALSE(s.ci_high.has_value());
  EXPECT_TRUE(s.components.empty());
  EXPECT_NE(s.unavailable_reason.find(why), std::string::npos)
      << "'" << s.unavailable_reason << "' lacks '" << why << "'";
}

TEST(LatencyScore, ARunWithoutLoadedHasNoneAndSaysWhy) {
  ScoreInput in;
  in.baseline = mode_of({{100}, {110}});
  in.loaded_absent = "the run has no Loaded mode: --mode baseline";
  expect_none(in, "the run has no Loaded mode: --mode baseline");
  in.loaded_absent.clear();
  expect_none(in, "no Loaded mode");
  ScoreInput no_base;
  no_base.loaded = mode_of({{100}, {110}});
  expect_none(no_base, "no Baseline mode");
}

TEST(LatencyScore, AnOffTargetLoadedHasNoneAndSaysWhy) {
  ScoreInput in = both({{100}, {110}}, {{9000}, {9100}});
  in.loaded->off_target = true;
  in.loaded->target_note = "gpu_execution p50 9.100 ms against its 8.333 ms target +-2%";
  expect_none(in, "Loaded is off target (gpu_execution p50 9.100 ms");
  in.loaded->off_target = std::nullopt;
  expect_none(in, "Loaded's GPU time could not be checked");
}

TEST(LatencyScore, AMissingComponentValueGivesNone) {
  ScoreInput in = both({{100, 120}, {110, 130}}, {{9000}, {9100}});
  in.baseline->missing = 1;
  in.baseline->frames = 5;
  expect_none(in, "1 of 5 measured Baseline frames have no Core Latency");
  ScoreInput empty_block = both({{100, 120}, {}}, {{9000}, {9100}});
  expect_none(empty_block, "Baseline block 1 has no measured frame");
  ScoreInput zero = both({{100, 120}, {110, 130}}, {{9000}, {0}});
  expect_none(zero, "Loaded has a Core Latency of 0 us");
}

TEST(LatencyScore, OneBlockOrAPartialRunGivesNone) {
  expect_none(both({{100, 120}}, {{9000}, {9100}}), "Baseline has 1 measured block(s)");
  ScoreInput partial = both({{100}, {110}}, {{9000}, {9100}});
  partial.partial_reason = "interrupted in measured block 2";
  expect_none(partial, "the run is partial (interrupted in measured block 2)");
}

}  // namespace
}  // namespace latlab
