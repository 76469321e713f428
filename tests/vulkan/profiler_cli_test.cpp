// `latlab profile` on this machine's Vulkan device (lavapipe on CI), with the
// validation layer on: zone table as JSON, a trace that parses with matched
// B/E per track, and bad input refused with the documented exit codes.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "e2e/cli_run_helpers.hpp"

namespace latlab::test {
namespace {

using e2e::CliResult;
using e2e::run_cli;

class ProfileCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("latlab_profile_cli_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(ProfileCli, JsonTableAndAWellFormedTrace) {
  const auto trace = (dir_ / "trace.json").string();
  const CliResult r = run_cli("profile --frames 12 --size 32x32 --validation --json --trace " + trace, {.stderr_too = false});
  ASSERT_EQ(r.rc, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j.at("validation_errors"), 0);
  EXPECT_EQ(j.at("counters").at("frames_collected"), 12);
  EXPECT_EQ(j.at("counters").at("zones_ok"), 12 * 8);
  EXPECT_EQ(j.at("counters").at("zones_dropped"), 0);
  std::map<std::string, nlohmann::json> zones;
  for (const auto& z : j.at("zones")) zones[z.at("zone")] = z;
  ASSERT_EQ(zones.size(), 8u);
  for (const auto& [name, z] : zones) {
    EXPECT_EQ(z.at("frames"), 12) << name;
    EXPECT_GT(z.at("avg_ms").get<double>(), 0.0) << name;
  }
  // A parent lasts at least as long as each child (siblings may overlap on a
  // real GPU, so not necessarily as long as their sum).
  EXPECT_GE(zones["lighting"]["min_ms"].get<double>(), zones["lighting.direct"]["min_ms"].get<double>());
  EXPECT_GE(zones["frame"]["min_ms"].get<double>(), zones["post"]["min_ms"].get<double>());

  std::ifstream in(trace);
  std::stringstream ss;
  ss << in.rdbuf();
  const auto doc = nlohmann::json::parse(ss.str());
  std::map<std::pair<int, int>, std::vector<std::string>> stacks;
  size_t gpu_begins = 0, cpu_begins = 0;
  for (const auto& ev : doc.at("traceEvents")) {
    const std::string ph = ev.at("ph");
    if (ph == "M") continue;
    auto& st = stacks[{ev.at("pid").get<int>(), ev.at("tid").get<int>()}];
    if (ph == "B") {
      st.push_back(ev.at("name"));
      (ev.at("pid") == 2 ? gpu_begins : cpu_begins) += 1;
    } else {
      ASSERT_EQ(ph, "E");
      ASSERT_FALSE(st.empty());
      EXPECT_EQ(st.back(), ev.at("name").get<std::string>());
      st.pop_back();
    }
  }
  for (const auto& [k, st] : stacks) EXPECT_TRUE(st.empty());
  EXPECT_EQ(gpu_begins, 12u * 8u);
  EXPECT_GT(cpu_begins, 12u * 8u);  // zone recording spans, frames, record/submit
}

TEST_F(ProfileCli, TextOutputShowsTheTableAndTheTree) {
  const CliResult r = run_cli("profile --frames 4 --size 16x16");
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("p95"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("lighting.indirect"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("frame 3 on"), std::string::npos) << r.output;
}

TEST_F(ProfileCli, BadInputIsRefusedWithAReason) {
  CliResult r = run_cli("profile --size 12");
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find("--size must be WxH"), std::string::npos) << r.output;
  r = run_cli("profile --frames 0");
  EXPECT_EQ(r.rc, 2) << r.output;
  r = run_cli("profile --device no-such-gpu-here");
  EXPECT_EQ(r.rc, 2) << r.output;
  // A trace that cannot be written is refused before the device is opened.
  r = run_cli("profile --frames 2 --size 16x16 --trace " + (dir_ / "missing" / "t.json").string());
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find("does not exist or is not writable"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("reference frame on Vulkan"), std::string::npos) << "the run started";
}

}  // namespace
}  // namespace latlab::test
