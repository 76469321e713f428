// `latlab capture` on Wayland (docs/capture.md, "Present completion"):
// Debian's vkcube-wayland (lavapipe) and es2gears_wayland (llvmpipe) on a
// headless weston started by each test. Every frame is either shown, with
// the compositor's time, or counted discarded; display times follow the
// present and one another as the compositor's refresh allows; mailbox's
// replaced frames are counted dropped, never displayed; the programs keep
// their own pace (their Wayland event handling is theirs); the Khronos
// validation layer beside the capture layer sees no error. Skipped, with
// the reason, where weston, a program or lavapipe is absent, or in
// sanitizer builds.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "capture_env.hpp"
#include "cli_run_helpers.hpp"
#include "csv_rows.hpp"
#include "presentmon_reader.hpp"
#include "weston_server.hpp"

namespace latlab::e2e {
namespace {

using json = nlohmann::json;

constexpr int64_t kVsync = 0x1;        // wp_presentation_feedback.kind.vsync
constexpr int64_t kTolerance = 500'000;  // ns

int64_t num(const CsvRow& r, const char* column) { return std::stoll(r.at(column)); }

class CaptureWayland : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kSanitizerBuild != nullptr) GTEST_SKIP() << kSanitizerBuild;
    if (!on_path("weston")) GTEST_SKIP() << "weston not installed (weston)";
    weston_.emplace();
    if (!weston_->ok()) GTEST_SKIP() << weston_->why_not();
  }
  // Why `program` cannot run here (Vulkan ones need lavapipe), or "".
  static std::string skip_reason(const char* program, bool vulkan) {
    if (!on_path(program)) return std::string(program) + " not installed";
    if (vulkan && access(kLavapipeIcd, R_OK) != 0) return "lavapipe not installed";
    return {};
  }
  std::string vk_env() const { return weston_->env() + " VK_ICD_FILENAMES=" + kLavapipeIcd; }
  std::string gl_env() const {
    std::string env = weston_->env();
    if (access(kMesaEglVendor, R_OK) == 0)
      env += std::string(" __EGL_VENDOR_LIBRARY_FILENAMES=") + kMesaEglVendor;
    return env;
  }
  // Captures `program` into r.json, f.csv, pm.csv and r.html; the result.
  // `rc`: the program's exit status, which capture passes on.
  json capture(const std::string& env, const std::string& options, const std::string& program,
               int rc = 0) {
    const CliResult r = run_cli("capture --out " + path("r.json") + " --frames-csv " +
                                    path("f.csv") + " --presentmon-csv " + path("pm.csv") +
                                    " --report " + path("r.html") + " " + options + " -- " +
                                    program,
                                CliOptions{env});
    output_ = r.output;
    EXPECT_EQ(r.rc, rc) << r.output;
    return json::parse(slurp(path("r.json")));
  }
  std::string path(const char* name) const { return (dir_.path / name).string(); }

  std::optional<WestonServer> weston_;
  TempDir dir_;
  std::string output_;
};

// Each frame is displayed at or after its present returned, with the
// output's refresh period, or discarded without a time; anything else
// fails with the frame's reason (no_complete). Consecutive display times
// of a surface increase; where the compositor says they are synchronised
// to the vertical retrace (vsync) they lie whole refresh periods apart,
// elsewhere (weston headless: its repaint timer) at least one period.
// Returns, for the shown frames, present returned -> shown (ns, sorted)
// and the compositor's cycle: the refresh period on a compositor that
// follows it; weston headless does not: it repaints a refresh minus its
// repaint window (7 ms) after a frame is shown and shows it 16 ms later
// (25.7 ms at 60 Hz), so a commit just after a repaint began waits two
// cycles, more than three refresh periods. The cycle is taken as the
// shortest time between two display times (never below the refresh).
struct DisplayDelays {
  std::vector<int64_t> commit_to_shown;
  int64_t cycle = 0;
  int64_t at(double quantile) const {
    const auto last = static_cast<double>(commit_to_shown.size() - 1);
    return commit_to_shown[static_cast<size_t>(quantile * last)];
  }
};

