// The latency score of an engine run (src/report/score_report.hpp): its
// components are the run's own Core Latency p50/p99, a lockstep sim run on
// virtual time gives the same score every time, and the result's `score`
// object reads back into RunResult::score exactly (or is refused, naming
// the key); results written before the score say why they have none.
#include "report/score_report.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "bench/lockstep.hpp"
#include "latlab/bench/sim.hpp"
#include "report/result_json.hpp"
#include "report/result_reader.hpp"
#include "unit/sim_result_doc.hpp"

namespace latlab {
namespace {

using json = nlohmann::ordered_json;

// Baseline and Loaded interleaved, lockstep on virtual time: deterministic
// for its seeds (sim_result_doc.hpp's scripted noise).
LatencyRun two_mode_run(uint64_t noise_seed, uint32_t frames = 60, uint32_t blocks = 3) {
  SimDesc dd;
  dd.time = SimTime::virtual_time;
  dd.virtual_start_ns = 1'000'000'000;
  dd.script = [noise_seed](uint64_t f) {
    SimFrameScript s;
    s.queue_delay_ns = 20'000 + testing::noise_ns(noise_seed, 1, f, 20'000);
    s.gpu_duration_ns = 40'000 + testing::noise_ns(noise_seed, 2, f, 20'000);
    s.fence_wake_delay_ns = 5'000;
    return s;
  };
  SimDevice dev(dd);
  auto mapper = make_function_mapper(
      [&dev](uint64_t t) {
        return std::optional<MappedTime>(MappedTime{dev.host_at(t), 5});
      },
      "sim truth");
  LockstepScript script;
  script.cpu_cost_ns = [](uint64_t) { return int64_t{20'000}; };
  script.consumer_wake_delay_ns = [noise_seed](uint64_t f) {
    return 30'000 + testing::noise_ns(noise_seed, 5, f, 30'000);
  };
  LatencyRunEnv env;
  env.device = &dev;
  env.mapper = mapper.get();
  env.time = &dev.time();
  env.lockstep = &script;
  LatencyRunDesc d;
  d.frames = frames;
  d.blocks = blocks;
  d.warmup_frames = 4;
  d.modes = {{"baseline", {}, std::nullopt, std::nullopt},
             {"loaded", {.passes = 4, .complexity = 8}, std::nullopt, std::nullopt}};
  Result<LatencyRun> r = run_latency(d, env);
  EXPECT_TRUE(r.ok()) << (r ? "" : r.error().message);
  return r ? std::move(r.value()) : LatencyRun{};
}

const Distribution& core(const LatencyModeResult& m) {
  return m.total[static_cast<size_t>(Series::core_latency)];
}

TEST(ScoreReport, ComponentsAreTheRunsOwnCoreLatencyP50AndP99) {
  const LatencyRun run = two_mode_run(1);
  ASSERT_EQ(run.modes.size(), 2u);
  const LatencyScore s = latency_score_of(run, nullptr);
  ASSERT_TRUE(s.value.has_value()) << s.unavailable_reason;
  ASSERT_EQ(s.components.size(), 4u);
  EXPECT_EQ(s.components[0].value_us, core(run.modes[0]).p50);
  EXPECT_EQ(s.components[1].value_us, core(run.modes[0]).p99);
  EXPECT_EQ(s.components[2].value_us, core(run.modes[1]).p50);
  EXPECT_EQ(s.components[3].value_us, core(run.modes[1]).p99);
  EXPECT_DOUBLE_EQ(*s.value, score_of_components({core(run.modes[0]).p50, core(run.modes[0]).p99,
                                                  core(run.modes[1]).p50, core(run.modes[1]).p99}));
  EXPECT_LE(*s.ci_low, *s.value);
  EXPECT_GE(*s.ci_high, *s.value);
  EXPECT_EQ(s.baseline_blocks, 3u);
  EXPECT_EQ(s.loaded_blocks, 3u);
}

TEST(ScoreReport, TheSameSeedGivesTheSameScoreAndAnotherSeedAnother) {
  const LatencyScore a = latency_score_of(two_mode_run(5), nullptr);
  const LatencyScore b = latency_score_of(two_mode_run(5), nullptr);
  const LatencyScore c = latency_score_of(two_mode_run(6), nullptr);
  ASSERT_TRUE(a.value.has_value()) << a.unavailable_reason;
  EXPECT_EQ(a, b);
  EXPECT_NE(*a.value, *c.value);
}

TEST(ScoreReport, ABaselineOnlyRunHasNoScoreAndItsResultSaysWhy) {
  LatencyRun run;
  const std::string doc = testing::sim_result_doc({.frames = 20, .blocks = 2}, &run);
  const LatencyScore s = latency_score_of(run, nullptr);
  EXPECT_FALSE(s.value.has_value());
  EXPECT_NE(s.unavailable_reason.find("no Loaded mode"), std::string::npos) << s.unavailable_reason;
  const json j = json::parse(doc);
  ASSERT_TRUE(j.contains("score"));
  EXPECT_TRUE(j["score"]["value"].is_null());
  EXPECT_TRUE(j["score"]["ci95"].is_null());
  EXPECT_EQ(j["score"]["unavailable_reason"], s.unavailable_reason);
}

TEST(ScoreReport, LoadedThatDidNotRunOrRanOffTargetSaysSo) {
  RunResult r;
  r.latency = two_mode_run(2);
  r.loaded.asked = true;
  r.loaded.unavailable = "the target is beyond the reachable range";
  LatencyRun base_only = *r.latency;
  base_only.modes.pop_back();
  EXPECT_EQ(latency_score_of(base_only, &r).unavailable_reason,
            "Loaded did not run: the target is beyond the reachable range");
  LatencyRun off = *r.latency;
  off.modes[1].gpu_target = GpuTargetCheck{{8.333333, 0.02}, 9.1, 0.092, true, std::nullopt};
  const LatencyScore s = latency_score_of(off, nullptr);
  EXPECT_FALSE(s.value.has_value());
  EXPECT_NE(s.unavailable_reason.find("Loaded is off target (gpu_execution p50 9.100 ms against "
                                      "its 8.333 ms target +-2%)"),
            std::string::npos)
      << s.unavailable_reason;
}

TEST(ScoreReport, TheResultsScoreReadsBackExactly) {
  const LatencyRun run = two_mode_run(3);
  const LatencyScore s = latency_score_of(run, nullptr);
  RunMeta meta;
  meta.backend = "sim";
  const std::string text = latency_run_to_json(run, meta).dump(2);
  Result<ResultDocument> back = read_result_json(text, "doc");
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_TRUE(back->result.score.has_value());
  EXPECT_EQ(*back->result.score, s);
  // A RunResult's own score is what its document holds, and reads back.
  RunResult r;
  r.latency = run;
  r.meta = meta;
  attach_latency_scores(r);
  ASSERT_TRUE(r.score.has_value());
  EXPECT_EQ(*r.score, s);
  LatencyScore none;
  none.unavailable_reason = "the run has no Loaded mode";
  r.score = none;
  Result<ResultDocument> n = read_result_json(run_result_to_json(r).dump(2), "none");
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(n->result.score, std::optional<LatencyScore>(none));
  // Nobody scored it: no `score` key, none read back.
  r.score.reset();
  const json unscored = run_result_to_json(r);
  EXPECT_FALSE(unscored.contains("score"));
  Result<ResultDocument> u = read_result_json(unscored.dump(2), "unscored");
  ASSERT_TRUE(u.ok()) << u.error().message;
  EXPECT_FALSE(u->result.score.has_value());
  EXPECT_EQ(score_for_display(u->result).unavailable_reason, "the result holds no score");
}

// Versions 1 and 2 have no `score`: the reader says why, never a 0.
TEST(ScoreReport, AResultWrittenBeforeTheScoreReadsBackWithWhyItHasNone) {
  RunMeta meta;
  json doc = latency_run_to_json(two_mode_run(3), meta);
  doc.erase("score");
  for (int version : {1, 2}) {
    doc["schema_version"] = version;
    Result<ResultDocument> back = read_result_json(doc.dump(2), "old");
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->schema_version, version);
    ASSERT_TRUE(back->result.score.has_value());
    EXPECT_FALSE(back->result.score->value.has_value());
    EXPECT_FALSE(back->result.score->ci_low.has_value());
    EXPECT_TRUE(back->result.score->components.empty());
    EXPECT_EQ(back->result.score->unavailable_reason,
              "the result was written with schema_version " + std::to_string(version) +
                  ", before latlab computed a latency score");
  }
}

