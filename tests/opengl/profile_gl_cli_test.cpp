// `latlab profile --backend gl`: the zone table as JSON, KHR_debug clean and
// a well-formed trace where a GL context with timer queries exists; exit 3
// with the reason where none does, 2 for a --device that does not exist.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "e2e/cli_run_helpers.hpp"
#include "latlab/opengl.hpp"
#include "opengl/gl_fixture.hpp"

namespace latlab {
namespace {

using e2e::run_cli_split;

// Whether this machine has a GL context with timestamps (the reason if not).
std::string gl_unavailable_reason() {
  auto ctx = GlContext::create(
      {.device = test::gl_test_device(), .api = GlApiKind::automatic, .debug = false});
  return ctx ? "" : ctx.error().message;
}

std::string device_arg() {
  const std::string d = test::gl_test_device();
  return d.empty() ? "" : " --device '" + d + "'";
}

TEST(ProfileGlCli, JsonTableAndTraceOnAGlContext) {
  if (const std::string why = gl_unavailable_reason(); !why.empty()) {
    GTEST_SKIP() << "no GL context with timestamps here: " << why;
  }
  e2e::TempDir dir;
  const std::string trace = (dir.path / "trace.json").string();
  const auto r = run_cli_split("profile --backend gl --frames 20 --json --validation --trace " +
                               trace + device_arg());
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("backend"), "gl");
  EXPECT_FALSE(j.at("device").get<std::string>().empty());
  EXPECT_EQ(j.at("settings").at("frames"), 20);
  EXPECT_EQ(j.at("counters").at("frames_collected"), 20);
  EXPECT_EQ(j.at("counters").at("zones_ok"), 20 * 8);
  EXPECT_EQ(j.at("counters").at("zones_dropped"), 0);
  EXPECT_EQ(j.at("counters").at("zones_invalid"), 0);
  EXPECT_EQ(j.at("timestamp_write_errors"), 0);
  EXPECT_EQ(j.at("validation_errors"), 0) << r.err;
  EXPECT_FALSE(j.at("clock_fit").is_null()) << j.at("host_mapping");
  std::map<std::string, nlohmann::json> zones;
  for (const auto& z : j.at("zones")) zones[z.at("zone")] = z;
  ASSERT_EQ(zones.size(), 8u);
  for (const auto& [name, z] : zones) {
    EXPECT_EQ(z.at("frames"), 20) << name;
    EXPECT_EQ(z.at("missing"), 0) << name;
    EXPECT_GT(z.at("avg_ms").get<double>(), 0.0) << name;
  }
  // In every frame a parent lasts at least as long as each child, so its
  // fastest frame does too.
  const auto min_ms = [&](const char* z) { return zones[z]["min_ms"].get<double>(); };
  EXPECT_GE(min_ms("lighting"), min_ms("lighting.direct"));
  EXPECT_GE(min_ms("post"), min_ms("post.bloom"));
  EXPECT_GE(min_ms("frame"), min_ms("lighting"));
  EXPECT_GE(min_ms("frame"), min_ms("post"));