DisplayDelays check_display_times(const std::vector<CsvRow>& rows) {
  DisplayDelays out;
  std::vector<int64_t>& commit_to_shown = out.commit_to_shown;
  const CsvRow* prev = nullptr;
  int64_t refresh = 0;
  int64_t cycle = INT64_MAX;
  for (const CsvRow& r : rows) {
    const std::string frame = "frame " + r.at("frame");
    EXPECT_EQ(r.at("complete_method"), "wp_presentation") << frame;
    if (r.at("displayed") == "0") {
      EXPECT_EQ(r.at("no_complete"), "7") << frame << ": discarded";
      EXPECT_TRUE(r.at("present_complete_ns").empty()) << frame;
      continue;
    }
    EXPECT_EQ(r.at("displayed"), "1") << frame << " neither shown nor discarded, no_complete "
                                      << r.at("no_complete");
    if (r.at("displayed") != "1") return out;
    const int64_t shown = num(r, "present_complete_ns");
    refresh = num(r, "refresh_ns");
    EXPECT_GT(refresh, 0) << frame;
    EXPECT_GE(num(r, "until_displayed_ns"), 0) << frame;
    EXPECT_GE(shown, num(r, "present_end_ns")) << frame;
    commit_to_shown.push_back(shown - num(r, "present_end_ns"));
    if (prev != nullptr) {
      const int64_t gap = shown - num(*prev, "present_complete_ns");
      cycle = std::min(cycle, gap);
      const bool vsync = (num(r, "display_flags") & kVsync) && (num(*prev, "display_flags") & kVsync);
      if (vsync) {
        const int64_t off = (gap + refresh / 2) % refresh - refresh / 2;
        EXPECT_LE(std::abs(off), kTolerance) << frame << ": " << gap << " ns after the last";
        EXPECT_GE(gap, refresh - kTolerance) << frame;
      } else {
        EXPECT_GE(gap, refresh - kTolerance) << frame << ": two frames within one refresh";
      }
    }
    prev = &r;
  }
  EXPECT_FALSE(commit_to_shown.empty()) << "no frame was displayed";
  std::sort(commit_to_shown.begin(), commit_to_shown.end());
  out.cycle = cycle == INT64_MAX ? refresh : std::max(cycle, refresh);
  // The median frame is shown within three cycles even on a busy machine.
  if (!commit_to_shown.empty()) {
    EXPECT_LE(out.at(0.5), 3 * out.cycle) << "present returned to shown, p50 (ns); the "
                                          << "compositor's cycle " << out.cycle << " ns";
  }
  return out;
}

// Why the machine is too busy for a tail-latency check (its 1-minute load
// average at or above half its CPUs: builds or tests beside), or "".
std::string busy_machine() {
  double load = 0;
  if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = 0;
    std::fclose(f);
  }
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (load < 0.5 * static_cast<double>(cpus)) return {};
  return "the machine is busy (load average " + std::to_string(load) + " on " +
         std::to_string(cpus) + " CPUs): the p99 of present-to-display is checked on an idle one";
}

// Frames counted by outcome sum to the frames: nothing is left unexplained.
// The display section counts them the same way.
void expect_shown_or_discarded(const json& j, uint64_t frames) {
  EXPECT_EQ(j["display"]["shown"], j["present_complete"]["measured"]);
  EXPECT_EQ(j["display"]["discarded"], j["present_complete"]["discarded"]);
  EXPECT_EQ(j["frames"], frames);
  EXPECT_EQ(j["present_complete"]["measured"].get<uint64_t>() +
                j["present_complete"]["discarded"].get<uint64_t>(),
            frames)
      << j["present_complete"].dump();
  ASSERT_EQ(j["sources"].size(), 1u);
  EXPECT_EQ(j["sources"][0]["present_method"], "wp_presentation");
  for (const auto& u : j["unavailable"]) EXPECT_NE(u["name"], "present_complete") << u.dump();
}

TEST_F(CaptureWayland, VkcubeEveryFrameIsShownOrDiscarded) {
  if (const std::string why = skip_reason("vkcube-wayland", true); !why.empty()) GTEST_SKIP() << why;
  const json j = capture(vk_env(), "", "vkcube-wayland --c 200");
  expect_shown_or_discarded(j, 200);
  EXPECT_EQ(j["figures"]["until_displayed"]["count"], j["present_complete"]["measured"]);
  EXPECT_GT(j["figures"]["between_displays"]["count"].get<int>(), 0);
  EXPECT_GT(j["display"]["refresh_us"].get<double>(), 0.0);
  check_display_times(read_csv(slurp(path("f.csv"))));
  // The report's "where the time goes" ends at the display.
  const std::string html = slurp(path("r.html"));
  const size_t row = html.find("<tr data-figure=\"until_displayed\">");
  ASSERT_NE(row, std::string::npos);
  const std::string cells = html.substr(row, html.find("</tr>", row) - row);
  EXPECT_EQ(cells.find("n/a"), std::string::npos) << cells;
  EXPECT_NE(html.find("present_complete by wp_presentation"), std::string::npos);
}

