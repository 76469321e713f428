#include "latlab/bench/latency_report.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "bench/lockstep.hpp"
#include "latlab/bench/load_calibration.hpp"
#include "latlab/bench/sim.hpp"
#include "report/html/report_html.hpp"
#include "report/result_json.hpp"
#include "report/result_reader.hpp"
#include "temp_dir.hpp"

namespace latlab {
namespace {

namespace fs = std::filesystem;

using test::slurp;  // temp_dir.hpp

struct TempDir : test::TempDir {
  TempDir() : test::TempDir("latlab-report-test") {}
};

// Baseline and a costlier Loaded in interleaved blocks (lockstep): 21
// measured frames per mode in 2 blocks (11 + 10); `stop_at_frame` (a device
// frame id) sets the interrupt when the consumer reaches it.
LatencyRun two_mode_run(std::optional<uint64_t> stop_at_frame = std::nullopt,
                        std::optional<GpuTimeTarget> loaded_target = std::nullopt) {
  SimDesc dd;
  dd.time = SimTime::virtual_time;
  dd.virtual_start_ns = 1'000'000'000;
  SimDevice dev(dd);
  std::atomic<bool> interrupt{false};
  LockstepScript script;
  script.cpu_cost_ns = [&](uint64_t id) {
    if (stop_at_frame && id >= *stop_at_frame) interrupt.store(true);
    return 2'000;
  };
  LatencyRunEnv env;
  env.device = &dev;
  env.time = &dev.time();
  env.lockstep = &script;
  env.interrupt = &interrupt;
  LatencyRunDesc d;
  d.frames = 21;
  d.blocks = 2;
  d.warmup_frames = 2;
  FrameWorkload loaded{4, 8, 64, 64, WorkloadForm::compute};
  d.modes = {LatencyModeDesc{"baseline", d.workload, std::nullopt, std::nullopt},
             LatencyModeDesc{"loaded", loaded, loaded_target, std::nullopt}};
  Result<LatencyRun> r = run_latency(d, env);
  EXPECT_TRUE(r.ok());
  return std::move(r.value());
}

LatencyRun small_run(bool bare = false, int64_t first_call_on_thread_ns = 0) {
  SimDesc dd;
  dd.first_call_on_thread_ns = first_call_on_thread_ns;
  dd.time = SimTime::virtual_time;
  dd.virtual_start_ns = 1'000'000'000;
  dd.script = [](uint64_t f) {
    SimFrameScript s;
    if (f == 4) s.gpu_status = QueryStatus::invalid;
    return s;
  };
  auto dev = std::make_unique<SimDevice>(dd);
  SimDevice* raw = dev.get();
  auto mapper = make_function_mapper(
      [raw](uint64_t t) {
        return std::optional<MappedTime>(MappedTime{raw->host_at(t), 5});
      },
      "sim truth");
  LockstepScript script;
  script.cpu_cost_ns = [](uint64_t) { return 2'000; };
  LatencyRunEnv env;
  env.device = dev.get();
  env.mapper = mapper.get();
  env.time = &dev->time();
  env.lockstep = &script;
  LatencyRunDesc d;
  d.frames = 20;
  d.blocks = 2;
  d.warmup_frames = 3;
  d.bare_comparison = bare;
  Result<LatencyRun> r = run_latency(d, env);
  EXPECT_TRUE(r.ok());
  return std::move(r.value());
}

RunMeta meta() {
  RunMeta m;
  m.backend = "sim";
  m.created_utc = utc_now_iso8601();
  m.machine = collect_machine_info();
  return m;
}

TEST(LatencyReport, JsonHasSchemaVersionAndEveryPart) {
  const LatencyRun run = small_run();
  const nlohmann::ordered_json j = latency_run_to_json(run, meta());
  // Round trip through text: the document is valid JSON.
  const nlohmann::json back = nlohmann::json::parse(j.dump());
  EXPECT_EQ(back.at("schema_version"), kResultSchemaVersion);
  EXPECT_EQ(back.at("partial"), false);
  for (const char* key : {"machine", "host_clock", "device", "clock_model", "settings",
                          "block_order", "modes", "diagnostics", "unavailable"}) {
    EXPECT_TRUE(back.contains(key)) << key;
  }
  EXPECT_FALSE(back["machine"]["hostname"].get<std::string>().empty());
  EXPECT_EQ(back["host_clock"]["name"], "CLOCK_MONOTONIC");
  EXPECT_EQ(back["settings"]["seed"], 1);
  EXPECT_EQ(back["settings"]["frames_per_block"], nlohmann::json::array({10, 10}));
  const auto& base = back["modes"]["baseline"];
  ASSERT_EQ(base["blocks"].size(), 2u);
  EXPECT_FALSE(base["warmup"].is_null());
  const auto& total = base["total"];
  EXPECT_EQ(total["frames"], 20);
  EXPECT_EQ(total["stages"].size(), 7u);
  EXPECT_EQ(total["stages"]["cpu_processing"]["count"], 20);
  EXPECT_DOUBLE_EQ(total["stages"]["cpu_processing"]["p50"].get<double>(), 2.0);
  EXPECT_EQ(total["stages"]["gpu_execution"]["missing"], 1);  // frame 4 (measured block 0)
  EXPECT_EQ(total["core_latency"]["missing"], 1);
  EXPECT_EQ(total["fence_latency"]["missing"], 0);
  EXPECT_TRUE(total.contains("timer_lateness"));
  EXPECT_EQ(total["missing_markers"]["gpu_status_counts"]["invalid"], 1);
  EXPECT_EQ(back["block_order"].size(), 3u);
  EXPECT_TRUE(back["diagnostics"]["bare_loop"].is_null());
}

// settings.frames_per_block is the plan: one size per block index (the
// same in every mode), not one entry per block that ran.
TEST(LatencyReport, FramesPerBlockIsThePlannedSizeOfEachBlockIndex) {
  const LatencyRun full = two_mode_run();
  ASSERT_FALSE(full.partial) << full.partial_reason;
  EXPECT_EQ(latency_run_to_json(full, meta())["settings"]["frames_per_block"],
            nlohmann::json::array({11, 10}));
  // Stopped in Loaded's block 0 (device ids: 2 + 2 warm-up, then 11 of
  // Baseline's block 0): the plan is unchanged.
  const LatencyRun cut = two_mode_run(uint64_t{4 + 11 + 3});
  ASSERT_TRUE(cut.partial);
  EXPECT_EQ(latency_run_to_json(cut, meta())["settings"]["frames_per_block"],
            nlohmann::json::array({11, 10}));
}

TEST(LatencyReport, OneSampleHasNullStddevNotZero) {
  const auto j = distribution_to_json(summarize(std::vector<double>{5.0}));
  EXPECT_EQ(j["count"], 1);
  EXPECT_DOUBLE_EQ(j["p50"].get<double>(), 5.0);
  EXPECT_TRUE(j["stddev"].is_null()) << j.dump();
  const auto two = distribution_to_json(summarize(std::vector<double>{5.0, 7.0}));
  ASSERT_TRUE(two["stddev"].is_number()) << two.dump();
  EXPECT_NEAR(two["stddev"].get<double>(), std::sqrt(2.0), 1e-12);
}

TEST(LatencyReport, EmptyDistributionHasNullStatisticsNotZeros) {
  Distribution d;
  d.missing = 12;
  const auto j = distribution_to_json(d);
  EXPECT_EQ(j["count"], 0);
  EXPECT_EQ(j["missing"], 12);
  EXPECT_TRUE(j["p50"].is_null());
  EXPECT_TRUE(j["mean"].is_null());
  EXPECT_TRUE(j["p99_9"].is_null());
}

// A calibration that never fitted (or never verified, or measured no
// spread) writes null for what it does not have, never 0/0.
TEST(LatencyReport, LoadCalibrationWithoutAFitWritesNull) {
  LoadCalibrationReport r;
  r.target_ms = 8.3;
  r.complexity = 4;
  r.outcome = "test";
  auto j = load_calibration_to_json(r);
  EXPECT_TRUE(j["fit"].is_null()) << j["fit"];
  EXPECT_TRUE(j["p5_ms"].is_null()) << j["p5_ms"];
  EXPECT_TRUE(j["noise_fraction"].is_null()) << j["noise_fraction"];
  EXPECT_TRUE(j["gpu_ms"]["p50"].is_null());

  r.fit_fixed_ms = 0.5;  // half a fit is no fit
  EXPECT_TRUE(load_calibration_to_json(r)["fit"].is_null());
  r.fit_ms_per_complexity = 0.25;
  r.verified = true;
  r.p5_ms = 7.9;
  j = load_calibration_to_json(r);
  EXPECT_DOUBLE_EQ(j["fit"]["fixed_ms"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["fit"]["ms_per_complexity"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(j["p5_ms"].get<double>(), 7.9);
}

TEST(LatencyReport, BareComparisonAppearsUnderDiagnostics) {
  const LatencyRun run = small_run(true);
  const nlohmann::json j = nlohmann::json::parse(latency_run_to_json(run, meta()).dump());
  const auto& diag = j["diagnostics"];
  EXPECT_EQ(diag["bare_loop"]["latency"]["count"], 20);
  EXPECT_EQ(diag["raw_sleep"]["lateness"]["count"], 20);
  EXPECT_EQ(diag["bare_loop"]["blocks"].size(), 2u);
  EXPECT_TRUE(diag["comparison"]["fence_latency_p50_over_bare_p50"].is_number());
  EXPECT_TRUE(diag["comparison"]["timer_lateness_p99_over_raw_p99"]
                  .is_null());  // raw p99 is 0 on a virtual clock
}

// Each block's thread preparation, in block_order's order: null where the
// block prepared no thread (raw sleep); the one thread of lockstep pays the
// sim's first-call cost in the first block only.
TEST(LatencyReport, ThreadPreparationIsBookkeepingPerBlock) {
  const LatencyRun run = small_run(true, 7'000'000);
  const nlohmann::json j = nlohmann::json::parse(latency_run_to_json(run, meta()).dump());
  const auto& prep = j["diagnostics"]["bookkeeping"]["thread_preparation_ns"];
  const auto& order = j["block_order"];
  ASSERT_EQ(prep.size(), order.size());
  ASSERT_EQ(order.size(), 7u);  // warm-up, then measured, bare loop, raw sleep twice
  EXPECT_EQ(prep[0], 7'000'000);
  for (size_t i = 1; i < prep.size(); ++i) {
    if (order[i]["kind"] == "raw_sleep") {
      EXPECT_TRUE(prep[i].is_null()) << i;
    } else {
      EXPECT_EQ(prep[i], 0) << i;
    }
  }
  EXPECT_EQ(j["diagnostics"]["bookkeeping"]["thread_preparation_total_ns"], 7'000'000);
}

TEST(LatencyReport, ComparisonGivesEachObserverAgainstTheReferencePath) {
  const LatencyRun run = small_run(true);
  const nlohmann::json j = nlohmann::json::parse(latency_run_to_json(run, meta()).dump());
  const auto& cmp = j["diagnostics"]["comparison"];
  for (const char* o : {"core_latency", "fence_latency"}) {
    EXPECT_TRUE(cmp["observers"][o]["p50_ratio"].is_number()) << o;
    EXPECT_TRUE(cmp["observers"][o]["p99_ratio"].is_number()) << o;
  }
  // The reference adds no CPU step: the measured path is slower.
  EXPECT_GT(cmp["observers"]["core_latency"]["p50_ratio"].get<double>(), 1.0);
  // Device frame 4 (measured) has invalid timestamps: its pair is missing.
  EXPECT_EQ(cmp["core_latency_without_deliberate"]["distribution"]["count"], 19);
  EXPECT_EQ(cmp["core_latency_without_deliberate"]["distribution"]["missing"], 1);
  EXPECT_TRUE(cmp["workload_submit_cpu_span"]["p50_ratio"].is_number());
  const auto& ref = j["diagnostics"]["bare_loop"];
  EXPECT_TRUE(ref["what"].is_string());
  EXPECT_EQ(ref["core_latency"]["count"], 20);
  // No CPU step on the reference path: that stage is missing, never 0.
  EXPECT_EQ(ref["stages"]["cpu_processing"]["count"], 0);
  EXPECT_EQ(ref["stages"]["cpu_processing"]["missing"], 20);
}

TEST(LatencyReport, AtomicWriteReplacesTheFile) {
  TempDir dir;
  const fs::path p = dir.path / "result.json";
  ASSERT_TRUE(write_file_atomic(p, "old").ok());
  ASSERT_TRUE(write_file_atomic(p, "new content").ok());
  EXPECT_EQ(slurp(p), "new content");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator{}),
            1);  // no temp left
}

TEST(LatencyReport, FailedWriteMidwayLeavesTheOldFileIntact) {
  // RLIMIT_FSIZE makes the write itself fail part-way, even for root.
  TempDir dir;
  const fs::path p = dir.path / "result.json";
  ASSERT_TRUE(write_file_atomic(p, "previous result").ok());
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const Result<void> r = write_file_atomic(p, std::string(1 << 20, 'x'));
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("result.json"), std::string::npos) << r.error().message;
  EXPECT_EQ(slurp(p), "previous result");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator{}),
            1);  // temp removed
}

TEST(LatencyReport, MissingDirectoryFailsWithAMessage) {
  TempDir dir;
  const fs::path p = dir.path / "result.json";
  ASSERT_TRUE(write_file_atomic(p, "previous").ok());
  const Result<void> missing_dir = write_file_atomic(dir.path / "nope" / "r.json", "x");
  ASSERT_FALSE(missing_dir.ok());
  EXPECT_NE(missing_dir.error().message.find("nope"), std::string::npos);
  EXPECT_EQ(slurp(p), "previous");
}

TEST(LatencyReport, ReadOnlyDirectoryFailsWithoutTouchingTheOldFile) {
  TempDir dir;
  const fs::path p = dir.path / "result.json";
  ASSERT_TRUE(write_file_atomic(p, "previous").ok());
  if (geteuid() == 0) GTEST_SKIP() << "running as root: a read-only directory does not stop root";
  fs::permissions(dir.path, fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_FALSE(write_file_atomic(p, "new").ok());
  fs::permissions(dir.path, fs::perms::owner_all);
  EXPECT_EQ(slurp(p), "previous");
}

TEST(LatencyReport, FramesCsvHasOneRowPerScheduledFrameAndEmptyCellsForAbsentMarkers) {
  TempDir dir;
  const LatencyRun run = small_run();
  const fs::path p = dir.path / "frames.csv";
  ASSERT_TRUE(write_frames_csv(p, run).ok());
  std::ifstream in(p);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  ASSERT_EQ(lines.size(), 1u + 23u);  // header + warm-up 3 + measured 20
  EXPECT_EQ(lines[0].rfind("frame_id,block_kind,block_index,deadline_ns", 0), 0u);
  const auto columns = [](const std::string& s) { return std::count(s.begin(), s.end(), ',') + 1; };
  for (const auto& l : lines) EXPECT_EQ(columns(l), columns(lines[0]));
  // Frame 4 had invalid GPU timestamps: its status says so and the tick cells are empty.
  EXPECT_NE(lines[5].find(",invalid,ok,"), std::string::npos) << lines[5];
  EXPECT_NE(lines[5].find(",,,,,"), std::string::npos) << lines[5];
  EXPECT_EQ(lines[1].rfind("0,warmup,0,", 0), 0u);
  EXPECT_EQ(lines[4].rfind("3,measured,0,", 0), 0u);
}

TEST(LatencyReport, TableNamesEveryStage) {
  const std::string t = format_run_table(small_run());
  for (size_t i = 0; i < kSeriesCount; ++i) {
    EXPECT_NE(t.find(to_string(static_cast<Series>(i))), std::string::npos)
        << to_string(static_cast<Series>(i));
  }
}

// A Loaded mode that ran far from the load it was calibrated to must not
// pass for Loaded: a mode whose median gpu_execution misses its target is
// off target in the result, the console and the HTML report.
// (The sim's frames take 50 us of GPU time.)
TEST(LatencyReport, LoadedFarFromItsTargetIsMarkedOffTargetEverywhere) {
  const LatencyRun run = two_mode_run(std::nullopt, GpuTimeTarget{8.333333, 0.02});
  ASSERT_FALSE(run.partial) << run.partial_reason;
  ASSERT_EQ(run.modes.size(), 2u);
  EXPECT_FALSE(run.modes[0].gpu_target.has_value()) << "Baseline has no target";
  ASSERT_TRUE(run.modes[1].gpu_target.has_value());
  const GpuTargetCheck& c = *run.modes[1].gpu_target;
  ASSERT_TRUE(c.measured_ms.has_value());
  EXPECT_NEAR(*c.measured_ms, 0.05, 1e-9);
  EXPECT_NEAR(*c.error_fraction, 0.05 / 8.333333 - 1.0, 1e-9);
  EXPECT_EQ(c.off_target, std::optional<bool>(true));

  const nlohmann::ordered_json doc = latency_run_to_json(run, meta());
  const auto& loaded = doc["modes"]["loaded"];
  EXPECT_EQ(loaded["available"], true);
  EXPECT_EQ(loaded["off_target"], true);
  EXPECT_DOUBLE_EQ(loaded["gpu_target"]["target_ms"].get<double>(), 8.333333);
  EXPECT_DOUBLE_EQ(loaded["gpu_target"]["tolerance"].get<double>(), 0.02);
  EXPECT_NEAR(loaded["gpu_target"]["measured_ms"].get<double>(), 0.05, 1e-9);
  EXPECT_EQ(doc["modes"]["baseline"]["off_target"], false);
  EXPECT_TRUE(doc["modes"]["baseline"]["gpu_target"].is_null());
  // The reader still takes the document (and files without the keys).
  Result<ResultDocument> back = read_result_json(doc.dump(), "test");
  ASSERT_TRUE(back.ok()) << back.error().message;

  const std::string table = format_run_table(run);
  EXPECT_NE(table.find("* OFF TARGET loaded: gpu_execution p50 0.050 ms"), std::string::npos)
      << table;
  EXPECT_NE(table.find("loaded* (complexity 8)"), std::string::npos) << table;

  // The report of the run's result and of its file read back.
  RunResult r;
  r.meta = meta();
  r.latency = run;
  r.device = run.device;
  TempDir dir;
  for (const RunResult* shown : {&r, &back->result}) {
    const ReportInput in{"test", shown};
    ASSERT_TRUE(write_html_report((dir.path / "r.html").string(), std::span(&in, 1)).ok());
    const std::string html = slurp(dir.path / "r.html");
    EXPECT_NE(html.find("loaded is OFF TARGET: gpu_execution p50 0.050 ms vs target 8.333 ms"),
              std::string::npos);
    EXPECT_NE(html.find("yes, OFF TARGET"), std::string::npos);
  }
}

TEST(LatencyReport, LoadedWithinItsTargetIsNotOffTarget) {
  const LatencyRun run = two_mode_run(std::nullopt, GpuTimeTarget{0.0505, 0.02});
  ASSERT_TRUE(run.modes[1].gpu_target.has_value());
  EXPECT_EQ(run.modes[1].gpu_target->off_target, std::optional<bool>(false));
  const nlohmann::ordered_json doc = latency_run_to_json(run, meta());
  EXPECT_EQ(doc["modes"]["loaded"]["off_target"], false);
  const std::string table = format_run_table(run);
  EXPECT_EQ(table.find("OFF TARGET"), std::string::npos) << table;
  EXPECT_NE(table.find("(within 2%)"), std::string::npos) << table;
}

// The console's "consumer behind" line gives each mode's own count: one
// mode's count alone would hide another mode far behind.
TEST(LatencyReport, TableShowsConsumerBehindPerMode) {
  LatencyRun run;
  run.desc.blocks = 2;
  run.modes.resize(2);
  run.modes[0].name = "baseline";
  run.modes[0].measured_frames = 200;
  run.modes[0].consumer_behind = 0;
  run.modes[1].name = "loaded";
  run.modes[1].measured_frames = 200;
  run.modes[1].consumer_behind = 196;
  run.total = run.modes[0].total;
  run.consumer_behind = run.modes[0].consumer_behind;
  const std::string t = format_run_table(run);
  EXPECT_NE(t.find("loaded on 196 of 200 frames"), std::string::npos) << t;
  EXPECT_NE(t.find("baseline on 0 of 200 frames"), std::string::npos) << t;

  run.modes.resize(1);
  run.modes[0].consumer_behind = 7;
  const std::string one = format_run_table(run);
  EXPECT_NE(one.find("consumer behind on 7 of 200 frames"), std::string::npos) << one;
  run.modes[0].consumer_behind = 0;
  EXPECT_EQ(format_run_table(run).find("consumer behind"), std::string::npos);
}

}  // namespace
}  // namespace latlab
