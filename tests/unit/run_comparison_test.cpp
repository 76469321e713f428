#include "report/run_comparison.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report/result_reader.hpp"
#include "sim_result_doc.hpp"
#include "unit/capture_result_doc.hpp"

namespace latlab {
namespace {

using testing::sim_result_doc;
using testing::SimRunSpec;

RunResult read_text(const std::string& text) {
  Result<ResultDocument> r = read_result_json(text, "sim");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return std::move(r.value().result);
}

RunResult read(const SimRunSpec& spec) { return read_text(sim_result_doc(spec)); }

// The document of `spec`, changed by `edit` before it is read.
template <class Edit>
RunResult read_edited(const SimRunSpec& spec, Edit edit) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(sim_result_doc(spec));
  edit(doc);
  return read_text(doc.dump());
}

const CompareRow* row(const Comparison& c, const std::string& series, const std::string& stat) {
  for (const CompareRow& r : c.rows) {
    if (r.series == series && r.statistic == stat) return &r;
  }
  return nullptr;
}

bool has_note(const Comparison& c, const std::string& part) {
  for (const std::string& n : c.notes) {
    if (n.find(part) != std::string::npos) return true;
  }
  return false;
}

// Runs of `specs`, read, and a side of them.
struct Side {
  std::vector<RunResult> runs;
  CompareSide side() const {
    CompareSide s;
    for (size_t i = 0; i < runs.size(); ++i) {
      s.runs.push_back(&runs[i]);
      s.names.push_back("run " + std::to_string(i + 1));
    }
    return s;
  }
};

Side side_of(std::vector<SimRunSpec> specs) {
  Side s;
  for (const SimRunSpec& spec : specs) s.runs.push_back(read(spec));
  return s;
}

TEST(RunComparison, SameSettingsOtherNoiseIsNoSignificantChange) {
  // A/A: the same scripted distributions, different noise and schedule seeds.
  for (uint64_t s = 2; s <= 6; ++s) {
    const RunResult a = read(SimRunSpec{.noise_seed = 1});
    const RunResult b = read(SimRunSpec{.noise_seed = s, .schedule_seed = s});
    Result<Comparison> c = compare_results(a, b, "a", "b", CompareOptions{});
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(c->unit, CompareUnit::blocks);
    EXPECT_EQ(c->changes, 0u) << format_comparison(c.value());
    EXPECT_FALSE(c->fails);
    EXPECT_EQ(c->rows.size(), 10u * 2u);  // 7 stages + 3 observers, p50 and p99
  }
}

TEST(RunComparison, IdenticalRunsAreNoChange) {
  const RunResult a = read(SimRunSpec{});
  Result<Comparison> c = compare_results(a, a, "a", "a", CompareOptions{});
  ASSERT_TRUE(c.ok());
  for (const CompareRow& r : c->rows) {
    EXPECT_EQ(r.call, ChangeCall::no_change) << r.series;
    EXPECT_DOUBLE_EQ(r.shift, 0.0);
  }
}

TEST(RunComparison, AnInjectedGpuDelayIsARegressionWhereItActs) {
  const RunResult a = read(SimRunSpec{.noise_seed = 1});
  const RunResult b = read(SimRunSpec{.noise_seed = 2, .extra_gpu_ns = 10'000});  // +10 us of ~50
  CompareOptions o;
  o.fail_on_regression_pct = 10;
  Result<Comparison> c = compare_results(a, b, "a", "b", o);
  ASSERT_TRUE(c.ok()) << c.error().message;
  const CompareRow* gpu = row(c.value(), "gpu_execution", "p50");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->call, ChangeCall::regression) << format_comparison(c.value());
  EXPECT_NEAR(gpu->shift, 10.0, 2.0);  // us
  ASSERT_TRUE(gpu->ci_low && gpu->ci_high);
  EXPECT_LE(*gpu->ci_low, 10.0 + 1.0);
  EXPECT_GE(*gpu->ci_high, 10.0 - 1.0);
  EXPECT_GE(gpu->p_adjusted, gpu->p_value);
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
  const RunResult a = read(SimRunSpec{.noise_seed = 1});
  const RunResult b = read(SimRunSpec{.noise_seed = 2, .extra_gpu_ns = 10'000});
  CompareOptions o;
  o.min_effect = 0.5;  // 50 %: the +20 % is significant but too small to flag
  Result<Comparison> c = compare_results(a, b, "a", "b", o);
  const CompareRow* gpu = row(c.value(), "gpu_execution", "p50");
  EXPECT_LT(gpu->p_adjusted, 0.05);
  EXPECT_EQ(gpu->call, ChangeCall::no_change);
}

TEST(RunComparison, TooFewBlocksIsSaid) {
  const RunResult a = read(SimRunSpec{.noise_seed = 1, .frames = 60, .blocks = 3});
  const RunResult b =
      read(SimRunSpec{.noise_seed = 2, .extra_gpu_ns = 30'000, .frames = 60, .blocks = 3});
  Result<Comparison> c = compare_results(a, b, "a", "b", CompareOptions{});
  EXPECT_EQ(row(c.value(), "gpu_execution", "p50")->call, ChangeCall::too_few_blocks);
}

TEST(RunComparison, OneRunASideSaysRunToRunNoiseIsNotInTheTest) {
  const RunResult a = read(SimRunSpec{.noise_seed = 1});
  const RunResult b = read(SimRunSpec{.noise_seed = 2});
  Result<Comparison> c = compare_results(a, b, "a", "b", CompareOptions{});
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(has_note(c.value(), "run-to-run noise is not in this test"));
  EXPECT_NE(comparison_json(c.value()).find("\"run_to_run_noise_in_test\": false"),
            std::string::npos);
}

// The same settings but --blocks 30 vs --blocks 6. Over
// 10 frames a block's p99 is near its maximum, over 50 it is not: a test
// over such blocks calls the block size a regression.
TEST(RunComparison, BlocksOfDifferentSizesAreNotTestedAgainstEachOther) {
  const RunResult a = read(SimRunSpec{.noise_seed = 1, .frames = 300, .blocks = 30});
  const RunResult b = read(SimRunSpec{.noise_seed = 2, .frames = 300, .blocks = 6});
  Result<Comparison> c = compare_results(a, b, "a", "b", CompareOptions{});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("blocks differ in size"), std::string::npos)
      << c.error().message;
  EXPECT_NE(c.error().message.find("10 frames"), std::string::npos) << c.error().message;
  EXPECT_NE(c.error().message.find("50 frames"), std::string::npos) << c.error().message;
  // Even as an intended change: block size is never a setting to compare.
  CompareOptions allow;
  allow.allow_different_settings = true;
  EXPECT_FALSE(compare_results(a, b, "a", "b", allow).ok());
}

TEST(RunComparison, RunsOfDifferentBlockSizesCompareOverTheirTotals) {
  const Side a = side_of({{.noise_seed = 1, .frames = 300, .blocks = 30, .schedule_seed = 1},
                          {.noise_seed = 2, .frames = 300, .blocks = 30, .schedule_seed = 2},
                          {.noise_seed = 3, .frames = 300, .blocks = 30, .schedule_seed = 3}});
  const Side b = side_of({{.noise_seed = 4, .frames = 300, .blocks = 6, .schedule_seed = 4},
                          {.noise_seed = 5, .frames = 300, .blocks = 6, .schedule_seed = 5},
                          {.noise_seed = 6, .frames = 300, .blocks = 6, .schedule_seed = 6}});
  Result<Comparison> c = compare_sides(a.side(), b.side(), CompareOptions{});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->unit, CompareUnit::runs);
  EXPECT_TRUE(has_note(c.value(), "blocks differ in size")) << format_comparison(c.value());
  EXPECT_EQ(c->changes, 0u) << format_comparison(c.value());
  const CompareRow* wake = row(c.value(), "gpu_end_to_fence_wake", "p99");
  ASSERT_NE(wake, nullptr);
  EXPECT_EQ(wake->a_runs.size(), 3u);
  EXPECT_EQ(wake->b_runs.size(), 3u);
}

// Five runs a side: with three, a +20 % shift of a stage whose per-run p50
// varies by a few % reaches p = 7e-4, not below 0.01 after Holm over 20 rows.
TEST(RunComparison, RunsAreTheUnitAndFindAnInjectedDelay) {
  std::vector<SimRunSpec> sa, sb;
  for (uint64_t i = 1; i <= 5; ++i) {
    sa.push_back({.noise_seed = i, .schedule_seed = i});
    sb.push_back({.noise_seed = 10 + i, .extra_gpu_ns = 10'000, .schedule_seed = 10 + i});
  }
  const Side a = side_of(sa), b = side_of(sb);
  CompareOptions o;
  o.fail_on_regression_pct = 10;
  Result<Comparison> c = compare_sides(a.side(), b.side(), o);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->unit, CompareUnit::runs);
  EXPECT_FALSE(has_note(c.value(), "run-to-run noise is not in this test"));
  const CompareRow* gpu = row(c.value(), "gpu_execution", "p50");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->call, ChangeCall::regression) << format_comparison(c.value());
  EXPECT_NEAR(gpu->shift, 10.0, 1.0);
  ASSERT_TRUE(gpu->ci_low && gpu->ci_high);
  EXPECT_LE(*gpu->ci_low, 10.0 + 0.5);
  EXPECT_GE(*gpu->ci_high, 10.0 - 0.5);
  EXPECT_TRUE(gpu->fails);
  EXPECT_EQ(row(c.value(), "cpu_processing", "p50")->call, ChangeCall::no_change);
  // The sample of each side is its runs' totals; A and B are their means.
  EXPECT_EQ(gpu->a_runs.size(), 5u);
  EXPECT_DOUBLE_EQ(*gpu->a_total, mean_of(gpu->a_runs));
  size_t with_data = 0;
  for (const CompareRow& r : c->rows) with_data += r.call == ChangeCall::no_data ? 0 : 1;
  EXPECT_EQ(c->tested_rows, with_data);
  EXPECT_GE(with_data, 16u);
}

// Effects tied to one process move all of its blocks: the block test calls
// them, the test over runs sees them as the noise they are.
TEST(RunComparison, AProcessEffectIsCalledOverBlocksButNotOverRuns) {
  const RunResult one_a = read(SimRunSpec{.noise_seed = 1, .host_scale = 1.0});
  const RunResult one_b = read(SimRunSpec{.noise_seed = 2, .schedule_seed = 2, .host_scale = 1.09});
  Result<Comparison> blocks = compare_results(one_a, one_b, "a", "b", CompareOptions{});
  ASSERT_TRUE(blocks.ok());
  EXPECT_EQ(row(blocks.value(), "cpu_processing", "p50")->call, ChangeCall::regression)
      << format_comparison(blocks.value());
  // Runs whose process effects spread as they do from run to run: no change.
  const Side a = side_of({{.noise_seed = 1, .host_scale = 1.0},
                          {.noise_seed = 3, .schedule_seed = 3, .host_scale = 1.07},
                          {.noise_seed = 5, .schedule_seed = 5, .host_scale = 0.96}});
  const Side b = side_of({{.noise_seed = 2, .schedule_seed = 2, .host_scale = 1.09},
                          {.noise_seed = 4, .schedule_seed = 4, .host_scale = 0.98},
                          {.noise_seed = 6, .schedule_seed = 6, .host_scale = 1.03}});
  Result<Comparison> runs = compare_sides(a.side(), b.side(), CompareOptions{});
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(runs->changes, 0u) << format_comparison(runs.value());
}

TEST(RunComparison, TheSameRunTwiceInASideIsRefused) {
  const RunResult a = read(SimRunSpec{.noise_seed = 1});
  const RunResult b = read(SimRunSpec{.noise_seed = 2});
  CompareSide sa{{&a, &b, &a}, {"x", "y", "x again"}};
  CompareSide sb{{&b}, {"y"}};
  Result<Comparison> c = compare_sides(sa, sb, CompareOptions{});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("same run"), std::string::npos) << c.error().message;
}

TEST(RunComparison, DifferentSettingsAreRefusedUnlessAllowed) {
  const RunResult a = read(SimRunSpec{.noise_seed = 1});
  const RunResult interval = read_edited(SimRunSpec{.noise_seed = 2}, [](auto& doc) {
    doc["settings"]["interval_ns"]["max"] =
        doc["settings"]["interval_ns"]["max"].template get<int64_t>() * 2;
  });
  const RunResult workload = read_edited(SimRunSpec{.noise_seed = 2}, [](auto& doc) {
    doc["modes"]["baseline"]["workload"]["complexity"] = 200;
  });
  const RunResult mode = read_edited(SimRunSpec{.noise_seed = 2}, [](auto& doc) {
    doc["settings"]["mode"] = doc["settings"]["mode"] == "latency" ? "baseline" : "latency";
  });
  for (const auto& [b, what] :
       {std::pair{&interval, "interval range"}, std::pair{&workload, "complexity"},
        std::pair{&mode, "mode asked"}}) {
    Result<Comparison> c = compare_results(a, *b, "a", "b", CompareOptions{});
    ASSERT_FALSE(c.ok()) << what;
    EXPECT_NE(c.error().message.find(what), std::string::npos) << c.error().message;
    EXPECT_NE(c.error().message.find("--allow-different-settings"), std::string::npos);
    CompareOptions allow;
    allow.allow_different_settings = true;
    Result<Comparison> allowed = compare_results(a, *b, "a", "b", allow);
    ASSERT_TRUE(allowed.ok()) << allowed.error().message;
    EXPECT_TRUE(has_note(allowed.value(), what)) << format_comparison(allowed.value());
  }
}

// A stage whose A reference is 0 has no relative change: a significant
// regression of it (at least --min-effect-us) is called and fails the gate,
// whatever PCT is.
TEST(RunComparison, ARegressionFromAZeroReferenceFailsTheGate) {
  const char* kStage = "cpu_end_to_submit_start";
  auto set_p50 = [&](double us) {
    return [us, kStage](auto& doc) {
      for (auto& block : doc["modes"]["baseline"]["blocks"]) block["stages"][kStage]["p50"] = us;
      doc["modes"]["baseline"]["total"]["stages"][kStage]["p50"] = us;
    };
  };
  const RunResult a = read_edited(SimRunSpec{.noise_seed = 1}, set_p50(0.0));
  const RunResult b = read_edited(SimRunSpec{.noise_seed = 2}, set_p50(5.0));
  CompareOptions o;
  o.fail_on_regression_pct = 10;
  Result<Comparison> c = compare_results(a, b, "a", "b", o);
  ASSERT_TRUE(c.ok()) << c.error().message;
  const CompareRow* r = row(c.value(), kStage, "p50");
  ASSERT_NE(r, nullptr);
  EXPECT_FALSE(r->relative.has_value());
  EXPECT_EQ(r->call, ChangeCall::regression) << format_comparison(c.value());
  EXPECT_TRUE(r->fails);
  EXPECT_TRUE(c->fails);
  // Below --min-effect-us it is not called.
  o.min_effect_us = 6;
  Result<Comparison> small = compare_results(a, b, "a", "b", o);
  EXPECT_EQ(row(small.value(), kStage, "p50")->call, ChangeCall::no_change);
  EXPECT_FALSE(row(small.value(), kStage, "p50")->fails);
}

// Holm over the rows: a row significant on its own at alpha but not after
// the adjustment is no change; the family is the tested rows.
TEST(RunComparison, CallsAreFamilyWiseOverTheTestedRows) {
  const RunResult a = read(SimRunSpec{.noise_seed = 1});
  const RunResult b = read(SimRunSpec{.noise_seed = 2, .extra_gpu_ns = 10'000});
  Result<Comparison> c = compare_results(a, b, "a", "b", CompareOptions{});
  ASSERT_TRUE(c.ok());
  size_t with_data = 0;
  for (const CompareRow& r : c->rows) {
    if (r.call == ChangeCall::no_data) continue;
    ++with_data;
    EXPECT_GE(r.p_adjusted, r.p_value) << r.series;
    if (r.call == ChangeCall::regression || r.call == ChangeCall::improvement) {
      EXPECT_LT(r.p_adjusted, 0.05);
    }
  }
  EXPECT_EQ(c->tested_rows, with_data);
  // The smallest raw p times the family size is the smallest adjusted p.
  double min_p = 1, min_adj = 1;
  for (const CompareRow& r : c->rows) {
    if (r.call == ChangeCall::no_data) continue;
    min_p = std::min(min_p, r.p_value);
    min_adj = std::min(min_adj, r.p_adjusted);
  }
  EXPECT_NEAR(min_adj, std::min(1.0, min_p * static_cast<double>(with_data)), 1e-15);
}

// Captures (kind "capture"): their per-frame figures are the rows, the
// unit is the capture (no blocks). One a side: each side's values and the
// shift, nothing tested; three a side: a slower frame rate is called.
TEST(RunComparison, CapturesCompareTheirFrameFigures) {
  using testing::capture_result;
  const RunResult a = capture_result({.seed = 1}),
                  b = capture_result({.seed = 2, .frame_us = 20'000});
  Result<Comparison> one = compare_results(a, b, "a", "b", CompareOptions{});
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(one->unit, CompareUnit::runs);
  EXPECT_TRUE(has_note(one.value(), "captures have no blocks")) << format_comparison(one.value());
  const CompareRow* bp = row(one.value(), "between_presents", "p50");
  ASSERT_NE(bp, nullptr);
  EXPECT_EQ(bp->mode, "capture");
  EXPECT_EQ(bp->call, ChangeCall::too_few_runs);
  EXPECT_NEAR(bp->shift, 20'000 - 16'667, 16'667 * 0.1);
  EXPECT_EQ(row(one.value(), "until_displayed", "p50")->call, ChangeCall::no_data);
  EXPECT_EQ(one->tested_rows, 0u);

  Side sa, sb;
  for (uint64_t i = 1; i <= 3; ++i) {
    sa.runs.push_back(capture_result({.seed = i}));
    sb.runs.push_back(capture_result({.seed = 10 + i, .frame_us = 20'000}));
  }
  Result<Comparison> three = compare_sides(sa.side(), sb.side(), CompareOptions{});
  ASSERT_TRUE(three.ok()) << three.error().message;
  EXPECT_EQ(row(three.value(), "between_presents", "p50")->call, ChangeCall::regression)
      << format_comparison(three.value());
  EXPECT_EQ(row(three.value(), "gpu_busy", "p50")->call, ChangeCall::no_change)
      << format_comparison(three.value());
}

TEST(RunComparison, CapturesOfAnotherProgramOrALatencyRunAreRefused) {
  using testing::capture_result;
  const RunResult a = capture_result({.seed = 1});
  const RunResult other = capture_result({.seed = 2, .program = "glxgears"});
  Result<Comparison> c = compare_results(a, other, "a", "b", CompareOptions{});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("program"), std::string::npos) << c.error().message;
  CompareOptions allow;
  allow.allow_different_settings = true;
  EXPECT_TRUE(compare_results(a, other, "a", "b", allow).ok());
  const RunResult latency = read(SimRunSpec{.noise_seed = 1});
  c = compare_results(a, latency, "a", "b", CompareOptions{});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("one kind"), std::string::npos) << c.error().message;
}

}  // namespace
}  // namespace latlab
