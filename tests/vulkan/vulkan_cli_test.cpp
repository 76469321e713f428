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

#include "e2e/cli_run_helpers.hpp"

namespace latlab::test {
namespace {

using e2e::CliResult;
using e2e::run_cli;

class VulkanCli : public ::testing::Test {};

TEST_F(VulkanCli, DevicesJsonListsTimingFacts) {
  const CliResult r = run_cli("devices --json");
  ASSERT_EQ(r.rc, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
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
  const CliResult r = run_cli("devices");
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("timestamp period"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("valid bits"), std::string::npos) << r.output;
}

TEST_F(VulkanCli, DevicesWithoutAnyDriverExits3) {
  const CliResult r = run_cli(
      "devices", {.env = "VK_ICD_FILENAMES=/nonexistent/icd.json VK_DRIVER_FILES=/nonexistent/icd.json"});
  EXPECT_EQ(r.rc, 3) << r.output;
  EXPECT_NE(r.output.find("no Vulkan device"), std::string::npos) << r.output;
}

// `latlab run` is the latency benchmark (it replaced the reference run): a
// short Baseline run on this machine's device under validation.
TEST_F(VulkanCli, RunMeasuresTheLatencyPathUnderValidation) {
  const CliResult r = run_cli(
      "run --mode baseline --frames 20 --warmup 2 --blocks 1 --interval-ms 2-3 --passes 3 "
      "--complexity 2 --size "
      "64x64 "
      "--validation --out ''");
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("passes 3  complexity 2  size 64x64  form compute"), std::string::npos)
      << r.output;  // settings echoed
  EXPECT_NE(r.output.find("validation errors: 0"), std::string::npos) << r.output;
  // GPU execution needs no clock model: every frame has it.
  EXPECT_NE(r.output.find("gpu_execution                     20       0"), std::string::npos) << r.output;
}

TEST_F(VulkanCli, RunMeasuresTheFragmentFormUnderValidation) {
  const CliResult r = run_cli(
      "run --mode baseline --frames 12 --warmup 2 --blocks 1 --interval-ms 2-3 --passes 4 "
      "--complexity 4 --size "
      "64x48 "
      "--form fragment --validation --out ''");
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("form fragment"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("validation errors: 0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("gpu_execution                     12       0"), std::string::npos) << r.output;
}

TEST_F(VulkanCli, RunRejectsBadOptions) {
  for (const char* args :
       {"run --mode baseline --size 12", "run --mode baseline --size 0x5",
        "run --mode baseline --size axb", "run --mode baseline --frames 0",
        "run --mode baseline --complexity 5000", "run --mode baseline --passes 0",
        "run --mode baseline --device 97 --frames 1",
        "run --mode baseline --size 16384x16384 --frames 1", "run --mode baseline --form vertex"}) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.rc, 2) << args << "\n" << r.output;
    EXPECT_FALSE(r.output.empty()) << args;
  }
}

}  // namespace
}  // namespace latlab::test
