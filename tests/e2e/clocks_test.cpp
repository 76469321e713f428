// `latlab clocks` end to end: the binary named by LATLAB_BINARY, on the
// simulated clock (real host time, so each run lasts its --seconds).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run_helpers.hpp"

namespace latlab {
namespace {

using e2e::CliSplitResult;
using e2e::run_cli_split;

TEST(ClocksCli, SimDriftJson) {
  const CliSplitResult r = run_cli_split("clocks --sim-drift-ppm 25 --seconds 1 --interval-ms 10 --json");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["host_domain"], "CLOCK_MONOTONIC");
  EXPECT_EQ(j["device"]["backend"], "sim");
  EXPECT_EQ(j["settings"]["sim_drift_ppm"], 25.0);
  const double drift = j["drift_ppm"].get<double>();
  const double unc = j["drift_uncertainty_ppm"].get<double>();
  EXPECT_NEAR(drift, 25.0, unc);
  EXPECT_LT(unc, 8.0);  // worst-case bound over ~1 s of 1-2 us deviations (~4 ppm)
  EXPECT_GT(j["refreshes"].get<int>(), 50);
  EXPECT_EQ(j["fresh"]["count"], 32);
  EXPECT_EQ(j["fresh"]["within_bound"], 32);
  // The single start-up pair is ~25 us off after 1 s (the host runs faster:
  // mapped early); the model is within a few us.
  const double single = j["fresh"]["single_pair_error_us"]["mean"].get<double>();
  EXPECT_LT(single, -15.0);
  EXPECT_GT(single, -40.0);
  EXPECT_LT(std::fabs(j["fresh"]["model_error_us"]["mean"].get<double>()), 5.0);
  EXPECT_GT(j["deviation_us"]["count"].get<int>(), 0);
  EXPECT_TRUE(j["residual_us"].contains("p99"));
  EXPECT_GT(j["bound_now_ns"].get<int64_t>(), 0);
}

TEST(ClocksCli, SimBackendHumanOutputSideBySide) {
  const CliSplitResult r = run_cli_split("clocks --backend sim --seconds 0.2 --interval-ms 20");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  for (const char* s : {"host domain: CLOCK_MONOTONIC", "deviation (us)", "fitted drift",
                        "residuals (us)", "error bound now", "drift-corrected model",
                        "single start-up pair", "within the model's bound"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << "missing \"" << s << "\" in:\n" << r.out;
  }
  EXPECT_EQ(r.out.find("\r"), std::string::npos)
      << "no progress line when stdout is not a terminal";
}

TEST(ClocksCli, BadUsageExitsTwo) {
  EXPECT_EQ(run_cli_split("clocks --seconds -1 2>/dev/null").rc, 2);
  EXPECT_EQ(run_cli_split("clocks --backend nosuch 2>/dev/null").rc, 2);
  EXPECT_EQ(run_cli_split("clocks --seconds abc 2>/dev/null").rc, 2);
  EXPECT_EQ(run_cli_split("clocks --sim-drift-ppm 5000 2>/dev/null").rc, 2);
  // A --device that matches nothing is bad input, as in every command.
  EXPECT_EQ(run_cli_split("clocks --backend sim --device nosuch --seconds 1 2>/dev/null").rc, 2);
}

TEST(ClocksCli, HelpShowsDefaultsAndHidesSimOption) {
  const CliSplitResult r = run_cli_split("clocks --help");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("--seconds"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("10"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("sim-drift"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace latlab
