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

namespace latlab::test {
namespace {

struct Ran {
  int exit_code = -1;
  std::string out;
};

std::string latlab_binary() {
  if (const char* bin = std::getenv("LATLAB_BINARY"); bin != nullptr && *bin != '\0') return bin;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const auto guess = self.parent_path().parent_path() / "apps" / "latlab" / "latlab";
  return std::filesystem::exists(guess, ec) ? guess.string() : "";
}

// Runs `latlab <args>`; `stderr_too` folds stderr into out.
Ran run_cli(const std::string& args, bool stderr_too = true) {
  Ran r;
  const std::string bin = latlab_binary();
  if (bin.empty()) return r;
  const std::string cmd = bin + " " + args + (stderr_too ? " 2>&1" : " 2>/dev/null");
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class ProfileCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (latlab_binary().empty()) GTEST_SKIP() << "the latlab binary was not found (set LATLAB_BINARY)";
    dir_ = std::filesystem::temp_directory_path() / ("latlab_profile_cli_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(ProfileCli, JsonTableAndAWellFormedTrace) {
  const auto trace = (dir_ / "trace.json").string();
  const Ran r = run_cli("profile --frames 12 --size 32x32 --validation --json --trace " + trace, false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
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
  const Ran r = run_cli("profile --frames 4 --size 16x16");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("p95"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lighting.indirect"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("frame 3 on"), std::string::npos) << r.out;
}

TEST_F(ProfileCli, BadInputIsRefusedWithAReason) {
  Ran r = run_cli("profile --size 12");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--size must be WxH"), std::string::npos) << r.out;
  r = run_cli("profile --frames 0");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  r = run_cli("profile --device no-such-gpu-here");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  r = run_cli("profile --frames 2 --size 16x16 --trace " + (dir_ / "missing" / "t.json").string());
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.out.find("cannot create"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace latlab::test