// On an idle machine 99% of the frames are shown within three of the
// compositor's cycles of the present's return.
TEST_F(CaptureWayland, VkcubeFramesAreShownWithinThreeCyclesAtP99) {
  if (const std::string why = skip_reason("vkcube-wayland", true); !why.empty()) GTEST_SKIP() << why;
  if (const std::string why = busy_machine(); !why.empty()) GTEST_SKIP() << why;
  capture(vk_env(), "", "vkcube-wayland --c 200");
  const DisplayDelays d = check_display_times(read_csv(slurp(path("f.csv"))));
  ASSERT_FALSE(d.commit_to_shown.empty());
  EXPECT_LE(d.at(0.99), 3 * d.cycle)
      << "present returned to shown, p99 (ns); the compositor's cycle " << d.cycle << " ns";
}

TEST_F(CaptureWayland, VkcubeMailboxCountsReplacedFramesAsDroppedNotDisplayed) {
  if (const std::string why = skip_reason("vkcube-wayland", true); !why.empty()) GTEST_SKIP() << why;
  const json j = capture(vk_env(), "", "vkcube-wayland --c 300 --present_mode 1");
  expect_shown_or_discarded(j, 300);
  // Mailbox presents far faster than weston headless repaints: the
  // compositor replaces most frames before it shows them.
  EXPECT_GT(j["present_complete"]["discarded"].get<int>(), 0) << j["present_complete"].dump();
  EXPECT_EQ(j["figures"]["until_displayed"]["count"], j["present_complete"]["measured"]);
  check_display_times(read_csv(slurp(path("f.csv"))));
  const test::PmLog pm = test::read_presentmon_csv(slurp(path("pm.csv")));
  ASSERT_TRUE(pm.errors.empty()) << pm.errors.front();
  int dropped = 0;
  for (size_t i = 0; i < pm.rows.size(); ++i) {
    const bool drop = pm.rows[i].at("Dropped") == "1";
    dropped += drop ? 1 : 0;
    EXPECT_EQ(pm.number(i, "MsUntilDisplayed").has_value(), !drop) << "row " << i;
    if (drop) {
      EXPECT_FALSE(pm.number(i, "DisplayedTime").has_value()) << "row " << i;
    } else {
      EXPECT_EQ(pm.rows[i].at("Dropped"), "0") << "row " << i;
    }
  }
  EXPECT_EQ(dropped, j["present_complete"]["discarded"].get<int>());
  EXPECT_NE(output_.find("latlab capture: display: " + j["display"]["shown"].dump() +
                         " frames shown, " + j["display"]["discarded"].dump() + " discarded"),
            std::string::npos)
      << output_;
}

TEST_F(CaptureWayland, VkcubeUnderTheValidationLayerHasNoError) {
  if (const std::string why = skip_reason("vkcube-wayland", true); !why.empty()) GTEST_SKIP() << why;
  if (access("/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json", R_OK) != 0)
    GTEST_SKIP() << "Khronos validation layer not installed (vulkan-validationlayers)";
  // Listed after ours: the loader puts it between the layer and the driver.
  const json j = capture(vk_env() + " VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation", "",
                         "vkcube-wayland --c 60");
  EXPECT_EQ(output_.find("Validation Error"), std::string::npos) << output_;
  expect_shown_or_discarded(j, 60);
}

// Without the compositor's feedback (here turned off) present_complete is
// unavailable for every frame, with the reason, never 0.
TEST_F(CaptureWayland, WithoutFeedbackPresentCompleteIsUnavailableWithTheReason) {
  if (const std::string why = skip_reason("vkcube-wayland", true); !why.empty()) GTEST_SKIP() << why;
  const json j =
      capture(vk_env() + " LATLAB_CAPTURE_WAYLAND_FEEDBACK=0", "", "vkcube-wayland --c 30");
  EXPECT_EQ(j["present_complete"]["unavailable"], 30) << j["present_complete"].dump();
  EXPECT_EQ(j["figures"]["until_displayed"]["count"], 0);
  std::string reason;
  for (const auto& u : j["unavailable"]) {
    if (u["name"] == "present_complete") reason = u["reason"];
  }
  EXPECT_NE(reason.find("on Wayland: turned off by LATLAB_CAPTURE_WAYLAND_FEEDBACK=0"),
            std::string::npos)
      << reason;
}

