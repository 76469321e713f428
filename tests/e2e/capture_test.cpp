// `latlab capture -- PROGRAM` on programs nobody here wrote: Debian's vkcube
// (vulkan-tools) on lavapipe under Xvfb. Skipped, with the reason, where
// vkcube or Xvfb is absent.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "capture/span_budget.hpp"
#include "capture_env.hpp"
#include "cli_run_helpers.hpp"
#include "presentmon_reader.hpp"
#include "xvfb_server.hpp"

namespace latlab::e2e {
namespace {

using json = nlohmann::json;

class CaptureVkcube : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = vkcube_skip_reason(); !why.empty()) GTEST_SKIP() << why;
    if (!xvfb_.ok()) GTEST_SKIP() << xvfb_.why_not();
    env_ = vkcube_env(xvfb_);
  }
  CliResult capture(const std::string& args) {
    return run_cli("capture " + args, CliOptions{env_});
  }
  // A gfxreconstruct trace of `frames` vkcube frames (for the replays).
  void record_trace(int frames, std::string& trace) {
    trace = (dir_.path / "cube.gfxr").string();
    std::string rec;
    ASSERT_EQ(run_shell(env_ +
                            " VK_INSTANCE_LAYERS=VK_LAYER_LUNARG_gfxreconstruct "
                            "GFXRECON_CAPTURE_FILE_TIMESTAMP=false GFXRECON_CAPTURE_FILE=" +
                            trace + " vkcube --c " + std::to_string(frames) + " 2>&1",
                        rec),
              0)
        << rec;
  }
  // Captures gfxrecon-replay (with `replay`, its options and a space) of a
  // `frames`-frame vkcube trace under `options` of latlab capture: `r` the
  // console, `j` the result. Skips without gfxreconstruct (the caller
  // returns when IsSkipped()).
  void capture_replay(int frames, const std::string& options, const std::string& replay,
                      CliResult& r, json& j) {
    if (!on_path("gfxrecon-replay"))
      GTEST_SKIP() << "gfxrecon-replay not installed (gfxreconstruct)";
    std::string trace;
    ASSERT_NO_FATAL_FAILURE(record_trace(frames, trace));
    const auto out = (dir_.path / "r.json").string();
    r = capture("--out " + out + " " + options + " -- gfxrecon-replay " + replay + trace);
    ASSERT_EQ(r.rc, 0) << r.output;
    j = json::parse(slurp(out));
  }
  XvfbServer xvfb_;
  std::string env_;
  TempDir dir_;
};

TEST_F(CaptureVkcube, FramesEqualPresentsAndGpuSpansLieInFrames) {
  const auto out = (dir_.path / "r.json").string();
  const auto csv = (dir_.path / "f.csv").string();
  // Every span, whatever it costs (the budget: SubmissionsPastTheBudgetAreCountedUntimed).
  const CliResult r =
      capture("--out " + out + " --frames-csv " + csv + " --gpu-spans all -- vkcube --c 120");
  ASSERT_EQ(r.rc, 0) << r.output;
  const json j = json::parse(slurp(out));
  EXPECT_EQ(j["kind"], "capture");
  EXPECT_EQ(j["partial"], false) << j["partial_reason"];
  EXPECT_EQ(j["frames"], 120) << "vkcube --c 120 presents 120 times";
  EXPECT_EQ(j["gpu_spans_missing"], 0);
  EXPECT_EQ(j["capture"]["records_dropped"], 0);
  EXPECT_EQ(j["figures"]["gpu_busy"]["count"], 120);
  EXPECT_EQ(j["figures"]["between_presents"]["count"], 119);
  EXPECT_GT(j["overhead"]["layer_cpu_per_submit"]["count"].get<int>(), 0);
  bool named_present_complete = false;
  for (const auto& u : j["unavailable"]) named_present_complete |= u["name"] == "present_complete";
  EXPECT_TRUE(named_present_complete) << "present_complete is unavailable here, with its reason";
  // GPU spans lie inside their frames: no GPU work of a frame (or of a
  // submission) begins before the frame (the submission) did.
  EXPECT_GE(j["figures"]["gpu_latency"]["min"].get<double>(), 0.0);
  EXPECT_GE(j["submit_figures"]["submit_to_gpu"]["min"].get<double>(), 0.0);
  std::istringstream in(slurp(csv));
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> names = [&] {
    std::vector<std::string> n;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) n.push_back(cell);
    return n;
  }();
  // Every column once (gpu_busy_ns and acquire_wait_ns were written twice).
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size()) << line;
  const auto column = [&](const char* name) {
    return static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  const size_t begin_col = column("gpu_begin_ns"), end_col = column("gpu_end_ns"),
               busy_col = column("gpu_busy_ns"), start_col = column("frame_start_ns");
  ASSERT_LT(busy_col, names.size()) << line;
  int rows = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) f.push_back(cell);
    f.resize(names.size());  // a trailing empty cell is not read by getline
    ++rows;
    ASSERT_FALSE(f[begin_col].empty()) << "gpu_begin missing: " << line;
    const long long gpu_begin = std::stoll(f[begin_col]);
    const long long gpu_end = std::stoll(f[end_col]);
    ASSERT_FALSE(f[busy_col].empty()) << "gpu_busy missing: " << line;
    const long long busy = std::stoll(f[busy_col]);
    EXPECT_LE(gpu_begin, gpu_end) << line;
    EXPECT_LE(busy, gpu_end - gpu_begin) << line;
    if (!f[start_col].empty()) {
      EXPECT_GE(gpu_begin, std::stoll(f[start_col])) << "GPU began before its frame: " << line;
    }
  }
  EXPECT_EQ(rows, 120);
}