// The result document of a two-mode run with its `score` changed by
// `edit`, read back: the error.
std::string error_after(const std::function<void(json&)>& edit) {
  static const json doc = latency_run_to_json(two_mode_run(4), RunMeta{});
  json changed = doc;
  edit(changed["score"]);
  const Result<ResultDocument> r = read_result_json(changed.dump(), "doc");
  return r ? std::string("(read)") : r.error().message;
}

// Several devices: each section's result has its own score, written into
// its section (the top-level keys are the top section's) and read back.
TEST(ScoreReport, EachDeviceSectionHasItsOwnScore) {
  RunResult r;
  for (uint32_t i = 0; i < 2; ++i) {
    DeviceSectionResult d;
    d.head.section = i;
    d.head.backend = "sim";
    d.head.selector = std::to_string(i);
    d.status = "ok";
    RunResult one;
    one.meta.backend = "sim";
    one.latency = two_mode_run(10 + i);
    one.device = one.latency->device;
    d.device_name = one.device.name;
    d.result.push_back(std::move(one));
    r.sections.push_back(std::move(d));
  }
  r.top_section = 1;
  attach_latency_scores(r);
  EXPECT_FALSE(r.score.has_value());  // the sections hold them
  const LatencyScore& s0 = r.sections[0].result[0].score.value();
  const LatencyScore& s1 = r.sections[1].result[0].score.value();
  ASSERT_TRUE(s0.value && s1.value);
  EXPECT_NE(*s0.value, *s1.value);
  const json doc = run_result_to_json(r);
  EXPECT_EQ(doc["score"]["value"], *s1.value);  // the top section's
  EXPECT_EQ(doc["devices_run"]["sections"][0]["result"]["score"]["value"], *s0.value);
  Result<ResultDocument> back = read_result_json(doc.dump(2), "doc");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->result.sections[0].result[0].score, s0);
  EXPECT_EQ(back->result.sections[1].result[0].score, s1);
  EXPECT_EQ(score_for_display(back->result.top_level()), s1);
}

