// `latlab capture`'s present completion and its X11 screen observer
// (docs/capture.md) on Debian's vkcube, lavapipe and Xvfb: the layer reports
// the window, the XDamage observer sees it updated for (nearly) every frame,
// never before the frame's present call, in frame order; present_complete is
// measured where the driver offers present wait or display timing (here
// through a test layer that gives lavapipe present wait) and otherwise
// unavailable with what the driver lacks. Skipped, with the
// reason, where vkcube, lavapipe or Xvfb is absent or in sanitizer builds.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "capture_env.hpp"
#include "cli_run_helpers.hpp"
#include "csv_rows.hpp"
#include "xvfb_server.hpp"

namespace latlab::e2e {
namespace {

using json = nlohmann::json;

TEST(CaptureScreen, VkcubeWindowIsSeenUpdatedAfterEachPresent) {
  if (const std::string why = vkcube_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  XvfbServer xvfb;
  if (!xvfb.ok()) GTEST_SKIP() << xvfb.why_not();
  TempDir dir;
  const auto out = (dir.path / "r.json").string();
  const auto csv = (dir.path / "f.csv").string();
  const CliResult r = run_cli("capture --out " + out + " --frames-csv " + csv + " -- vkcube --c 60",
                              CliOptions{vkcube_env(xvfb)});
  ASSERT_EQ(r.rc, 0) << r.output;
  const json j = json::parse(slurp(out));
  ASSERT_EQ(j["frames"], 60) << r.output;
  const json& screen = j["screen_observers"][0];
  if (screen["reason"].is_string() &&
      screen["reason"].get<std::string>().find("without libxcb-damage") != std::string::npos)
    GTEST_SKIP() << screen["reason"].get<std::string>();
  ASSERT_EQ(screen["available"], true) << screen.dump(1);
  EXPECT_EQ(screen["name"], "x11_damage");
  EXPECT_EQ(screen["display"], xvfb.display());
  ASSERT_EQ(screen["windows"].size(), 1u) << "the layer reported vkcube's one window";
  // Watching begins at vkcube's swapchain, before its first present.
  EXPECT_EQ(screen["frames_watched"], 60);
  const int matched = screen["frames_matched"].get<int>();
  EXPECT_GE(matched, 54) << "damage seen for >= 90% of the frames";
  EXPECT_LE(matched, screen["events"].get<int>());
  EXPECT_EQ(screen["figures"]["until_screen_updated"]["count"], matched);
  EXPECT_GE(screen["figures"]["until_screen_updated"]["min"].get<double>(), 0.0);

  // present_complete: measured where the driver offers a way, otherwise
  // unavailable naming what it lacks (lavapipe in Mesa 22.3 has none).
  const json& src = j["sources"][0];
  const bool measured = src["present_method"].is_string();
  if (!measured) {
    std::string reason;
    for (const auto& u : j["unavailable"]) {
      if (u["name"] == "present_complete") reason = u["reason"];
    }
    EXPECT_NE(reason.find("VK_KHR_present_wait"), std::string::npos) << j["unavailable"].dump(1);
    EXPECT_EQ(j["present_complete"]["unavailable"], 60);
    EXPECT_EQ(j["figures"]["until_displayed"]["count"], 0);
  } else {
    EXPECT_EQ(j["present_complete"]["measured"], 60) << j["present_complete"].dump();
  }

  const auto rows = read_csv(slurp(csv));
  ASSERT_EQ(rows.size(), 60u);
  long long prev_updated = 0;
  int with_update = 0;
  for (const auto& row : rows) {
    const long long start = std::stoll(row.at("present_start_ns"));
    const long long end = std::stoll(row.at("present_end_ns"));
    if (measured) {
      ASSERT_FALSE(row.at("present_complete_ns").empty()) << "frame " << row.at("frame");
      EXPECT_GE(std::stoll(row.at("present_complete_ns")), end) << "frame " << row.at("frame");
      EXPECT_EQ(row.at("no_complete"), "0");
    } else {
      EXPECT_TRUE(row.at("present_complete_ns").empty());
      EXPECT_EQ(row.at("no_complete"), "1") << "NoComplete::unavailable";
    }
    const std::string& updated = row.at("screen_updated_ns");
    if (updated.empty()) continue;
    ++with_update;
    const long long t = std::stoll(updated);
    EXPECT_GE(t, start) << "updated before its present was called, frame " << row.at("frame");
    EXPECT_GT(t, prev_updated) << "updates out of frame order at frame " << row.at("frame");
    EXPECT_FALSE(row.at("screen_server_ms").empty());
    prev_updated = t;
  }
  EXPECT_EQ(with_update, matched);
}

// The positive path of present wait, with the test layer
// VK_LAYER_LATLAB_test_present_wait below the capture layer giving lavapipe
// VK_KHR_present_id and VK_KHR_present_wait (it completes present N when
// present N + 1 is made, so vkcube's last present is still outstanding when
// it destroys its swapchain).
TEST(CaptureScreen, PresentWaitGivesEveryFrameItsCompletion) {
  if (const std::string why = vkcube_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const std::string fake_dir = LATLAB_FAKE_PRESENT_WAIT_DIR;
  if (access((fake_dir + "/VkLayer_latlab_test_present_wait.json").c_str(), R_OK) != 0)
    GTEST_SKIP() << "the test layer is not built in " << fake_dir;
  XvfbServer xvfb;
  if (!xvfb.ok()) GTEST_SKIP() << xvfb.why_not();
  TempDir dir;
  const auto out = (dir.path / "r.json").string();
  const auto csv = (dir.path / "f.csv").string();
  std::string env = vkcube_env(xvfb) + " VK_ADD_LAYER_PATH=" + fake_dir +
                    " VK_INSTANCE_LAYERS=VK_LAYER_LATLAB_test_present_wait";
  // Debian 12's loader searches only VK_LAYER_PATH when it is set (the GPU
  // machine's scripts set it), ignoring VK_ADD_LAYER_PATH.
  if (const char* lp = std::getenv("VK_LAYER_PATH"); lp != nullptr && *lp != '\0')
    env += " VK_LAYER_PATH=" + fake_dir + ":" + lp;
  const CliResult r = run_cli("capture --out " + out + " --frames-csv " + csv + " -- vkcube --c 40",
                              CliOptions{env});
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_EQ(r.output.find("fake present wait:"), std::string::npos)
      << "a wait on a destroyed swapchain: " << r.output;
  const json j = json::parse(slurp(out));
  ASSERT_EQ(j["frames"], 40) << r.output;
  EXPECT_EQ(j["sources"][0]["present_method"], "VK_KHR_present_wait") << j["unavailable"].dump(1);
  EXPECT_EQ(j["present_complete"]["measured"], 39) << j["present_complete"].dump();
  EXPECT_EQ(j["present_complete"]["retired"], 1) << "the last, outstanding at the destroy";
  EXPECT_EQ(j["figures"]["until_displayed"]["count"], 39);
  const auto rows = read_csv(slurp(csv));
  ASSERT_EQ(rows.size(), 40u);
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    if (i + 1 == rows.size()) {
      EXPECT_TRUE(row.at("present_complete_ns").empty());
      EXPECT_EQ(row.at("no_complete"), "4") << "NoComplete::retired";
      continue;
    }
    ASSERT_FALSE(row.at("present_complete_ns").empty()) << "frame " << i;
    EXPECT_EQ(row.at("no_complete"), "0");
    const long long complete = std::stoll(row.at("present_complete_ns"));
    EXPECT_GE(complete, std::stoll(row.at("present_end_ns"))) << "frame " << i;
    // This test layer completes a present when the next one is made.
    EXPECT_GE(complete, std::stoll(rows[i + 1].at("present_start_ns"))) << "frame " << i;
  }
}

TEST(CaptureScreen, WithoutAWindowTheObserverSaysWhy) {
  // capture preloads its GL interposer into `true` too; an ASan-built one
  // aborts an uninstrumented program ("ASan runtime does not come first").
  if (kSanitizerBuild != nullptr) GTEST_SKIP() << kSanitizerBuild;
  TempDir dir;
  const auto out = (dir.path / "r.json").string();
  // A program that makes no Vulkan device: no source, no window.
  const CliResult r = run_cli("capture --out " + out + " -- true");
  ASSERT_EQ(r.rc, 0) << r.output;
  const json j = json::parse(slurp(out));
  const json& screen = j["screen_observers"][0];
  EXPECT_EQ(screen["available"], false);
  EXPECT_NE(screen["reason"].get<std::string>().find("no window known"), std::string::npos)
      << screen.dump(1);
  EXPECT_EQ(screen["frames_watched"], 0);
  EXPECT_EQ(screen["figures"]["until_screen_updated"]["count"], 0);
}

}  // namespace
}  // namespace latlab::e2e
