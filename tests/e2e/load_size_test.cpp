// latlab run --load-size auto (the default): the size used for Loaded, why,
// and the sizes given up, recorded in the result. Sim backend: its GPU cost
// is proportional to pixels x complexity (0.002 ns per unit), so a target
// below complexity 1 at 1920x1080 is reachable at a smaller size (its
// fixed cost is about 0.05 ms a frame).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "e2e/cli_run_helpers.hpp"

namespace latlab::e2e {
namespace {

constexpr const char* kRun =
    "run --backend sim --time-scale 100 --frames 8 --warmup 2 --blocks 2 --interval-ms 10-12 ";

TEST(LoadSizeAuto, ReachableTargetUsesFullHd) {
  TempDir dir;
  const auto out = dir.path / "r.json";
  const CliResult r = run_cli(std::string(kRun) + "--out " + out.string());
  ASSERT_EQ(r.rc, 0) << r.output;
  const auto j = nlohmann::json::parse(slurp(out));
  const auto& size = j["load_calibration"]["size"];
  EXPECT_EQ(size["asked"], "auto");
  EXPECT_EQ(size["used"], "1920x1080");
  EXPECT_TRUE(size["tried"].empty());
  EXPECT_EQ(j["modes"]["loaded"]["workload"]["width"], 1920);
}

TEST(LoadSizeAuto, TargetBelowFullHdFallsBackToTheLargestSizeThatReachesIt) {
  TempDir dir;
  const auto out = dir.path / "r.json";
  // 1920x1080 at complexity 1: 0.0666 ms (3 % above); 1280x720 at complexity 2: 0.0647 ms.
  const CliResult r = run_cli(std::string(kRun) +
                              "--load-target-ms 0.0645 --load-tolerance 0.01 --out " + out.string());
  ASSERT_EQ(r.rc, 0) << r.output;
  const auto j = nlohmann::json::parse(slurp(out));
  ASSERT_TRUE(j["modes"]["loaded"]["available"].get<bool>()) << j["modes"]["loaded"].dump();
  const auto& size = j["load_calibration"]["size"];
  EXPECT_EQ(size["used"], "1280x720") << size.dump();
  ASSERT_EQ(size["tried"].size(), 1u);
  EXPECT_EQ(size["tried"][0]["size"], "1920x1080");
  EXPECT_NE(size["tried"][0]["reason"].get<std::string>().find("below the lowest reachable"),
            std::string::npos);
  EXPECT_EQ(j["modes"]["loaded"]["workload"]["width"], 1280);
  EXPECT_EQ(j["modes"]["loaded"]["workload"]["height"], 720);
}

TEST(LoadSizeAuto, GivenSizeIsUsedAsGivenAndNeverShrunk) {
  TempDir dir;
  const auto out = dir.path / "r.json";
  const CliResult r = run_cli(std::string(kRun) +
                              "--load-target-ms 0.0645 --load-tolerance 0.01 --load-size 1920x1080 --out " +
                              out.string());
  ASSERT_EQ(r.rc, 0) << r.output;  // Loaded unavailable beside Baseline still exits 0
  const auto j = nlohmann::json::parse(slurp(out));
  EXPECT_FALSE(j["modes"]["loaded"]["available"].get<bool>());
  EXPECT_EQ(j["modes"]["loaded"]["load_size"]["asked"], "1920x1080");
  EXPECT_TRUE(j["modes"]["loaded"]["load_size"]["used"].is_null());
}

TEST(LoadSizeAuto, BadSizeIsBadInput) {
  const CliResult r = run_cli(std::string(kRun) + "--load-size huge --out ''");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.output.find("or auto"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace latlab::e2e