// The PresentMon CSV of a real capture, read as a PresentMon log and held
// against the frames CSV of the same capture.
TEST_F(CaptureVkcube, PresentmonCsvReadsBackAgainstTheFramesCsv) {
  const auto frames = (dir_.path / "f.csv").string();
  const auto pm = (dir_.path / "pm.csv").string();
  const CliResult r =
      capture("--frames-csv " + frames + " --presentmon-csv " + pm + " -- vkcube --c 60");
  ASSERT_EQ(r.rc, 0) << r.output;
  const test::PmLog log = test::read_presentmon_csv(slurp(pm));
  ASSERT_TRUE(log.errors.empty()) << log.errors.front();
  ASSERT_EQ(log.rows.size(), 60u);
  std::istringstream in(slurp(frames));
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> names = test::pm_split(line);
  const auto col = [&](const char* name) {
    return static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    rows.push_back(test::pm_split(line));
    rows.back().resize(names.size());
  }
  ASSERT_EQ(rows.size(), 60u);
  const double first = std::stod(rows[0][col("present_start_ns")]);
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& f = rows[i];
    EXPECT_EQ(log.rows[i].at("Application"), "vkcube");
    EXPECT_EQ(log.rows[i].at("ProcessID"), f[col("pid")]);
    EXPECT_NEAR(*log.number(i, "TimeInSeconds"),
                (std::stod(f[col("present_start_ns")]) - first) / 1e9, 1e-9);
    // Each ms column is its ns figure / 1e6, and NA exactly where the figure is empty.
    for (const auto& [pm_col, ns_col] : std::vector<std::pair<const char*, const char*>>{
             {"MsBetweenPresents", "between_presents_ns"},
             {"MsInPresentAPI", "in_present_api_ns"},
             {"MsCPUBusy", "cpu_busy_ns"},
             {"MsGPULatency", "gpu_latency_ns"},
             {"MsGPUTime", "gpu_time_ns"},
             {"MsGPUBusy", "gpu_busy_ns"},
             {"MsUntilRenderComplete", "until_render_complete_ns"},
             {"MsUntilDisplayed", "until_displayed_ns"}}) {
      const std::string& ns = f[col(ns_col)];
      const auto ms = log.number(i, pm_col);
      ASSERT_EQ(ms.has_value(), !ns.empty()) << pm_col << " row " << i;
      if (ms) {
        EXPECT_NEAR(*ms, std::stod(ns) / 1e6, 1e-6) << pm_col << " row " << i;
      }
    }
  }
}

// --report writes the HTML report of the capture beside its result.
TEST_F(CaptureVkcube, ReportIsTheCapturesHtmlPage) {
  const auto out = (dir_.path / "r.json").string();
  const auto page = (dir_.path / "r.html").string();
  const CliResult r = capture("--out " + out + " --report " + page + " -- vkcube --c 30");
  ASSERT_EQ(r.rc, 0) << r.output;
  const std::string html = slurp(page);
  EXPECT_NE(html.find("kind capture"), std::string::npos);
  EXPECT_NE(html.find("<tr><th>average FPS</th><td>"), std::string::npos);
  EXPECT_NE(html.find("<th>between_presents</th><td>29</td>"), std::string::npos);
  EXPECT_NE(r.output.find("wrote " + out + ", " + page), std::string::npos) << r.output;
}

