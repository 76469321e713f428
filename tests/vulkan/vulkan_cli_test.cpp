// The CLI's Vulkan commands (`latlab devices`, `latlab run`) on
// this machine's devices. LATLAB_BINARY is set by ctest.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace latlab::test {
namespace {

struct Ran {
  int exit_code = -1;
  std::string out;  // stdout and stderr
};

// The CLI: $LATLAB_BINARY, else the build tree's apps/latlab/latlab next to
// this test's directory; "" when neither exists.
std::string latlab_binary() {
  if (const char* bin = std::getenv("LATLAB_BINARY"); bin != nullptr && *bin != '\0') return bin;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const auto guess = self.parent_path().parent_path() / "apps" / "latlab" / "latlab";
  return std::filesystem::exists(guess, ec) ? guess.string() : "";
}

// Runs `latlab <args>`, with `env` (e.g. "VAR=value") in front.
Ran run_cli(const std::string& args, const std::string& env = "") {
  const std::string bin = latlab_binary();
  Ran r;
  if (bin.empty()) return r;
  const std::string cmd = env + " " + bin + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class VulkanCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (latlab_binary().empty())
      GTEST_SKIP() << "the latlab binary was not found (set LATLAB_BINARY)";
  }
};

TEST_F(VulkanCli, DevicesJsonListsTimingFacts) {
  const Ran r = run_cli("devices --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("devices"));
  ASSERT_FALSE(j["devices"].empty());
  for (const auto& d : j["devices"]) {
    EXPECT_GT(d["timestamp_period_ns"].get<double>(), 0.0);
    EXPECT_FALSE(d["queue_families"].empty());
    EXPECT_TRUE(d["queue_families"][0].contains("timestamp_valid_bits"));
    EXPECT_TRUE(d["time_domains"].is_array());
    for (const auto& m : d["missing"]) EXPECT_FALSE(m["reason"].get<std::string>().empty());
  }
}

TEST_F(VulkanCli, DevicesTableNamesEveryDevice) {
  const Ran r = run_cli("devices");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("timestamp period"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("valid bits"), std::string::npos) << r.out;
}

TEST_F(VulkanCli, DevicesWithoutAnyDriverExits3) {
  const Ran r = run_cli(
      "devices", "VK_ICD_FILENAMES=/nonexistent/icd.json VK_DRIVER_FILES=/nonexistent/icd.json");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("no Vulkan device"), std::string::npos) << r.out;
}

// `latlab run` is the latency benchmark (it replaced the reference run): a
// short Baseline run on this machine's device under validation.
TEST_F(VulkanCli, RunMeasuresTheLatencyPathUnderValidation) {
  const Ran r = run_cli(
      "run --mode baseline --frames 20 --warmup 2 --blocks 1 --interval-ms 2-3 --passes 3 "
      "--complexity 2 --size "
      "64x64 "
      "--validation --out ''");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("passes 3  complexity 2  size 64x64  form compute"), std::string::npos)
      << r.out;  // settings echoed
  EXPECT_NE(r.out.find("validation errors: 0"), std::string::npos) << r.out;
  // GPU execution needs no clock model: every frame has it.
  EXPECT_NE(r.out.find("gpu_execution                     20       0"), std::string::npos) << r.out;
}

TEST_F(VulkanCli, RunMeasuresTheFragmentFormUnderValidation) {
  const Ran r = run_cli(
      "run --mode baseline --frames 12 --warmup 2 --blocks 1 --interval-ms 2-3 --passes 4 "
      "--complexity 4 --size "
      "64x48 "
      "--form fragment --validation --out ''");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("form fragment"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("validation errors: 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gpu_execution                     12       0"), std::string::npos) << r.out;
}

TEST_F(VulkanCli, RunRejectsBadOptions) {
  for (const char* args :
       {"run --mode baseline --size 12", "run --mode baseline --size 0x5",
        "run --mode baseline --size axb", "run --mode baseline --frames 0",
        "run --mode baseline --complexity 5000", "run --mode baseline --passes 0",
        "run --mode baseline --device 97 --frames 1",
        "run --mode baseline --size 16384x16384 --frames 1", "run --mode baseline --form vertex"}) {
    const Ran r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_FALSE(r.out.empty()) << args;
  }
}

}  // namespace
}  // namespace latlab::test
