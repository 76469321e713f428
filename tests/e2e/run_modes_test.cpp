// `latlab run --mode ...` on the sim backend: Baseline and Loaded in
// interleaved blocks, Loaded unavailable when calibration cannot reach the
// target, Performance mode.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "e2e/cli_run_helpers.hpp"
#include "e2e/result_checks.hpp"

namespace latlab::e2e {
namespace {

double gpu_p50(const nlohmann::json& mode) {
  return mode["total"]["stages"]["gpu_execution"]["p50"].get<double>();
}

TEST(RunModesCli, LatencyRunsBaselineAndLoadedInAlternatingBlocks) {
  TempDir dir;
  const auto out = dir.path / "r.json";
  const auto csv = dir.path / "f.csv";
  const CliResult r = run_cli(
      "run --backend sim --mode latency --time-scale 100 --frames 24 --warmup 2 --blocks 4 "
      "--interval-ms 10-12 --out " +
      out.string() + " --frames-csv " + csv.string());
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("load calibrated: complexity"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("baseline (complexity 1)"), std::string::npos) << "side by side";
  const nlohmann::json j = nlohmann::json::parse(slurp(out));
  EXPECT_EQ(j["settings"]["mode"], "latency");
  const auto& base = j["modes"]["baseline"];
  const auto& loaded = j["modes"]["loaded"];
  ASSERT_TRUE(loaded["available"].get<bool>()) << loaded.dump();
  EXPECT_EQ(base["blocks"].size(), 4u);
  EXPECT_EQ(loaded["blocks"].size(), 4u);
  EXPECT_EQ(base["total"]["frames"], 24);
  EXPECT_EQ(loaded["total"]["frames"], 24);
  EXPECT_EQ(loaded["workload"]["passes"], 4);
  EXPECT_EQ(loaded["workload"]["width"], 1920);
  const auto& cal = j["load_calibration"];
  EXPECT_EQ(cal["source"], "calibrated");
  EXPECT_TRUE(cal["within_tolerance"].get<bool>());
  EXPECT_EQ(loaded["workload"]["complexity"], cal["complexity"]);
  EXPECT_FALSE(cal["steps"].empty());
  EXPECT_NEAR(cal["median_ms"].get<double>(), 8.333333, 0.02 * 8.333333);
  // Loaded frames carry the calibrated load: ~8.3 ms of GPU against ~50 us.
  EXPECT_GT(gpu_p50(loaded), 10.0 * gpu_p50(base));
  EXPECT_NEAR(gpu_p50(loaded) / 1000.0, cal["median_ms"].get<double>(), 0.5);
  expect_result_matches_csv(j, csv, 48);  // both modes, every block

  // Measured blocks alternate baseline, loaded, baseline, ... with block
  // indices in step; frame ids rise in run order after the calibration's.
  std::vector<std::string> measured;
  uint64_t last_first_id = 0;
  bool first = true;
  for (const auto& b : j["block_order"]) {
    if (b["kind"] == "measured") measured.push_back(b["mode"].get<std::string>());
  }
  ASSERT_EQ(measured.size(), 8u);
  for (size_t i = 0; i < measured.size(); ++i)
    EXPECT_EQ(measured[i], i % 2 == 0 ? "baseline" : "loaded") << i;
  for (const char* m : {"baseline", "loaded"}) {
    for (const auto& b : j["modes"][m]["blocks"]) {
      EXPECT_GE(b["first_frame_id"].get<uint64_t>(), cal["frames_submitted"].get<uint64_t>());
    }
  }
  std::vector<std::pair<uint64_t, uint64_t>> order_to_id;
  for (const char* m : {"baseline", "loaded"}) {
    for (const auto& b : j["modes"][m]["blocks"])
      order_to_id.emplace_back(b["order"].get<uint64_t>(), b["first_frame_id"].get<uint64_t>());
  }
  std::sort(order_to_id.begin(), order_to_id.end());
  for (const auto& [order, id] : order_to_id) {
    if (!first) {
      EXPECT_GT(id, last_first_id) << "block " << order;
    }
    first = false;
    last_first_id = id;
  }
  // The CSV names each frame's mode (last column).
  const std::string text = slurp(csv);
  EXPECT_NE(text.find(",mode\n"), std::string::npos);
  EXPECT_NE(text.find(",loaded\n"), std::string::npos);
  EXPECT_NE(text.find(",baseline\n"), std::string::npos);

  // One meaning of "frame id": the CSV's frame_id is the id the device got,
  // rising by one per row in run order across the interleaved modes, and
  // each measured block's first_frame_id in the JSON is its first row's id.
  std::istringstream lines(text);
  std::string line;
  std::getline(lines, line);  // header
  std::vector<std::pair<uint64_t, std::string>> rows;  // frame_id, "kind,index,...,mode"
  while (std::getline(lines, line)) {
    rows.emplace_back(std::stoull(line.substr(0, line.find(','))), line.substr(line.find(',') + 1));
  }
  ASSERT_EQ(rows.size(), 2u * (24 + 2));
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_EQ(rows[i].first, rows[i - 1].first + 1) << "row " << i;
  for (const char* m : {"baseline", "loaded"}) {
    for (const auto& b : j["modes"][m]["blocks"]) {
      const uint64_t id = b["first_frame_id"].get<uint64_t>();
      ASSERT_GE(id, rows.front().first);
      const auto& row = rows[id - rows.front().first].second;
      EXPECT_EQ(row.substr(0, row.find(',')), "measured") << "frame " << id;
      EXPECT_EQ(row.substr(row.rfind(',') + 1), m) << "frame " << id;
    }
  }
}

TEST(RunModesCli, UnreachableLoadLeavesLoadedUnavailableAndBaselineRuns) {
  TempDir dir;
  const auto out = dir.path / "r.json";
  const CliResult r = run_cli(
      "run --backend sim --time-scale 100 --frames 10 --warmup 0 --blocks 2 --interval-ms 10-12 "
      "--load-target-ms 0.001 --out " +
      out.string());
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("Loaded unavailable"), std::string::npos) << r.output;
  const nlohmann::json j = nlohmann::json::parse(slurp(out));
  EXPECT_EQ(j["settings"]["mode"], "latency") << "latency is the default";
  EXPECT_EQ(j["modes"]["baseline"]["total"]["frames"], 10);
  const auto& loaded = j["modes"]["loaded"];
  EXPECT_FALSE(loaded["available"].get<bool>());
  const std::string why = loaded["reason"].get<std::string>();
  EXPECT_NE(why.find("reachable"), std::string::npos) << why;
  EXPECT_NE(why.find("0.001"), std::string::npos) << why;
  bool listed = false;
  for (const auto& u : j["unavailable"]) listed = listed || u["name"] == "loaded";
  EXPECT_TRUE(listed) << j["unavailable"].dump();
  for (const auto& b : j["block_order"]) EXPECT_EQ(b["mode"], "baseline");
}

TEST(RunModesCli, LoadedAloneWithAnUnreachableTargetIsUnavailable) {
  const CliResult r = run_cli(
      "run --backend sim --mode loaded --time-scale 100 --frames 4 --warmup 0 --blocks 1 "
      "--load-target-ms 0.001 --out ''");
  EXPECT_EQ(r.rc, 3) << r.output;
  EXPECT_NE(r.output.find("reachable"), std::string::npos) << r.output;
}

TEST(RunModesCli, GivenLoadComplexitySkipsCalibration) {
  const CliResult r = run_cli(
      "run --backend sim --mode loaded --time-scale 100 --frames 6 --warmup 0 --blocks 2 "
      "--interval-ms 10-12 --load-complexity 100 --load-size 640x480 --out '' --json");
  ASSERT_EQ(r.rc, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output.substr(r.output.find("{\n")));
  EXPECT_EQ(j["load_calibration"]["source"], "given");
  EXPECT_FALSE(j["modes"].contains("baseline"));
  EXPECT_EQ(j["modes"]["loaded"]["workload"]["complexity"], 100);
  // 0.05 ms scripted + 0.002 ns * 640*480*4*100 = 0.2958 ms.
  EXPECT_NEAR(gpu_p50(j["modes"]["loaded"]), 295.8, 1.0);
}

TEST(RunModesCli, PerformanceGivesGpuTimeAndFpsDistributions) {
  TempDir dir;
  const auto out = dir.path / "r.json";
  const CliResult r = run_cli(
      "run --backend sim --mode performance --time-scale 100 --perf-frames 30 --perf-size "
      "640x480 --out " +
      out.string());
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("fps"), std::string::npos) << r.output;
  const nlohmann::json j = nlohmann::json::parse(slurp(out));
  EXPECT_EQ(j["kind"], "performance_run");
  EXPECT_FALSE(j["modes"].contains("baseline"));
  const auto& p = j["modes"]["performance"];
  EXPECT_EQ(p["workload"]["complexity"], 256);
  EXPECT_EQ(p["frames"], 30);
  EXPECT_EQ(p["gpu_ms"]["count"], 30);
  EXPECT_EQ(p["fps"]["count"].get<int>() + p["fps"]["missing"].get<int>(), 30);
  // 0.05 ms + 0.002 ns * 640*480*4*256 = 0.6791 ms of GPU per frame.
  EXPECT_NEAR(p["gpu_ms"]["p50"].get<double>(), 0.6791, 0.01);
  EXPECT_GT(p["fps"]["p50"].get<double>(), 0.0);
  EXPECT_LE(p["fps"]["max"].get<double>(), 1000.0 / 0.6791 * 1.01) << "no faster than the GPU";
}

TEST(RunModesCli, AllAddsPerformanceToTheLatencyModes) {
  const CliResult r = run_cli(
      "run --backend sim --mode all --time-scale 100 --frames 4 --warmup 0 --blocks 1 "
      "--interval-ms 10-12 --load-complexity 50 --perf-frames 10 --out '' --json");
  ASSERT_EQ(r.rc, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output.substr(r.output.find("{\n")));
  for (const char* m : {"baseline", "loaded", "performance"})
    EXPECT_TRUE(j["modes"][m]["available"].get<bool>()) << m;
}

TEST(RunModesCli, BareNeedsOneMode) {
  const CliResult r = run_cli("run --backend sim --bare --frames 4 --out ''");
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find("--mode baseline"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace latlab::e2e
