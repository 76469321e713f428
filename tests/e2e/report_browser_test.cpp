// The HTML report in a real browser: Debian's headless chromium opens a
// report of a real `latlab run --report` (sim backend), and one of `latlab
// report` over a run and a capture result, and the test checks through the
// DevTools protocol that every chart drew on a non-empty canvas, that
// nothing was logged as an error and that the page made no request. A
// screenshot is saved (LATLAB_REPORT_SCREENSHOT, else in the temp dir).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "e2e/cdp_pipe.hpp"
#include "e2e/cli_run_helpers.hpp"
#include "report/result_json.hpp"
#include "unit/capture_result_doc.hpp"

namespace latlab::e2e {
namespace {

namespace fs = std::filesystem;

std::string find_chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (access(p, X_OK) == 0) return p;
  return "";
}

// Runs in the page: per chart element, whether it holds a canvas with at
// least one painted pixel; plus the script's own count.
constexpr const char* kProbe = R"js(JSON.stringify((function () {
  var charts = Array.prototype.slice.call(document.querySelectorAll("[data-chart]"));
  return {
    status: window.latlabReport || null,
    headlines: document.querySelectorAll("div.headline table.headline td").length,
    breakdown_rows: document.querySelectorAll("table.breakdown tr[data-stage]").length,
    breakdown_bars: document.querySelectorAll("svg.breakdown rect title").length,
    charts: charts.map(function (el) {
      var c = el.querySelector("canvas");
      if (!c || c.width === 0 || c.height === 0) return { id: el.id, painted: 0 };
      var px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data, painted = 0;
      for (var i = 3; i < px.length; i += 4) if (px[i] !== 0) painted++;
      return { id: el.id, painted: painted };
    })
  };
})()))js";

