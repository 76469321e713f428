// `latlab calibrate-load` end to end on the sim backend (env LATLAB_BINARY).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_run_helpers.hpp"

namespace {

using latlab::e2e::CliSplitResult;
using latlab::e2e::run_cli_split;

TEST(CalibrateLoadCli, SimBackendCalibratesAndPrintsJson) {
  const CliSplitResult r = run_cli_split("calibrate-load --backend sim --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(j.is_discarded()) << "stdout is not JSON:\n" << r.out;
  EXPECT_EQ(j.at("schema"), "latlab.calibrate_load/1");
  const auto complexity = j.at("complexity").get<int>();
  EXPECT_GE(complexity, 1);
  EXPECT_LE(complexity, 4096);
  EXPECT_TRUE(j.at("within_tolerance").get<bool>());
  EXPECT_NEAR(j.at("median_ms").get<double>(), 8.333333, 0.02 * 8.333333);
  EXPECT_DOUBLE_EQ(j.at("settings").at("target_ms").get<double>(), 8.333333);
  EXPECT_EQ(j.at("settings").at("passes").get<int>(), 4);
  EXPECT_EQ(j.at("gpu_ms").at("count").get<int>(), 30);
  EXPECT_EQ(j.at("steps").size(), j.at("evaluations").get<size_t>());
  EXPECT_LE(j.at("evaluations").get<int>(), 12);
  EXPECT_NE(r.err.find("search complexity"), std::string::npos)
      << "steps are shown on stderr with --json";
}

TEST(CalibrateLoadCli, HumanOutputShowsEveryStepAndTheResult) {
  const CliSplitResult r =
      run_cli_split("calibrate-load --backend sim --target-ms 4 --size 1280x720 --form fragment");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("target 4 ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("#0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verify complexity"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("result: complexity"), std::string::npos) << r.out;
}

TEST(CalibrateLoadCli, UnreachableTargetsFailWithTheRange) {
  const CliSplitResult low = run_cli_split("calibrate-load --backend sim --target-ms 0.001 --json");
  EXPECT_EQ(low.rc, 1);
  EXPECT_NE(low.err.find("below the lowest reachable GPU time"), std::string::npos) << low.err;
  EXPECT_NE(low.err.find("reachable: "), std::string::npos) << low.err;
  EXPECT_EQ(low.out.find('{'), std::string::npos) << "no JSON document for a failed calibration";

  const CliSplitResult high = run_cli_split("calibrate-load --backend sim --target-ms 1000");
  EXPECT_EQ(high.rc, 1);
  EXPECT_NE(high.err.find("above the highest reachable GPU time"), std::string::npos) << high.err;
  EXPECT_NE(high.err.find("reachable: "), std::string::npos) << high.err;
}

TEST(CalibrateLoadCli, BadInputIsAUsageError) {
  EXPECT_EQ(run_cli_split("calibrate-load --backend sim --size 1920by1080").rc, 2);
  EXPECT_EQ(run_cli_split("calibrate-load --backend sim --form mesh").rc, 2);
  EXPECT_EQ(run_cli_split("calibrate-load --backend sim --target-ms -3").rc, 2);
  EXPECT_EQ(run_cli_split("calibrate-load --backend sim --tolerance 2").rc, 2);
}

TEST(CalibrateLoadCli, UnknownBackendFailsClearly) {
  const CliSplitResult r = run_cli_split("calibrate-load --backend nosuch");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("nosuch"), std::string::npos) << r.err;
  // A --device that matches nothing is bad input, as in every command.
  const CliSplitResult d = run_cli_split("calibrate-load --backend sim --device nosuch");
  EXPECT_EQ(d.rc, 2);
  EXPECT_NE(d.err.find("nosuch"), std::string::npos) << d.err;
}

TEST(CalibrateLoadCli, HelpDocumentsTheExitCodes) {
  const CliSplitResult r = run_cli_split("calibrate-load --help");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("Exit codes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("8.333333"), std::string::npos) << r.out;
}

}  // namespace