// The reader's message: "doc: not a valid latlab result: <key>: <what>".
std::string refusal(const std::string& key_and_what) {
  return "doc: not a valid latlab result: " + key_and_what;
}

TEST(ScoreReport, AMalformedScoreIsRefusedNamingTheKey) {
  EXPECT_EQ(error_after([](json&) {}), "(read)");
  EXPECT_EQ(error_after([](json& j) {
              j["ci95"] = {2.0, 1.0};
            }),
            refusal("score.ci95: low above high"));
  EXPECT_EQ(error_after([](json& j) { j["ci95"] = "wide"; }),
            refusal("score.ci95: expected [low, high]"));
  EXPECT_EQ(error_after([](json& j) { j["value"] = 0; }),
            refusal("score.value: expected a finite number above 0"));
  EXPECT_EQ(error_after([](json& j) { j.erase("components"); }),
            refusal("score.components: missing"));
  EXPECT_EQ(error_after([](json& j) { j["components"][2]["value_us"] = "x"; }),
            refusal("score.components[2].value_us: expected a number, found a string"));
  EXPECT_EQ(error_after([](json& j) { j["interval"].erase("seed"); }),
            refusal("score.interval.seed: missing"));
  EXPECT_EQ(error_after([](json& j) {
              j["value"] = nullptr;
              j["unavailable_reason"] = "";
            }),
            refusal("score.unavailable_reason: empty, but value is null"));
  EXPECT_EQ(error_after([](json& j) { j = 5; }),
            refusal("score: expected an object, found a number"));
}

TEST(ScoreReport, TheDisplayedScoreSaysWhyThereIsNone) {
  RunResult perf;
  perf.performance.asked = true;
  EXPECT_EQ(score_for_display(perf).unavailable_reason,
            "a Performance-only run has no latency score");
  RunResult capture;
  capture.capture.emplace();
  EXPECT_NE(score_for_display(capture).unavailable_reason.find("a capture has no latency score"),
            std::string::npos);
  RunResult r;
  r.latency = two_mode_run(1);
  EXPECT_EQ(score_for_display(r).unavailable_reason, "the result holds no score");
  attach_latency_scores(r);
  const LatencyScore s = latency_score_of(*r.latency, nullptr);
  EXPECT_EQ(score_for_display(r), s);
  const std::string text = format_score(s);
  EXPECT_NE(text.find("latency score " + score_cell(s)), std::string::npos) << text;
  EXPECT_NE(text.find(score_components_text(s)), std::string::npos) << text;
  EXPECT_NE(text.find("not run-to-run noise"), std::string::npos) << text;
}

}  // namespace
}  // namespace latlab
