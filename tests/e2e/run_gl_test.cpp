// `latlab run --backend gl` end to end (llvmpipe through EGL here, KHR_debug
// on): a few hundred Baseline frames whose JSON result passes the same
// checks as a Vulkan run (result_checks.hpp). Skips when the binary reports
// the GL backend unavailable (no EGL device with timer queries, or not built).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "e2e/cli_run_helpers.hpp"
#include "e2e/result_checks.hpp"

namespace latlab::e2e {
namespace {

TEST(RunGlCli, ResultMatchesItsFramesCsvLikeEveryBackend) {
  TempDir dir;
  const auto out = dir.path / "r.json";
  const auto csv = dir.path / "f.csv";
  const CliResult r = run_cli(
      "run --mode baseline --backend gl --validation --frames 200 --warmup 20 --blocks 2 "
      "--interval-ms 3-5 --out " +
      out.string() + " --frames-csv " + csv.string());
  if (r.rc == 3 && r.output.find("gl backend unavailable") != std::string::npos) {
    GTEST_SKIP() << "the binary reports the GL backend unavailable: " << r.output;
  }
  ASSERT_EQ(r.rc, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(slurp(out));
  EXPECT_EQ(j["device"]["backend"], "opengl");
  EXPECT_EQ(j["diagnostics"]["validation"]["errors"], 0) << j["diagnostics"]["validation"].dump();
  ASSERT_TRUE(j["clock_model"]["available"].get<bool>()) << j["clock_model"].dump();
  EXPECT_TRUE(j["clock_model"]["estimated"].get<bool>())
      << "bracketed glGetInteger64v pairs are estimates";
  const auto& total = j["modes"]["baseline"]["total"];
  EXPECT_EQ(total["frames"], 200);
  // llvmpipe answers every frame: nothing missing in any stage.
  for (const auto& [name, d] : total["stages"].items()) EXPECT_EQ(d["missing"], 0) << name;
  EXPECT_EQ(total["core_latency"]["count"], 200);
  EXPECT_EQ(total["fence_latency"]["count"], 200);
  expect_result_matches_csv(j, csv, 200);
}

}  // namespace
}  // namespace latlab::e2e
