// The HTML report in a real browser: Debian's headless chromium opens a
// report of a real `latlab run --report` (sim backend), and one of `latlab
// report` over a run, a capture and a run with GPU outliers, and the test
// checks through the DevTools protocol (browser_page.hpp) that every chart
// drew on a non-empty canvas with distinct tick labels, that modes more than
// 10x apart get their own or a log axis, that an outlier histogram keeps
// more than one bin and labels its overflow, that the headline and the
// breakdown are there with JavaScript off, that nothing was logged as an
// error and that the page made no request. Screenshots: report.png and
// report-several.png in $LATLAB_ARTIFACTS_DIR (else the temp dir).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "e2e/browser_page.hpp"
#include "e2e/cli_run_helpers.hpp"
#include "report/result_json.hpp"
#include "unit/capture_result_doc.hpp"
#include "unit/sim_result_doc.hpp"

namespace latlab::e2e {
namespace {

namespace fs = std::filesystem;

// Runs in the page: per chart element, its axis kind, uPlot's axes, how many
// pixels of its canvas are painted, the tick labels drawn, its caption, and
// how many bins of each histogram series hold frames; plus the script's own count.
constexpr const char* kProbe = R"js(JSON.stringify((function () {
  var status = window.latlabReport || null;
  var data = JSON.parse(document.getElementById("latlab-data").textContent);
  var bins = {};
  data.charts.forEach(function (c) {
    if (c.type === "hist") bins[c.id] = c.series.map(function (s) {
      return s.values.slice(0, -1).filter(function (v) { return v > 0; }).length;
    });
  });
  var charts = Array.prototype.slice.call(document.querySelectorAll("[data-chart]"));
  return {
    status: status && { charts: status.charts, drawn: status.drawn, failed: status.failed },
    charts: charts.map(function (el) {
      var c = el.querySelector("canvas"), painted = 0;
      if (c && c.width > 0 && c.height > 0) {
        var px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
        for (var i = 3; i < px.length; i += 4) if (px[i] !== 0) painted++;
      }
      var caption = el.parentNode.querySelector("figcaption");
      return { id: el.id, axis: el.getAttribute("data-axis"), painted: painted,
               axes: el.querySelectorAll(".u-axis").length,
               labels: (status && status.labels && status.labels[el.id]) || {},
               caption: caption ? caption.textContent : "", bins: bins[el.id] || [] };
    })
  };
})()))js";

// Runs with JavaScript off: what is there without the script.
constexpr const char* kNoJsProbe = R"js(JSON.stringify({
  headlines: document.querySelectorAll("div.headline table.headline td").length,
  breakdown_rows: document.querySelectorAll("table.breakdown tr[data-stage]").length,
  breakdown_bars: document.querySelectorAll("svg.breakdown rect title").length,
  note_shown: getComputedStyle(document.getElementById("nojs")).display !== "none",
  canvases: document.querySelectorAll("canvas").length
}))js";

// The chart `id` of the probe's answer, or null.
const nlohmann::json* chart_of(const nlohmann::json& page, const std::string& id) {
  for (const auto& c : page["charts"])
    if (c["id"] == id) return &c;
  return nullptr;
}