// Two programs under one capture: each process's swapchain has its own
// figures beside the pooled ones.
TEST_F(CaptureVkcube, TwoProcessesHaveTheirOwnFigures) {
  const auto out = (dir_.path / "r.json").string();
  const CliResult r = capture("--out " + out + " -- sh -c 'vkcube --c 30 & vkcube --c 50; wait'");
  ASSERT_EQ(r.rc, 0) << r.output;
  const json j = json::parse(slurp(out));
  EXPECT_EQ(j["frames"], 80);
  ASSERT_EQ(j["per_swapchain"].size(), 2u) << j["per_swapchain"].dump();
  std::multiset<int> frames;
  std::set<int> pids;
  for (const auto& w : j["per_swapchain"]) {
    frames.insert(w["frames"].get<int>());
    pids.insert(w["pid"].get<int>());
    EXPECT_EQ(w["figures"]["between_presents"]["count"], w["frames"].get<int>() - 1);
    EXPECT_GT(w["fps"]["average"].get<double>(), 0.0);
  }
  EXPECT_EQ(frames, (std::multiset<int>{30, 50}));
  EXPECT_EQ(pids.size(), 2u) << "one swapchain in each process";
  EXPECT_NE(r.output.find("swapchain 0: 30 frames"), std::string::npos) << r.output;
}

// `sh -c 'vkcube &'`: the shell ends at once; its orphaned vkcube's frames
// are still captured, to its end.
TEST_F(CaptureVkcube, AnOrphanedProgramIsFollowed) {
  const auto out = (dir_.path / "r.json").string();
  const CliResult r = capture("--out " + out + " -- sh -c 'vkcube --c 40 &'");
  ASSERT_EQ(r.rc, 0) << r.output;
  const json j = json::parse(slurp(out));
  EXPECT_EQ(j["frames"], 40) << r.output;
  EXPECT_EQ(j["partial"], false) << j["partial_reason"];
  EXPECT_NE(r.output.find("recording goes on"), std::string::npos) << r.output;
}

// The result's cost: latlab's own CPU per frame, its threads in
// it (the collector at least), and the bracketing probe on vkcube's queue:
// the layer's timestamps lie before and after the stand-in's, and the
// figures are ordered.
TEST_F(CaptureVkcube, ResultHasTheCostOfLatlabsThreadsAndTheBracketingProbe) {
  const auto out = (dir_.path / "r.json").string();
  const CliResult r = capture("--out " + out + " -- vkcube --c 60");
  ASSERT_EQ(r.rc, 0) << r.output;
  const json j = json::parse(slurp(out));
  const json& o = j["overhead"];
  ASSERT_TRUE(o["layer_cpu_per_frame_us"].is_number()) << o;
  EXPECT_GT(o["threads_cpu_per_frame_us"].get<double>(), 0.0) << o;
  EXPECT_GE(o["layer_cpu_per_frame_us"].get<double>(), o["threads_cpu_per_frame_us"].get<double>());
  EXPECT_GE(o["threads"].get<int>(), 1) << "the collector, latlab-collect";
  // The collector reads the timestamps from memory, never from the driver.
  EXPECT_FALSE(o.contains("query_reads")) << o;
  // Every submission carried the layer's command buffers but those the
  // span budget left untimed.
  EXPECT_EQ(o["bracketed_submits"].get<int>(),
            j["submits"].get<int>() - j["submit_spans"]["budget"].get<int>())
      << j["submit_spans"];
  EXPECT_TRUE(o["driver_cpu_per_frame_us"].is_number()) << o;
  EXPECT_TRUE(o["gpu_per_frame_us"].is_number()) << o;
  EXPECT_GT(o["gpu_per_frame_us"].get<double>(), 0.0) << o;
  EXPECT_FALSE(o["leaves_out"].get<std::string>().empty());
  // The probe alone submits and waits 32 times at vkCreateDevice.
  ASSERT_TRUE(o["setup_ms"].is_number()) << o;
  EXPECT_GT(o["setup_ms"].get<double>(), 0.0) << o;
  EXPECT_NE(r.output.find("ms to the program's vkCreateDevice"), std::string::npos) << r.output;
  ASSERT_EQ(j["bracketing"].size(), 1u) << "vkcube has one queue";
  const json& b = j["bracketing"][0];
  EXPECT_EQ(b["rounds"], 16);
  for (const char* side : {"before_us", "after_us"}) {
    EXPECT_GT(b[side]["min"].get<double>(), 0.0) << b;
    EXPECT_LE(b[side]["min"].get<double>(), b[side]["p50"].get<double>()) << b;
    EXPECT_LE(b[side]["p50"].get<double>(), b[side]["max"].get<double>()) << b;
  }
  EXPECT_NE(r.output.find("in the driver for its command buffers"), std::string::npos) << r.output;
  // The layer resets its queries on the queue: the program's host query
  // reset is nothing it lacks.
  for (const auto& u : j["unavailable"])
    EXPECT_NE(u.value("name", std::string()), "device:host_query_reset") << u;
}

