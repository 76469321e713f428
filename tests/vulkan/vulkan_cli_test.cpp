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

// What `devices --json` promises per entry. The list holds every backend's
// devices: Vulkan entries carry queue families and time domains, CUDA entries
// (where the CUDA backend is built and a device is visible, as on the H200)
// carry neither, so each entry is checked by its "backend". `at()` throws a
// clear error for a missing key (operator[] on a const object does not).
void expect_device_timing_facts(const nlohmann::json& doc) {
  ASSERT_TRUE(doc.contains("devices"));
  ASSERT_TRUE(doc.at("devices").is_array());
  size_t vulkan = 0;
  for (const auto& d : doc.at("devices")) {
    const std::string backend = d.at("backend").get<std::string>();
    EXPECT_GT(d.at("timestamp_period_ns").get<double>(), 0.0) << backend;
    for (const auto& m : d.at("missing")) EXPECT_FALSE(m.at("reason").get<std::string>().empty());
    if (backend == "vulkan") {
      ++vulkan;
      ASSERT_TRUE(d.at("queue_families").is_array());
      ASSERT_FALSE(d.at("queue_families").empty());
      EXPECT_TRUE(d.at("queue_families").at(0).contains("timestamp_valid_bits"));
      EXPECT_TRUE(d.at("time_domains").is_array());
    } else if (backend == "gl") {
      EXPECT_TRUE(d.contains("timestamp_bits")) << d.dump();  // null without timer queries
    } else {
      EXPECT_EQ(backend, "cuda");
      EXPECT_EQ(d.at("timestamp_source").get<std::string>(), "%globaltimer");
    }
  }
  EXPECT_GT(vulkan, 0u) << "no Vulkan entry in " << doc.dump();
}

TEST_F(VulkanCli, DevicesJsonListsTimingFacts) {
  const CliResult r = run_cli("devices --json");
  ASSERT_EQ(r.rc, 0) << r.output;
  expect_device_timing_facts(nlohmann::json::parse(r.output));
}

// The H200's shape (a Vulkan device, then a CUDA device), checked here too:
// the old check indexed every entry as a Vulkan one and threw on the CUDA one.
TEST_F(VulkanCli, DevicesJsonCheckAcceptsCudaEntries) {
  const auto doc = nlohmann::json::parse(R"({"devices": [
    {"index": 0, "backend": "vulkan", "name": "NVIDIA H200", "timestamp_period_ns": 1.0,
     "queue_families": [{"index": 0, "flags": "graphics|compute", "queue_count": 16,
                         "timestamp_valid_bits": 64}],
     "time_domains": ["device", "clock_monotonic"], "missing": []},
    {"index": 0, "backend": "cuda", "name": "NVIDIA H200", "compute_capability": "9.0",
     "timestamp_period_ns": 1, "timestamp_source": "%globaltimer", "missing": []}]})");
  expect_device_timing_facts(doc);
}

TEST_F(VulkanCli, DevicesTableNamesEveryDevice) {
  const CliResult r = run_cli("devices");
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("timestamp period"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("valid bits"), std::string::npos) << r.output;
}

// Contract: `latlab devices` lists every backend and exits 3 only when no
// backend has a device. Hiding Vulkan alone is not "no device" where CUDA or
// GL sees one (the H200; llvmpipe here), so this test hides CUDA
// (CUDA_VISIBLE_DEVICES empty: cudaErrorNoDevice) and GLVND's EGL vendors too.
TEST_F(VulkanCli, DevicesWithoutAnyDriverExits3) {
  const CliResult r = run_cli(
      "devices", {.env = "VK_ICD_FILENAMES=/nonexistent/icd.json VK_DRIVER_FILES=/nonexistent/icd.json "
                         "CUDA_VISIBLE_DEVICES= __EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent/egl.json"});
  if (r.output.find("[gl ") != std::string::npos) {
    GTEST_SKIP() << "this libEGL ignores __EGL_VENDOR_LIBRARY_FILENAMES (not GLVND): GL still lists a device";
  }
  EXPECT_EQ(r.rc, 3) << r.output;
  EXPECT_NE(r.output.find("no Vulkan device"), std::string::npos) << r.output;
}

// Vulkan hidden, CUDA and GL as the machine has them: the Vulkan part says there
// is no Vulkan device either way; the exit is 0 when another device is listed, else 3.
TEST_F(VulkanCli, DevicesWithoutVulkanDriverSaysSo) {
  const CliResult r = run_cli(
      "devices", {.env = "VK_ICD_FILENAMES=/nonexistent/icd.json VK_DRIVER_FILES=/nonexistent/icd.json"});
  EXPECT_NE(r.output.find("no Vulkan device"), std::string::npos) << r.output;
  const bool other_listed = r.output.find("[cuda ") != std::string::npos ||
                            r.output.find("[gl ") != std::string::npos;
  EXPECT_EQ(r.rc, other_listed ? 0 : 3) << r.output;
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
