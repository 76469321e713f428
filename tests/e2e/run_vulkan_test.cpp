// `latlab run` end to end on Vulkan (lavapipe here, with the validation
// layer): a few hundred frames; every stage present and positive, the two
// observers of completion agree within the clock model's bound plus the fence
// wake, and the result passes every backend's checks against its CSV
// (result_checks.hpp). Skips when the binary reports the Vulkan backend
// unavailable.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "e2e/cli_run_helpers.hpp"
#include "e2e/result_checks.hpp"
#include "one_mesa_worker.hpp"

namespace latlab::e2e {
namespace {

TEST(RunVulkanCli, StagesPositiveAndObserversAgree) {
  TempDir dir;
  const auto out = dir.path / "r.json";
  const auto csv = dir.path / "f.csv";
  const CliResult r = run_cli(
      "run --mode baseline --backend vulkan --validation --frames 300 --warmup 30 --blocks 3 "
      "--interval-ms 4-6 --out " +
      out.string() + " --frames-csv " + csv.string());
  if (r.rc == 3 && r.output.find("vulkan backend unavailable") != std::string::npos) {
    GTEST_SKIP() << "the binary reports the Vulkan backend unavailable: " << r.output;
  }
  ASSERT_EQ(r.rc, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(slurp(out));
  EXPECT_EQ(j["schema_version"], 3);
  EXPECT_EQ(j["device"]["backend"], "vulkan");
  EXPECT_EQ(j["diagnostics"]["validation"]["errors"], 0) << j["diagnostics"]["validation"].dump();
  if (!j["clock_model"]["available"].get<bool>() &&
      j["clock_model"]["reason"].get<std::string>().find("not built into this binary") !=
          std::string::npos) {
    GTEST_SKIP() << "this binary has no clock calibration: " << j["clock_model"]["reason"];
  }
  ASSERT_TRUE(j["clock_model"]["available"].get<bool>()) << j["clock_model"].dump();
  const auto& total = j["modes"]["baseline"]["total"];
  EXPECT_EQ(total["frames"], 300);
  for (const auto& [name, d] : total["stages"].items()) {
    EXPECT_EQ(d["count"], 300) << name;
    EXPECT_EQ(d["missing"], 0) << name;
    EXPECT_GT(d["p50"].get<double>(), 0.0) << name;
  }
  EXPECT_EQ(total["core_latency"]["count"], 300);
  EXPECT_EQ(total["fence_latency"]["count"], 300);

  // Per frame: the GPU cannot be seen finishing before it finished (core <=
  // fence + bound). The fence wake follows within the bound plus the wake
  // delay; a single wake can be late by tens of ms when the 2-core CI machine
  // is busy (seen: 27 ms), so the wake allowance is checked on the median.
  std::ifstream in(csv);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  const std::vector<std::string> head = split_csv_line(line);
  auto col = [&](const std::string& name) {
    const auto it = std::find(head.begin(), head.end(), name);
    EXPECT_NE(it, head.end()) << name;
    return static_cast<size_t>(it - head.begin());
  };
  const size_t c_kind = col("block_kind");
  const size_t c_core = col("core_latency_ns");
  const size_t c_fence = col("fence_latency_ns");
  const size_t c_err = col("map_error_ns");
  int rows = 0;
  std::vector<long long> wake_beyond_bound;
  while (std::getline(in, line)) {
    const std::vector<std::string> cells = split_csv_line(line);
    if (cells[c_kind] != "measured") continue;
    ++rows;
    ASSERT_FALSE(cells[c_core].empty()) << line;
    const long long core = std::stoll(cells[c_core]);
    const long long fence = std::stoll(cells[c_fence]);
    const long long err = std::stoll(cells[c_err]);
    EXPECT_GT(core, 0) << line;
    EXPECT_LE(core, fence + err) << line;
    wake_beyond_bound.push_back(fence - core - err);
  }
  EXPECT_EQ(rows, 300);
  ASSERT_FALSE(wake_beyond_bound.empty());
  std::nth_element(wake_beyond_bound.begin(),
                   wake_beyond_bound.begin() + wake_beyond_bound.size() / 2,
                   wake_beyond_bound.end());
  EXPECT_LE(wake_beyond_bound[wake_beyond_bound.size() / 2], 5'000'000);
  expect_result_matches_csv(j, csv, 300);
}

// Baseline and Loaded on lavapipe: the load calibrates on the same device
// (small size so it converges quickly) and Loaded frames carry it. The target
// stays well above lavapipe's fixed cost per frame, which reached 3.1 ms
// under ASan on a busy 2-core machine (a 2 ms target was unreachable there).
// lavapipe renders on the CPU, so its GPU time moves with whatever else runs:
// the same complexity can measure 21 and 32 ms minutes apart on a 2-core
// machine, where a 15% tolerance can run out of evaluations; 25% leaves room.
// One Mesa worker (the child inherits it): with two, a step's median moved
// 15 -> 25 ms at one complexity when another test took a core, and the search
// ran out of evaluations.
// The target comes from the device: 20 ms where 64x64 reaches it (lavapipe),
// else half the highest GPU time 64x64 reaches (the H200: 0.78 ms at
// complexity 4096), read from the calibration's own refusal.
TEST(RunVulkanCli, LatencyModeCalibratesTheLoadAndLoadedTakesLonger) {
  test::use_one_mesa_worker();
  TempDir dir;
  const auto out = dir.path / "r.json";
  const auto run_at = [&](double target_ms) {
    return run_cli(
        "run --mode latency --backend vulkan --validation --frames 40 --warmup 4 --blocks 4 "
        "--interval-ms 4-6 --load-size 64x64 --load-target-ms " +
        std::to_string(target_ms) + " --load-tolerance 0.25 --out " + out.string());
  };
  double target_ms = 20.0;
  CliResult r = run_at(target_ms);
  if (r.rc == 3 && r.output.find("vulkan backend unavailable") != std::string::npos) {
    GTEST_SKIP() << "the binary reports the Vulkan backend unavailable: " << r.output;
  }
  ASSERT_EQ(r.rc, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(slurp(out));
  const std::string kTop = "is above the highest reachable GPU time ";
  if (const std::string why = j["modes"]["loaded"].value("reason", std::string());
      why.find(kTop) != std::string::npos) {
    const double top_ms = std::stod(why.substr(why.find(kTop) + kTop.size()));
    ASSERT_GT(top_ms, 0.0) << why;
    target_ms = top_ms / 2.0;
    r = run_at(target_ms);
    ASSERT_EQ(r.rc, 0) << r.output;
    j = nlohmann::json::parse(slurp(out));
  }
  EXPECT_EQ(j["diagnostics"]["validation"]["errors"], 0) << j["diagnostics"]["validation"].dump();
  const auto& cal = j["load_calibration"];
  ASSERT_TRUE(j["modes"]["loaded"]["available"].get<bool>()) << j["modes"]["loaded"].dump() << "\n"
                                                             << cal.dump();
  EXPECT_TRUE(cal["within_tolerance"].get<bool>()) << cal.dump();
  EXPECT_NEAR(cal["median_ms"].get<double>(), target_ms, 0.25 * target_ms);
  // The measured blocks ran the calibrated complexity, or the one the
  // warm-up re-check moved it to (and recorded).
  const auto& check = j["modes"]["loaded"]["gpu_target"]["warmup_check"];
  EXPECT_EQ(j["modes"]["loaded"]["workload"]["complexity"],
            check.is_null() ? cal["complexity"] : check["complexity_after"])
      << check.dump();
  const auto p50 = [&](const char* m) {
    return j["modes"][m]["total"]["stages"]["gpu_execution"]["p50"].get<double>();
  };
  EXPECT_EQ(j["modes"]["baseline"]["total"]["frames"], 40);
  EXPECT_EQ(j["modes"]["loaded"]["total"]["frames"], 40);
  EXPECT_GT(p50("loaded"), p50("baseline"));
  EXPECT_GT(p50("loaded"), 0.5 * target_ms * 1000.0) << "near its target (us)";
}

}  // namespace
}  // namespace latlab::e2e
