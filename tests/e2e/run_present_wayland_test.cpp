// `latlab run --present` on Wayland: lavapipe presenting to a headless
// weston the test starts, the validation layer on. The window is an
// xdg_toplevel; the screen observer is the compositor's own report
// (wp_presentation): every frame it times was shown after its present
// started, frames it discarded have no time, and the X framebuffer observer
// says why it cannot watch a Wayland window. A Wayland display that cannot
// be reached leaves present unavailable with the reason, and the run goes on.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "capture_env.hpp"
#include "cli_run_helpers.hpp"
#include "csv_rows.hpp"
#include "weston_server.hpp"

namespace latlab::e2e {
namespace {

constexpr const char* kArgs =
    "run --mode baseline --backend vulkan --present --blocks 2 --warmup 20 --frames 120 ";

// The run's entry in `unavailable` named `name`, or "".
std::string unavailable(const nlohmann::json& j, const std::string& name) {
  for (const auto& u : j["unavailable"])
    if (u["name"] == name) return u["reason"];
  return "";
}

TEST(RunPresentWayland, TheCompositorTimesEveryFrameItShows) {
  if (!on_path("weston")) GTEST_SKIP() << "weston not installed (weston)";
  WestonServer weston;
  if (!weston.ok()) GTEST_SKIP() << weston.why_not();
  TempDir dir;
  const auto out = dir.path / "r.json";
  const auto csv = dir.path / "f.csv";
  const CliResult r = run_cli(
      std::string(kArgs) + "--validation --out " + out.string() + " --frames-csv " + csv.string(),
      CliOptions{"env -u DISPLAY " + weston.env()});
  if (r.rc == 3 && r.output.find("vulkan backend unavailable") != std::string::npos)
    GTEST_SKIP() << "no Vulkan backend: " << r.output;
  ASSERT_EQ(r.rc, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(slurp(out));
  if (j["present"].is_null()) GTEST_SKIP() << "present unavailable: " << unavailable(j, "present");
  EXPECT_EQ(j["diagnostics"]["validation"]["errors"], 0);
  EXPECT_NE(j["present"]["surface"].get<std::string>().find("VK_KHR_wayland_surface"),
            std::string::npos)
      << j["present"]["surface"];
  const nlohmann::json& obs = j["present"]["screen_observers"];
  ASSERT_GE(obs.size(), 2u);
  EXPECT_EQ(obs[0]["name"], "wp_presentation");
  ASSERT_TRUE(obs[0]["available"].get<bool>()) << obs[0];
  EXPECT_EQ(obs[1]["name"], "x11_framebuffer");
  EXPECT_FALSE(obs[1]["available"].get<bool>());
  EXPECT_NE(obs[1]["reason"].get<std::string>().find("Wayland"), std::string::npos) << obs[1];

  const nlohmann::json& wp = j["modes"]["baseline"]["present"]["screen"]["wp_presentation"];
  ASSERT_TRUE(wp.is_object()) << j["modes"]["baseline"]["present"].dump();
  const nlohmann::json& to_screen = wp["present_to_screen"];
  // Mailbox may replace frames faster than the refresh: some, not all.
  EXPECT_GT(to_screen["count"].get<int>(), 0);
  EXPECT_EQ(to_screen["count"].get<int>() + to_screen["missing"].get<int>(), 120);
  // The compositor shows a commit after it came, never before.
  EXPECT_GE(to_screen["min"].get<double>(), 0.0);
  EXPECT_GE(wp["signal_to_screen"]["min"].get<double>(), to_screen["min"].get<double>());

  // Per frame: the compositor's time after the present's start, or empty.
  const std::vector<CsvRow> rows = read_csv(slurp(csv));
  size_t shown = 0;
  for (const CsvRow& row : rows) {
    const std::string& at = row.at("screen_wp_presentation_ns");
    if (at.empty()) continue;
    ++shown;
    EXPECT_GE(std::stoll(at), std::stoll(row.at("present_start_ns")))
        << "frame " << row.at("frame_id");
  }
  EXPECT_GT(shown, 0u);
}

TEST(RunPresentWayland, AnUnreachableCompositorLeavesPresentUnavailable) {
  TempDir dir;
  const auto out = dir.path / "r.json";
  const CliResult r = run_cli(std::string(kArgs) + "--out " + out.string(),
                              CliOptions{"env -u DISPLAY XDG_RUNTIME_DIR=" + dir.path.string() +
                                         " WAYLAND_DISPLAY=latlab-nobody"});
  if (r.rc == 3 && r.output.find("vulkan backend unavailable") != std::string::npos)
    GTEST_SKIP() << "no Vulkan backend: " << r.output;
  ASSERT_EQ(r.rc, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(slurp(out));
  EXPECT_TRUE(j["present"].is_null());
  EXPECT_NE(unavailable(j, "present").find("latlab-nobody"), std::string::npos) << j["unavailable"];
  EXPECT_GT(j["modes"]["baseline"]["total"]["stages"]["gpu_execution"]["count"].get<int>(), 0);
}

}  // namespace
}  // namespace latlab::e2e