// Opens `html` in chromium: every chart drew (more than `min_charts` of
// them), no error was logged, no request was made but the page's own.
void expect_page_draws(const std::string& chromium, const TempDir& dir, const fs::path& html,
                       int min_charts) {
  const fs::path log = dir.path / "chromium.log";
  CdpBrowser browser(chromium, (dir.path / "profile").string(), log.string());
  ASSERT_TRUE(browser.ok());
  auto target = browser.call("Target.createTarget", {{"url", "about:blank"}});
  ASSERT_TRUE(target && target->contains("result")) << "chromium did not answer: " << slurp(log);
  const std::string target_id = (*target)["result"]["targetId"];
  auto attach = browser.call("Target.attachToTarget", {{"targetId", target_id}, {"flatten", true}});
  ASSERT_TRUE(attach && attach->contains("result")) << (attach ? attach->dump() : "timeout");
  const std::string session = (*attach)["result"]["sessionId"];
  for (const char* domain : {"Runtime.enable", "Log.enable", "Network.enable", "Page.enable"})
    ASSERT_TRUE(browser.call(domain, nlohmann::json::object(), session)) << domain;
  auto metrics = browser.call(
      "Emulation.setDeviceMetricsOverride",
      {{"width", 1400}, {"height", 1800}, {"deviceScaleFactor", 1}, {"mobile", false}}, session);
  ASSERT_TRUE(metrics);

  const std::string url = "file://" + html.string();
  auto nav = browser.call("Page.navigate", {{"url", url}}, session);
  ASSERT_TRUE(nav && nav->contains("result")) << (nav ? nav->dump() : "timeout");
  ASSERT_TRUE(browser.wait_for(
      [&](const nlohmann::json& m) {
        return m.value("method", "") == "Page.loadEventFired" &&
               m.value("sessionId", "") == session;
      },
      std::chrono::seconds(60)))
      << "the report did not finish loading";

  auto probe =
      browser.call("Runtime.evaluate", {{"expression", kProbe}, {"returnByValue", true}}, session);
  ASSERT_TRUE(probe && probe->contains("result")) << (probe ? probe->dump() : "timeout");
  const auto page = nlohmann::json::parse((*probe)["result"]["result"]["value"].get<std::string>());
  ASSERT_TRUE(page["status"].is_object()) << "the report's script did not run: " << page.dump();
  const int expected = page["status"]["charts"];
  EXPECT_GT(expected, min_charts);
  // The headline and where the time goes are plain HTML (and SVG) in the DOM.
  EXPECT_GT(page["headlines"].get<int>(), 0) << "no headline";
  EXPECT_EQ(page["breakdown_rows"].get<int>() % 7, 0);
  EXPECT_GE(page["breakdown_rows"].get<int>(), 7) << "no breakdown table";
  EXPECT_GT(page["breakdown_bars"].get<int>(), 0) << "no breakdown bars";
  EXPECT_EQ(page["status"]["drawn"], expected);
  EXPECT_EQ(page["charts"].size(), static_cast<size_t>(expected));
  for (const auto& c : page["charts"]) EXPECT_GT(c["painted"].get<int>(), 100) << c["id"];

  auto shot = browser.call("Page.captureScreenshot", {{"format", "png"}}, session);
  ASSERT_TRUE(shot && shot->contains("result"));
  const char* env = std::getenv("LATLAB_REPORT_SCREENSHOT");
  const fs::path png = env != nullptr && *env != '\0'
                           ? fs::path(env)
                           : fs::temp_directory_path() / "latlab-report-test.png";
  std::ofstream(png, std::ios::binary) << base64_decode((*shot)["result"]["data"]);
  EXPECT_GT(fs::file_size(png), 10'000u);
  std::printf("screenshot: %s\n", png.c_str());

  // Every event since the start: errors and requests.
  int requests = 0;
  for (const auto& e : browser.events()) {
    const std::string method = e.value("method", "");
    const auto& p = e.contains("params") ? e["params"] : nlohmann::json::object();
    if (method == "Runtime.exceptionThrown") ADD_FAILURE() << "exception: " << p.dump();
    if (method == "Runtime.consoleAPICalled" &&
        (p.value("type", "") == "error" || p.value("type", "") == "assert"))
      ADD_FAILURE() << "console error: " << p.dump();
    if (method == "Log.entryAdded" && p["entry"].value("level", "") == "error")
      ADD_FAILURE() << "log error: " << p.dump();
    if (method == "Network.requestWillBeSent") {
      const std::string req = p["request"].value("url", "");
      if (req != url) ADD_FAILURE() << "request made by the report: " << req;
      ++requests;
    }
  }
  EXPECT_EQ(requests, 1);  // the report itself, nothing else
}

TEST(ReportBrowser, EveryChartDrawsWithoutErrorsOrRequests) {
  const std::string chromium = find_chromium();
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
  // Without JavaScript: the headline and the breakdown are in the file itself.
  const std::string file = slurp(html);
  EXPECT_NE(file.find("<div class=\"headline\" id=\"r0-headline\">"), std::string::npos);
  EXPECT_NE(file.find("<table class=\"breakdown\" id=\"r0-breakdown\">"), std::string::npos);
  EXPECT_NE(file.find("<svg id=\"r0-breakdown-svg\""), std::string::npos);
  // 11 series x (histogram + percentiles) + timelines + clock
  expect_page_draws(chromium, dir, html, 20);
}

// `latlab report` of a run and a capture: the capture's percentile chart
// draws beside the run's charts.
TEST(ReportBrowser, ACaptureBesideARunDrawsToo) {
  const std::string chromium = find_chromium();
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
  const fs::path html = dir.path / "both.html";
  const CliResult report =
      run_cli("report " + run_json.string() + " " + capture_json.string() + " -o " + html.string());
  ASSERT_EQ(report.rc, 0) << report.output;
  ASSERT_NE(slurp(html).find("id=\"r1-capture-pct\""), std::string::npos);
  expect_page_draws(chromium, dir, html, 20);
}

}  // namespace
}  // namespace latlab::e2e
