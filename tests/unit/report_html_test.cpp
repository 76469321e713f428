// The HTML report from typed results (report/html/report_html.hpp): a
// capture's section (its figures, counts, sources and the chart of its
// per-frame figures), and a latency run's percentile table and charts.
#include "report/html/report_html.hpp"

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

}  // namespace
}  // namespace latlab