  // The trace: B/E matched per track, one GPU begin per zone, all mapped.
  EXPECT_EQ(j.at("trace").at("written"), true);
  EXPECT_EQ(j.at("trace").at("gpu_zones_unmapped"), 0);
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
  EXPECT_EQ(gpu_begins, 20u * 8u);
}

TEST(ProfileGlCli, TextOutputShowsTheTableAndTheTree) {
  if (const std::string why = gl_unavailable_reason(); !why.empty()) {
    GTEST_SKIP() << "no GL context with timestamps here: " << why;
  }
  const auto r = run_cli_split("profile --backend gl --frames 5" + device_arg());
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("OpenGL (EGL)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lighting.indirect"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("post.tonemap"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("zones with a time 40"), std::string::npos) << r.out;
}

// --gl-timer elapsed: the fallback of drivers without GL_TIMESTAMP bits,
// forced where both exist. Only the outermost zone ("frame") has a time;
// the seven inside it are overlapped, and nothing is host mapped.
TEST(ProfileGlCli, ElapsedTimerTimesOnlyTheOutermostZone) {
  if (const std::string why = gl_unavailable_reason(); !why.empty()) {
    GTEST_SKIP() << "no GL context with timer queries here: " << why;
  }
  const auto r = run_cli_split(
      "profile --backend gl --frames 10 --json --validation --gl-timer elapsed" + device_arg());
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("timer"), "GL_TIME_ELAPSED");
  EXPECT_EQ(j.at("counters").at("zones_ok"), 10);
  EXPECT_EQ(j.at("counters").at("zones_overlapped"), 10 * 7);
  EXPECT_EQ(j.at("counters").at("zones_invalid"), 0);
  EXPECT_EQ(j.at("validation_errors"), 0) << r.err;
  EXPECT_TRUE(j.at("clock_fit").is_null());
  EXPECT_NE(j.at("host_mapping").get<std::string>().find("unavailable: only GL_TIME_ELAPSED"),
            std::string::npos)
      << j.at("host_mapping");
  for (const auto& z : j.at("zones")) {
    const bool outer = z.at("zone") == "frame";
    EXPECT_EQ(z.at("frames"), outer ? 10 : 0) << z.at("zone");
    EXPECT_EQ(z.at("missing"), outer ? 0 : 10) << z.at("zone") << ": missing, never 0 ms";
  }
}

TEST(ProfileGlCli, ElapsedTimerRefusesATraceWithTheReason) {
  if (const std::string why = gl_unavailable_reason(); !why.empty()) {
    GTEST_SKIP() << "no GL context with timer queries here: " << why;
  }
  e2e::TempDir dir;
  const auto r = run_cli_split("profile --backend gl --frames 2 --gl-timer elapsed --trace " +
                               (dir.path / "t.json").string() + device_arg());
  EXPECT_EQ(r.rc, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("unavailable: only GL_TIME_ELAPSED"), std::string::npos) << r.err;
}

TEST(ProfileGlCli, GlTimerIsAGlOption) {
  const auto r = run_cli_split("profile --backend vulkan --frames 2 --gl-timer elapsed");
  EXPECT_EQ(r.rc, 2) << r.out << r.err;
}

// run and clocks need GPU begin/end on the host clock: with only
// GL_TIME_ELAPSED (LATLAB_GL_TIMER forces it) they exit 3 with the reason.
TEST(ProfileGlCli, RunAndClocksExitThreeWithOnlyElapsed) {
  if (const std::string why = gl_unavailable_reason(); !why.empty()) {
    GTEST_SKIP() << "no GL context with timer queries here: " << why;
  }
  for (const char* cmd : {"run --backend gl --mode baseline --frames 5", "clocks --backend gl"}) {
    const e2e::CliResult cr = e2e::run_cli(cmd, {.env = "LATLAB_GL_TIMER=elapsed"});
    EXPECT_EQ(cr.rc, 3) << cmd << "\n" << cr.output;
    EXPECT_NE(cr.output.find("unavailable: only GL_TIME_ELAPSED"), std::string::npos) << cmd << "\n"
                                                                                      << cr.output;
  }
}

TEST(ProfileGlCli, WithoutAnEglDriverExitsThreeWithTheReason) {
  // GLVND's libEGL loads the vendor libraries this variable names; a file
  // that does not exist leaves it none. A libEGL that is not GLVND ignores it.
  const e2e::CliResult cr =
      e2e::run_cli("profile --backend gl --frames 5",
                   {.env = "__EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent/latlab.json"});
  if (cr.rc == 0) GTEST_SKIP() << "this libEGL ignores __EGL_VENDOR_LIBRARY_FILENAMES (not GLVND)";
  EXPECT_EQ(cr.rc, 3) << cr.output;
  EXPECT_NE(cr.output.find("latlab profile: "), std::string::npos) << cr.output;
}

TEST(ProfileGlCli, ADeviceThatDoesNotExistIsBadInput) {
  const auto r = run_cli_split("profile --backend gl --frames 5 --device no-such-gl-device");
  EXPECT_EQ(r.rc, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("latlab profile: "), std::string::npos) << r.err;
}

}  // namespace
}  // namespace latlab
