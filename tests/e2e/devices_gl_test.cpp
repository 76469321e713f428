// latlab devices lists GL (EGL) devices beside Vulkan and CUDA, or says why
// there are none; an absent value is null, never 0.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "e2e/cli_run_helpers.hpp"

namespace latlab::e2e {
namespace {

TEST(DevicesGlCli, JsonListsGlDevicesOrWhyThereAreNone) {
  const CliSplitResult r = run_cli_split("devices --json");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  int gl = 0;
  for (const auto& d : doc.at("devices")) {
    if (d.at("backend") != "gl") continue;
    ++gl;
    SCOPED_TRACE(d.dump());
    EXPECT_TRUE(d.at("platform") == "device" || d.at("platform") == "surfaceless");
    ASSERT_TRUE(d.at("timer_query").is_boolean());
    if (d.at("timer_query").get<bool>()) {
      EXPECT_TRUE(d.at("name").is_string());
      EXPECT_GT(d.at("timestamp_bits").get<int>(), 0);
      EXPECT_LE(d.at("timestamp_bits").get<int>(), 64);
      EXPECT_EQ(d.at("timestamp_period_ns"), 1);
    } else {
      EXPECT_TRUE(d.at("timestamp_bits").is_null()) << "no timestamps: null, not 0";
      EXPECT_FALSE(d.at("missing").empty()) << "why there are none";
    }
    if (!d.at("disjoint_signal").get<bool>()) {
      bool listed = false;
      for (const auto& m : d.at("missing")) listed = listed || m.at("name") == "disjoint_detection";
      EXPECT_TRUE(listed) << "no disjoint signal is a missing capability";
    }
    EXPECT_TRUE(d.at("compute_shaders").is_boolean());
    EXPECT_TRUE(d.at("khr_debug").is_boolean());
  }
  if (gl == 0) {
    ASSERT_TRUE(doc.contains("gl_unavailable")) << r.out;
    EXPECT_FALSE(doc.at("gl_unavailable").get<std::string>().empty());
  } else {
    EXPECT_FALSE(doc.contains("gl_unavailable"));
  }
}

TEST(DevicesGlCli, TableHasAGlSection) {
  const CliResult r = run_cli("devices");
  ASSERT_EQ(r.rc, 0) << r.output;
  const bool listed = r.output.find("[gl ") != std::string::npos;
  const bool why = r.output.find("GL: unavailable: ") != std::string::npos;
  EXPECT_TRUE(listed != why) << r.output;
  if (listed) {
    EXPECT_NE(r.output.find("    timestamps "), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace latlab::e2e
