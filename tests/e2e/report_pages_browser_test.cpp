// The comparison and history pages in a real browser (Debian's headless
// chromium, one session per page): every SVG chart is laid out and draws
// each of its data marks, nothing is logged as an error, and the page makes
// no request besides itself. Screenshots compare.png and history.png go to
// $LATLAB_ARTIFACTS_DIR (else the temp dir).
#include <gtest/gtest.h>

#include "e2e/browser_page.hpp"
#include "e2e/cli_run_helpers.hpp"

namespace latlab::e2e {
namespace {

namespace fs = std::filesystem;

// Per chart: its laid-out size, the data marks it says it has and how many
// of them have a non-empty box.
constexpr const char* kProbe = R"js(JSON.stringify(Array.prototype.map.call(
  document.querySelectorAll("svg.chart"), function (svg) {
    var r = svg.getBoundingClientRect(), drawn = 0;
    svg.querySelectorAll(".pt").forEach(function (p) {
      var b = p.getBBox();
      if (b.width > 0 || b.height > 0) drawn++;
    });
    return { id: svg.id, width: r.width, height: r.height,
             marks: Number(svg.getAttribute("data-marks")), drawn: drawn };
  })))js";

void expect_every_chart_drawn(const std::string& chromium, const fs::path& html,
                              const fs::path& work, const char* png, size_t min_charts) {
  fs::create_directories(work);
  const PageVisit v = visit_page(chromium, html, kProbe, work, artifact_path(png));
  ASSERT_EQ(v.failure, "") << slurp(work / "chromium.log");
  ASSERT_TRUE(v.probe.is_array()) << v.probe.dump();
  EXPECT_GE(v.probe.size(), min_charts);
  int marks = 0;
  for (const auto& c : v.probe) {
    EXPECT_GT(c["width"].get<double>(), 100) << c.dump();
    EXPECT_GT(c["height"].get<double>(), 50) << c.dump();
    EXPECT_EQ(c["drawn"], c["marks"]) << c.dump();
    marks += c["marks"].get<int>();
  }
  EXPECT_GT(marks, 0);
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
  // Per mode a shift chart and one per series (10): 22 for Baseline and Loaded.
  expect_every_chart_drawn(chromium, compare, dir.path / "b1", "compare.png", 22);
  // Core and fence latency p50/p99 of Baseline and Loaded at least.
  expect_every_chart_drawn(chromium, history, dir.path / "b2", "history.png", 8);
}

}  // namespace
}  // namespace latlab::e2e
