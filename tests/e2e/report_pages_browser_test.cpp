// The comparison and history pages in a real browser (Debian's headless
// chromium, one session per page): the pages' script draws every chart of
// the page's data into its own canvas, with a legend row per series, the
// tick labels latlab chose and, with the cursor on the chart, the line of
// text of the point under it; nothing is logged as an error, and the page
// makes no request besides itself. Screenshots compare.png and history.png
// go to $LATLAB_ARTIFACTS_DIR (else the temp dir).
#include <gtest/gtest.h>

#include "e2e/browser_page.hpp"
#include "e2e/cli_run_helpers.hpp"

namespace latlab::e2e {
namespace {

namespace fs = std::filesystem;

// The script's own count, then per chart element: its series in the data,
// the legend's rows, the canvas' painted pixels, the tick labels drawn, and
// the line of text under it after the cursor moves to the plot's middle
// (with whether it is one of the chart's own).
constexpr const char* kProbe = R"js(JSON.stringify((function () {
  var status = window.latlabReport || null;
  var data = JSON.parse(document.getElementById("latlab-data").textContent), byId = {};
  data.charts.forEach(function (c) { byId[c.id] = c; });
  return {
    status: status && { charts: status.charts, drawn: status.drawn, failed: status.failed },
    charts: Array.prototype.map.call(document.querySelectorAll("[data-chart]"), function (el) {
      var c = byId[el.id] || { series: [], hover: [] }, canvas = el.querySelector("canvas");
      var painted = 0;
      if (canvas && canvas.width > 0 && canvas.height > 0) {
        var px = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
        for (var i = 3; i < px.length; i += 4) if (px[i] !== 0) painted++;
      }
      var over = el.querySelector(".u-over"), hover = null;
      if (over) {
        var r = over.getBoundingClientRect();
        over.dispatchEvent(new MouseEvent("mousemove", { bubbles: true,
          clientX: r.left + r.width / 2, clientY: r.top + r.height / 2 }));
        var line = el.parentNode.querySelector("p.hover");
        hover = line ? line.textContent : null;
      }
      return { id: el.id, series: c.series.length, painted: painted,
               legend: el.querySelectorAll(".u-legend .u-series").length,
               labels: (status && status.labels && status.labels[el.id]) || {},
               hover: hover, hover_known: c.hover.indexOf(hover) >= 0 };
    })
  };
})()))js";

// Every chart of the page drew (at least `min_charts`), with a legend row
// per series and its x axis, tick labels on both axes and its line of text
// at the cursor; no error, no request but the page's own.
void expect_every_chart_drawn(const std::string& chromium, const fs::path& html,
                              const fs::path& work, const char* png, size_t min_charts) {
  fs::create_directories(work);
  const PageVisit v = visit_page(chromium, html, kProbe, work, artifact_path(png));
  ASSERT_EQ(v.failure, "") << slurp(work / "chromium.log");
  ASSERT_TRUE(v.probe.is_object() && v.probe["status"].is_object())
      << "the probe or the page's script did not run: " << v.probe.dump();
  const nlohmann::json& status = v.probe["status"];
  EXPECT_GE(status["charts"].get<size_t>(), min_charts);
  EXPECT_EQ(status["drawn"], status["charts"]);
  EXPECT_TRUE(status["failed"].empty()) << status.dump();
  ASSERT_EQ(v.probe["charts"].size(), status["charts"].get<size_t>());
  for (const auto& c : v.probe["charts"]) {
    EXPECT_GT(c["painted"].get<int>(), 100) << c.dump();
    EXPECT_GE(c["series"].get<int>(), 1) << c.dump();
    EXPECT_EQ(c["legend"].get<int>(), c["series"].get<int>() + 1) << c.dump();
    for (const char* axis : {"x", "y"}) {
      ASSERT_TRUE(c["labels"].contains(axis)) << c.dump();
      EXPECT_GE(c["labels"][axis].size(), 1u) << c.dump();
    }
    EXPECT_TRUE(c["hover"].is_string() && !c["hover"].get<std::string>().empty()) << c.dump();
    EXPECT_TRUE(c["hover_known"].get<bool>()) << c.dump();
  }
  for (const std::string& p : v.problems) ADD_FAILURE() << p;
  EXPECT_EQ(v.requests, 1);  // the page itself, nothing else
  EXPECT_GT(fs::file_size(artifact_path(png)), 10'000u);
  std::printf("screenshot: %s\n", artifact_path(png).c_str());
}

TEST(ReportPagesBrowser, ComparisonAndHistoryPagesDrawEveryChartWithoutErrorsOrRequests) {
  const std::string chromium = find_chromium_binary();
  if (chromium.empty())
    GTEST_SKIP() << "no chromium (/usr/bin/chromium): scripts/install-deps.sh installs Debian's";
  TempDir dir;
  const std::string db = (dir.path / "r.db").string();
  for (int seed = 1; seed <= 3; ++seed) {  // run 3: Baseline only, a gap in History's Loaded
    const CliResult run = run_cli(
        "run --backend sim --time-scale 100 --frames 30 --warmup 4 --blocks 3 --interval-ms "
        "10-12 --mode " +
        std::string(seed == 3 ? "baseline" : "latency") + " --seed " + std::to_string(seed) +
        " --out " + (dir.path / (std::to_string(seed) + ".json")).string() + " --store " + db);
    ASSERT_EQ(run.rc, 0) << run.output;
  }
  const fs::path compare = dir.path / "cmp.html", history = dir.path / "hist.html";
  const CliResult c = run_cli("compare 1 2 --store " + db + " --report " + compare.string());
  ASSERT_EQ(c.rc, 0) << c.output;
  const CliResult h = run_cli("history --store " + db + " --report " + history.string());
  ASSERT_EQ(h.rc, 0) << h.output;
  // Per mode a shift chart and per series (10) one for p50 and one for p99:
  // 42 for Baseline and Loaded, less any statistic neither side has.
  expect_every_chart_drawn(chromium, compare, dir.path / "b1", "compare.png", 30);
  // Core and fence latency p50/p99 of Baseline and Loaded at least.
  expect_every_chart_drawn(chromium, history, dir.path / "b2", "history.png", 8);
}

}  // namespace
}  // namespace latlab::e2e