// Opens `html` in chromium: every chart drew (more than `min_charts` of
// them) with tick labels that differ from their neighbours, no error was
// logged, no request was made but the page's own; without JavaScript the
// headline and the breakdown are there. Returns the probe's answer.
nlohmann::json expect_page_draws(const std::string& chromium, const TempDir& dir,
                                 const fs::path& html, int min_charts, const char* png) {
  const fs::path shot = artifact_path(png);
  const PageVisit v = visit_page(chromium, html, kProbe, dir.path, shot, kNoJsProbe);
  EXPECT_EQ(v.failure, "") << slurp(dir.path / "chromium.log");
  if (!v.failure.empty()) return nullptr;
  const nlohmann::json& page = v.probe;
  EXPECT_TRUE(page.is_object() && page["status"].is_object())
      << "the probe or the report's script did not run: " << page.dump();
  if (!page.is_object() || !page["status"].is_object()) return nullptr;
  const int expected = page["status"]["charts"];
  EXPECT_GT(expected, min_charts);
  EXPECT_EQ(page["status"]["drawn"], expected);
  EXPECT_TRUE(page["status"]["failed"].empty()) << page["status"].dump();
  EXPECT_EQ(page["charts"].size(), static_cast<size_t>(expected));
  for (const auto& c : page["charts"]) {
    EXPECT_GT(c["painted"].get<int>(), 100) << c["id"];
    EXPECT_GE(c["axes"].get<int>(), 2) << c["id"];
    // Adjacent tick labels differ on every axis (no "0.008 0.008").
    for (const auto& [axis, labels] : c["labels"].items()) {
      EXPECT_GE(labels.size(), 2u) << c["id"] << " " << axis;
      for (size_t i = 1; i < labels.size(); ++i)
        EXPECT_NE(labels[i - 1], labels[i]) << c["id"] << " " << axis << ": " << labels.dump();
    }
    EXPECT_TRUE(c["labels"].contains("x") && c["labels"].contains("y")) << c.dump();
  }
  // Without JavaScript: the headline and where the time goes, and no chart.
  const nlohmann::json& plain = v.no_js_probe;
  EXPECT_EQ(plain["canvases"], 0) << "scripts ran: " << plain.dump();
  EXPECT_EQ(plain["note_shown"], true);
  EXPECT_GT(plain["headlines"].get<int>(), 0) << "no headline";
  EXPECT_GE(plain["breakdown_rows"].get<int>(), 7) << "no breakdown table";
  EXPECT_EQ(plain["breakdown_rows"].get<int>() % 7, 0);
  EXPECT_GT(plain["breakdown_bars"].get<int>(), 0) << "no breakdown bars";

  for (const std::string& p : v.problems) ADD_FAILURE() << p;
  EXPECT_EQ(v.requests, 2);  // the report itself, twice (scripts on, then off); nothing else
  EXPECT_GT(fs::file_size(shot), 10'000u);
  std::printf("screenshot: %s\n", shot.c_str());
  return page;
}

TEST(ReportBrowser, EveryChartDrawsWithoutErrorsOrRequests) {
  const std::string chromium = find_chromium_binary();
  if (chromium.empty())
    GTEST_SKIP() << "no chromium (/usr/bin/chromium): scripts/install-deps.sh installs Debian's";
  TempDir dir;
  const fs::path json = dir.path / "run.json";
  const fs::path html = dir.path / "run.html";
  const CliResult run = run_cli(
      "run --backend sim --time-scale 100 --frames 60 --warmup 6 --blocks 3 "
      "--interval-ms 10-12 --out " +
      json.string() + " --report " + html.string());
  ASSERT_EQ(run.rc, 0) << run.output;
  // 11 series x (histogram + percentiles) + timelines + clock
  const nlohmann::json page = expect_page_draws(chromium, dir, html, 20, "report.png");
  ASSERT_TRUE(page.is_object());
  // Loaded's GPU time (8.3 ms) is far more than 10x Baseline's: one histogram
  // per mode on its own axis, the percentile curves on two axes, the
  // timeline of Loaded's stages on a log axis.
  EXPECT_EQ(chart_of(page, "r0-hist-gpu_execution"), nullptr);
  for (const char* mode : {"baseline", "loaded"}) {
    const nlohmann::json* h = chart_of(page, std::string("r0-hist-gpu_execution-") + mode);
    ASSERT_NE(h, nullptr) << mode;
    EXPECT_EQ((*h)["axis"], "own");
    EXPECT_GE((*h)["bins"][0].get<int>(), 1) << mode << ": " << h->dump();
  }
  const nlohmann::json* pct = chart_of(page, "r0-pct-gpu_execution");
  ASSERT_NE(pct, nullptr);
  EXPECT_EQ((*pct)["axis"], "own");
  EXPECT_EQ((*pct)["axes"], 3) << "x, Baseline's and Loaded's axes";
  EXPECT_TRUE((*pct)["labels"].contains("y2")) << pct->dump();
  const nlohmann::json* timeline = chart_of(page, "r0-timeline-loaded");
  ASSERT_NE(timeline, nullptr);
  EXPECT_EQ((*timeline)["axis"], "log");
}

// `latlab report` of a run, a capture and a run with GPU outliers: the
// capture's percentile chart draws beside the runs' charts, and the outlier
// histogram keeps its frames apart in bins with the outliers counted.
TEST(ReportBrowser, ACaptureAndAnOutlierRunBesideARunDrawToo) {
  const std::string chromium = find_chromium_binary();
  if (chromium.empty())
    GTEST_SKIP() << "no chromium (/usr/bin/chromium): scripts/install-deps.sh installs Debian's";
  TempDir dir;
  const fs::path run_json = dir.path / "run.json";
  const CliResult run = run_cli(
      "run --backend sim --time-scale 100 --frames 40 --warmup 4 --blocks 2 --per-frame "
      "--interval-ms 10-12 --out " +
      run_json.string());
  ASSERT_EQ(run.rc, 0) << run.output;
  const fs::path capture_json = dir.path / "capture.json";
  std::ofstream(capture_json) << run_result_to_json(testing::capture_result({})).dump(2) << "\n";
  // Every 25th frame's GPU time 5 ms more: 4 % of the frames, so p99 is an outlier.
  const RunResult outliers = testing::sim_run_result(
      {.frames = 200, .blocks = 2, .outlier_every = 25, .outlier_ns = 5'000'000});
  ASSERT_TRUE(outliers.latency.has_value());
  const fs::path outlier_json = dir.path / "outliers.json";
  std::ofstream(outlier_json) << run_result_to_json(outliers).dump(2) << "\n";
  const fs::path html = dir.path / "several.html";
  const CliResult report = run_cli("report " + run_json.string() + " " + capture_json.string() +
                                   " " + outlier_json.string() + " -o " + html.string());
  ASSERT_EQ(report.rc, 0) << report.output;
  ASSERT_NE(slurp(html).find("id=\"r1-capture-pct\""), std::string::npos);
  const nlohmann::json page = expect_page_draws(chromium, dir, html, 20, "report-several.png");
  ASSERT_TRUE(page.is_object());
  const nlohmann::json* h = chart_of(page, "r2-hist-gpu_execution");
  ASSERT_NE(h, nullptr);
  EXPECT_GT((*h)["bins"][0].get<int>(), 5) << h->dump();
  EXPECT_NE((*h)["caption"].get<std::string>().find("frames above"), std::string::npos)
      << h->dump();
}

}  // namespace
}  // namespace latlab::e2e