// A program that submits without presenting and faster than lavapipe
// draws (a gfxreconstruct replay restricted to a surface it never made)
// has hundreds of submissions in flight: the layer's slots grow, so none
// goes without its span for want of one (it was 126-158 of 301 with a
// fixed ring of 64).
TEST_F(CaptureVkcube, SubmitsWithoutPresentsKeepTheirSpans) {
  CliResult r;
  json j;
  ASSERT_NO_FATAL_FAILURE(capture_replay(300, "--gpu-spans all", "--surface-index 5 ", r, j));
  if (IsSkipped()) return;
  EXPECT_GE(j["submits"].get<int>(), 300) << r.output;
  EXPECT_EQ(j["submit_spans"]["ring_full"], 0) << j["submit_spans"];
  EXPECT_LE(j["gpu_spans_missing"].get<int>(), 1) << j["submit_spans"];
  EXPECT_TRUE(j["overhead"]["gpu_span_budget_percent"].is_null()) << j["overhead"];
  EXPECT_TRUE(j["overhead"]["gpu_span_price_us"].is_null()) << j["overhead"];
  EXPECT_TRUE(j["overhead"]["gpu_span_price_from"].is_null()) << j["overhead"];
}

// The bracketing probe's price of a span, from a capture's `overhead`: its
// driver and device estimates over the bracketed submissions.
double probe_price_per_span_us(const json& o) {
  return (o["driver_cpu_us"].get<double>() + o["gpu_us"].get<double>()) /
         o["bracketed_submits"].get<double>();
}

// A capture's span price is the probe's, or learnt from the program's
// `unit` ("frames", "submissions"): then dearer than the probe's, at most
// 8 times it, and the console says so.
void expect_probes_or_learnt_price(const json& o, const std::string& unit,
                                   const std::string& console) {
  ASSERT_TRUE(o["gpu_span_price_us"].is_number()) << o;
  ASSERT_GT(o["bracketed_submits"].get<double>(), 0) << o;
  const double price = o["gpu_span_price_us"].get<double>();
  const double probe = probe_price_per_span_us(o);
  const bool learnt = o["gpu_span_price_from"] == unit;
  EXPECT_TRUE(learnt || o["gpu_span_price_from"] == "probe") << o;
  if (learnt) {
    EXPECT_GT(price, probe) << o;
    EXPECT_LE(price, probe * capture::SpanBudget::kMaxPriceOverProbe * 1.01) << o;
  } else {
    EXPECT_NEAR(price, probe, 0.01 * price) << o;
  }
  EXPECT_EQ(console.find("priced from its timed " + unit) != std::string::npos, learnt) << console;
}

// A replay that presents: the budget may learn a span's price from the
// program's timed and untimed frames; the result says which price it used.
TEST_F(CaptureVkcube, APresentingProgramsSpanPriceIsTheProbesOrLearntFromItsFrames) {
  CliResult r;
  json j;
  ASSERT_NO_FATAL_FAILURE(capture_replay(600, "", "", r, j));
  if (IsSkipped()) return;
  expect_probes_or_learnt_price(j["overhead"], "frames", r.output);
}

