// `latlab profile --backend cuda`: the zone table as JSON and a well-formed
// trace where a CUDA device exists; exit 3 with the reason where none does.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cuda/cuda_test_util.hpp"
#include "e2e/cli_run_helpers.hpp"

namespace latlab {
namespace {

using e2e::run_cli_split;

TEST(ProfileCudaCli, JsonTableAndTraceOnADevice) {
  LATLAB_REQUIRE_CUDA_DEVICE();
  e2e::TempDir dir;
  const std::string trace = (dir.path / "trace.json").string();
  const auto r = run_cli_split("profile --backend cuda --frames 20 --json --trace " + trace);
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("backend"), "cuda");
  EXPECT_EQ(j.at("counters").at("frames_collected"), 20);
  EXPECT_EQ(j.at("counters").at("zones_ok"), 20 * 5);
  EXPECT_EQ(j.at("counters").at("zones_dropped"), 0);
  EXPECT_EQ(j.at("counters").at("zones_invalid"), 0);
  EXPECT_EQ(j.at("stamp_write_errors"), 0);
  EXPECT_FALSE(j.at("clock_fit").is_null()) << j.at("host_mapping");
  std::map<std::string, nlohmann::json> zones;
  for (const auto& z : j.at("zones")) zones[z.at("zone")] = z;
  ASSERT_EQ(zones.size(), 5u);
  for (const auto& [name, z] : zones) {
    EXPECT_EQ(z.at("frames"), 20) << name;
    EXPECT_GT(z.at("avg_ms").get<double>(), 0.0) << name;
  }
  // A parent lasts at least as long as each child.
  EXPECT_GE(zones["lighting"]["min_ms"].get<double>(),
            zones["lighting.direct"]["min_ms"].get<double>());
  EXPECT_GE(zones["frame"]["min_ms"].get<double>(), zones["lighting"]["min_ms"].get<double>());

  // The trace: B/E matched per track, one GPU begin per zone.
  const auto doc = nlohmann::json::parse(e2e::slurp(trace));
  std::map<std::pair<int, int>, std::vector<std::string>> stacks;
  size_t gpu_begins = 0;
  for (const auto& ev : doc.at("traceEvents")) {
    const std::string ph = ev.at("ph");
    if (ph == "M") continue;
    auto& st = stacks[{ev.at("pid").get<int>(), ev.at("tid").get<int>()}];
    if (ph == "B") {
      st.push_back(ev.at("name"));
      if (ev.at("pid") == 2) ++gpu_begins;
    } else {
      ASSERT_EQ(ph, "E");
      ASSERT_FALSE(st.empty());
      EXPECT_EQ(st.back(), ev.at("name").get<std::string>());
      st.pop_back();
    }
  }
  for (const auto& [track, st] : stacks) EXPECT_TRUE(st.empty());
  EXPECT_EQ(gpu_begins, 20u * 5u);
}

TEST(ProfileCudaCli, WithoutADeviceExitsThreeWithTheReason) {
  int n = 0;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
    GTEST_SKIP() << n << " CUDA device(s) present: the no-device path cannot be exercised here";
  }
  const auto r = run_cli_split("profile --backend cuda --frames 20 --json");
  EXPECT_EQ(r.rc, 3) << r.out << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;  // --json: no half document on stdout
  EXPECT_NE(r.err.find("no usable device"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cudaGetDeviceCount"), std::string::npos) << r.err;
}

TEST(ProfileCudaCli, ValidationIsRefusedForCuda) {
  const auto r = run_cli_split("profile --backend cuda --validation");
  EXPECT_EQ(r.rc, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("Vulkan"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace latlab
