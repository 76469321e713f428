// The HTML report from typed results (report/html/report_html.hpp): a
// capture's section (its figures, counts, sources and the chart of its
// per-frame figures), and a latency run's percentile table and charts.
#include "report/html/report_html.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "unit/capture_result_doc.hpp"
#include "unit/sim_result_doc.hpp"

namespace latlab {
namespace {

std::string page_of(const RunResult& r) {
  const ReportInput in{"r.json", &r};
  return render_html_report(std::span(&in, 1));
}

bool has(const std::string& page, const std::string& part) {
  return page.find(part) != std::string::npos;
}

TEST(ReportHtml, ACaptureShowsItsFiguresSourcesAndChart) {
  const RunResult c = testing::capture_result({.seed = 1});
  const std::string page = page_of(c);
  EXPECT_TRUE(has(page, "kind capture, device llvmpipe (vulkan)")) << page.substr(0, 2000);
  EXPECT_TRUE(has(page, "<th>between_presents</th><td>119</td>"));
  EXPECT_TRUE(has(page, "<code>vkcube --c 120</code>"));
  EXPECT_TRUE(has(page, "<td>vkGetCalibratedTimestampsEXT</td>"));
  EXPECT_TRUE(has(page, "<b>present_complete</b> (pid 4001): no VK_KHR_present_wait"));
  EXPECT_TRUE(has(page, "id=\"r0-capture-pct\""));
  // A figure no frame has is n/a, never 0: until_displayed has 120 missing.
  EXPECT_TRUE(has(page,
                  "<th>until_displayed</th><td>0</td><td class=\"missing\">120</td><td><span "
                  "class=\"na\""));
  EXPECT_FALSE(has(page, "<h3>Percentiles"));  // no latency table for a capture
}

TEST(ReportHtml, ALatencyRunShowsPercentilesAndChartsFromItsPerFrameSeries) {
  RunResult r;
  r.latency.emplace();
  ASSERT_FALSE(
      testing::sim_result_doc(testing::SimRunSpec{.frames = 20, .blocks = 2}, &*r.latency).empty());
  r.device = r.latency->device;
  std::string page = page_of(r);
  EXPECT_TRUE(has(page, "<table class=\"pct\">"));
  EXPECT_TRUE(has(page, "no per-frame series"));
  r.per_frame = per_frame_of(*r.latency);
  page = page_of(r);
  EXPECT_FALSE(has(page, "no per-frame series"));
  EXPECT_TRUE(has(page, "id=\"r0-hist-gpu_execution\""));
  EXPECT_TRUE(has(page, "id=\"r0-timeline-baseline\""));
}

RunResult sim_run(uint32_t frames) {
  RunResult r;
  r.latency.emplace();
  EXPECT_FALSE(
      testing::sim_result_doc(testing::SimRunSpec{.frames = frames, .blocks = 2}, &*r.latency)
          .empty());
  r.device = r.latency->device;
  return r;
}

// The cell with `id`'s contents, "" when there is none.
std::string cell_of(const std::string& page, const std::string& id) {
  const std::string open = "id=\"" + id + "\">";
  const size_t at = page.find(open);
  if (at == std::string::npos) return "";
  const size_t from = at + open.size();
  return page.substr(from, page.find("</td>", from) - from);
}

TEST(ReportHtml, TheHeadlineHoldsEachModesObserverPercentiles) {
  const RunResult r = sim_run(40);
  const std::string page = page_of(r);
  ASSERT_TRUE(has(page, "id=\"r0-headline\""));
  // The headline comes before every other table of the run.
  EXPECT_LT(page.find("id=\"r0-headline\""), page.find("<h3>Modes</h3>"));
  ASSERT_FALSE(r.latency->modes.empty());
  for (size_t i = 0; i < r.latency->modes.size(); ++i) {
    for (const Series s : {Series::core_latency, Series::fence_latency}) {
      const Distribution& d = r.latency->modes[i].total[static_cast<size_t>(s)];
      ASSERT_FALSE(d.empty()) << to_string(s);
      const std::string id = fmt::format("r0-hl-{}-{}-", i, to_string(s));
      EXPECT_EQ(cell_of(page, id + "p50"), fmt::format("{:.1f}", d.p50)) << id;
      EXPECT_EQ(cell_of(page, id + "p99"), fmt::format("{:.1f}", d.p99)) << id;
    }
  }
  EXPECT_TRUE(has(page, "<b>Device</b>: " + r.latency->device.name));
}

// The breakdown table's rows: the stages in path order, each mode's median.
TEST(ReportHtml, WhereTheTimeGoesListsTheStagesInPathOrderWithTheirMedians) {
  RunResult r = sim_run(40);
  // A stage no frame had is n/a in the table and a gap in the bar, never 0.
  Distribution& queue =
      r.latency->modes[0].total[static_cast<size_t>(Series::submit_start_to_gpu_begin)];
  queue = Distribution{};
  queue.missing = 40;
  const std::string page = page_of(r);
  const size_t table = page.find("id=\"r0-breakdown\"");
  ASSERT_NE(table, std::string::npos);
  ASSERT_TRUE(has(page, "<svg id=\"r0-breakdown-svg\""));
  size_t at = table;
  for (size_t k = 0; k < kStageCount; ++k) {
    const Series s = static_cast<Series>(k);
    const size_t row = page.find(fmt::format("<tr data-stage=\"{}\">", to_string(s)), table);
    ASSERT_NE(row, std::string::npos) << to_string(s);
    EXPECT_GT(row, at) << to_string(s) << " out of path order";
    at = row;
    const std::string tr = page.substr(row, page.find("</tr>", row) - row);
    for (const LatencyModeResult& m : r.latency->modes) {
      const Distribution& d = m.total[k];
      const std::string want = d.empty() ? "n/a" : "<td>" + fmt::format("{:.1f}", d.p50) + "</td>";
      EXPECT_TRUE(has(tr, want)) << m.name << " " << tr;
    }
  }
  EXPECT_TRUE(has(page, "queue: n/a"));  // the gap's hover text
  EXPECT_TRUE(has(page, "Medians of stages need not add up to the median total"));
}

}  // namespace
}  // namespace latlab