// The same replay with the default budget: on lavapipe a span costs more
// than 2 % of a replayed frame, so the layer times only some submissions,
// counts the others with their reason and says so; what it times stays
// near its share of the time.
TEST_F(CaptureVkcube, SubmissionsPastTheBudgetAreCountedUntimed) {
  CliResult r;
  json j;
  ASSERT_NO_FATAL_FAILURE(capture_replay(600, "", "--surface-index 5 ", r, j));
  if (IsSkipped()) return;
  const json& o = j["overhead"];
  EXPECT_EQ(o["gpu_span_budget_percent"], 2.0) << o;
  // A program that never presents: the price is the probe's (its driver
  // and device estimates per span) or learnt from its blocks of timed
  // submissions against untimed ones, then dearer, at most 8 times it.
  expect_probes_or_learnt_price(o, "submissions", r.output);
  const int measured = j["submit_spans"]["measured"].get<int>();
  const int budget = j["submit_spans"]["budget"].get<int>();
  EXPECT_GE(measured, capture::SpanBudget::kBurstSpans) << j["submit_spans"] << "\n" << r.output;
  EXPECT_EQ(measured + budget + j["submit_spans"]["not_read"].get<int>(), j["submits"].get<int>())
      << j["submit_spans"];
  if (budget > 0) {
    EXPECT_NE(r.output.find("submissions not timed, to keep what their GPU spans cost within 2 %"),
              std::string::npos)
        << r.output;
  }
}

TEST_F(CaptureVkcube, ExitCodeIsPassedThrough) {
  const auto out = (dir_.path / "r.json").string();
  const CliResult r = capture("--out " + out + " -- sh -c 'vkcube --c 5 >/dev/null; exit 3'");
  EXPECT_EQ(r.rc, 3) << r.output;
  const json j = json::parse(slurp(out));
  EXPECT_EQ(j["program"]["exit_code"], 3);
  EXPECT_EQ(j["frames"], 5);
}

// With VK_LAYER_PATH set (as the GPU machine's scripts set it for the
// validation layer), Debian 12's loader searches only that path, not
// VK_ADD_LAYER_PATH: capture puts its layer on both.
TEST_F(CaptureVkcube, LayerLoadsWhenVkLayerPathIsSet) {
  const auto out = (dir_.path / "r.json").string();
  const CliResult r = run_cli("capture --out " + out + " -- vkcube --c 5",
                              CliOptions{env_ + " VK_LAYER_PATH=" + dir_.path.string()});
  EXPECT_EQ(r.rc, 0) << r.output;
  const json j = json::parse(slurp(out));
  EXPECT_EQ(j["frames"], 5) << r.output;
  EXPECT_EQ(r.output.find("the layer never reported"), std::string::npos) << r.output;
}

TEST_F(CaptureVkcube, KilledProgramGivesPartialResult) {
  const auto out = (dir_.path / "r.json").string();
  // vkcube without --c runs until killed; the shell kills it after a while.
  const CliResult r =
      capture("--out " + out + " -- sh -c 'vkcube & p=$!; sleep 3; kill -9 $p; wait $p'");
  EXPECT_EQ(r.rc, 128 + 9) << r.output;
  const json j = json::parse(slurp(out));
  EXPECT_EQ(j["partial"], true);
  EXPECT_GT(j["frames"].get<int>(), 0) << "what was sent before the kill is kept";
}

TEST_F(CaptureVkcube, FramesLimitStopsRecordingAndLeavesTheProgram) {
  const auto out = (dir_.path / "r.json").string();
  const CliResult r = capture("--out " + out + " --frames 20 -- vkcube --c 60");
  ASSERT_EQ(r.rc, 0) << r.output;
  const json j = json::parse(slurp(out));
  EXPECT_EQ(j["frames"], 20);
  EXPECT_EQ(j["capture"]["stopped_by"], "frames");
}

TEST_F(CaptureVkcube, ValidationLayerBelowTheLayerSeesNoError) {
  if (access("/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json", R_OK) != 0)
    GTEST_SKIP() << "Khronos validation layer not installed (vulkan-validationlayers)";
  const auto out = (dir_.path / "r.json").string();
  // Listed after ours: the loader puts it between the layer and the driver,
  // so it checks every call the layer makes and every batch it changes.
  const CliResult r = run_cli("capture --out " + out + " -- vkcube --c 60",
                              CliOptions{env_ + " VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation"});
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_EQ(r.output.find("Validation Error"), std::string::npos) << r.output;
  const json j = json::parse(slurp(out));
  EXPECT_EQ(j["frames"], 60);
}

}  // namespace
}  // namespace latlab::e2e