TEST_F(CaptureWayland, Es2gearsEveryFrameIsShownOrDiscarded) {
  if (const std::string why = skip_reason("es2gears_wayland", false); !why.empty())
    GTEST_SKIP() << why;
  const json j = capture(gl_env(), "--seconds 3 --terminate", "es2gears_wayland", 128 + 15);
  ASSERT_GT(j["frames"].get<int>(), 30) << "es2gears draws at the compositor's pace";
  expect_shown_or_discarded(j, j["frames"].get<uint64_t>());
  EXPECT_EQ(j["sources"][0]["api"], "opengl");
  check_display_times(read_csv(slurp(path("f.csv"))));
}

// es2gears_wayland's own count of the frames it drew in its first 5 s
// ("N frames in 5.0 seconds = ..."), or -1.
int es2gears_frames(const std::string& output) {
  std::smatch m;
  static const std::regex line(R"((\d+) frames in 5\.0 seconds)");
  return std::regex_search(output, m, line) ? std::stoi(m[1]) : -1;
}

TEST_F(CaptureWayland, Es2gearsKeepsItsOwnFramePace) {
  if (const std::string why = skip_reason("es2gears_wayland", false); !why.empty())
    GTEST_SKIP() << why;
  if (!on_path("stdbuf")) GTEST_SKIP() << "stdbuf not installed (coreutils)";
  // Its pace comes from the compositor's frame callbacks, which it (and
  // Mesa's EGL) only receives if latlab leaves its events alone. stdbuf:
  // its count line must reach the pipe before it is ended.
  std::string alone;
  run_shell(gl_env() + " timeout 9 stdbuf -oL es2gears_wayland 2>&1", alone);
  const int without = es2gears_frames(alone);
  ASSERT_GT(without, 0) << alone;
  const json j =
      capture(gl_env(), "--seconds 6.8 --terminate", "stdbuf -oL es2gears_wayland", 128 + 15);
  const int with = es2gears_frames(output_);
  ASSERT_GT(with, 0) << output_;
  // One-sided: an event taken from it would stall it (a count near 0), a
  // dispatch that blocks would slow it; more frames with latlab than
  // without is the machine's load between the two runs (builds beside).
  EXPECT_GE(with, 0.75 * without) << "frames in its first 5 s, without latlab " << without;
  EXPECT_GT(j["present_complete"]["measured"].get<int>(), 0);
}

#ifdef LATLAB_WAYLAND_DISCONNECT_PROBE
// The errors of a valgrind log (each "Invalid read/write/free" block) whose
// stack names one of `names`, one after another; "" when none does. (The
// dynamic loader's own reports, known false positives, name none of them.)
std::string invalid_accesses_of(const std::string& log, const std::vector<std::string>& names) {
  std::string found;
  static const std::regex block(R"(==\d+== Invalid (read|write|free)[^\n]*\n(==\d+==  +[^\n]*\n)*)");
  for (std::sregex_iterator it(log.begin(), log.end(), block), end; it != end; ++it) {
    const std::string text = it->str();
    for (const std::string& n : names) {
      if (text.find(n) == std::string::npos) continue;
      found += text;
      break;
    }
  }
  return found;
}

// A program that lets its display go without eglTerminate, while feedback
// requests are still awaited (its surface has no role: nothing is shown),
// by a linked call or one it looked up with dlsym: the interposer's thread,
// which dispatches latlab's queue every 2 ms, lets the display go first; the
// program lives on 50 ms and ends normally, and every swap before the
// disconnect is a frame of the capture.
TEST_F(CaptureWayland, AProgramThatDisconnectsWithoutTerminatingEndsNormally) {
  for (const char* how : {"", " --dlsym"}) {
    SCOPED_TRACE(std::string("disconnect") + (*how != '\0' ? " looked up with dlsym" : ""));
    const std::string probe = std::string(LATLAB_WAYLAND_DISCONNECT_PROBE) + " 200" + how;
    std::string alone;
    const int alone_rc = run_shell(gl_env() + " " + probe + " 2>&1", alone);
    if (alone_rc == 77) GTEST_SKIP() << alone;
    ASSERT_EQ(alone_rc, 0) << alone;
    const json j = capture(gl_env(), "", probe);
    EXPECT_NE(output_.find("swaps 200"), std::string::npos) << output_;
    EXPECT_EQ(j["frames"].get<int>(), 200) << output_;
    EXPECT_EQ(j["sources"][0]["api"], "opengl");
    // A freed display may go unnoticed in a plain run: under valgrind no
    // access of latlab's, or of libwayland's for it, may touch freed memory.
    if (!on_path("valgrind")) continue;
    capture(gl_env(), "", "valgrind --log-file=" + path("vg.log") + " " + probe);
    EXPECT_EQ(invalid_accesses_of(slurp(path("vg.log")), {"latlab", "wayland"}), "");
  }
}
#endif

}  // namespace
}  // namespace latlab::e2e
