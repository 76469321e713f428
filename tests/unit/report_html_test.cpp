// The HTML report from typed results (report/html/report_html.hpp): a
// capture's section (its figures, counts, sources and the chart of its
// per-frame figures), and a latency run's percentile table and charts.
#include "report/html/report_html.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "report/result_json.hpp"
#include "report/result_reader.hpp"
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

TEST(ReportHtml, ACaptureShowsWhatItCostAndTheSpansOffsets) {
  RunResult c = testing::capture_result({.seed = 1});
  c.capture->overhead.layer_cpu_per_frame_us = 41.25;
  c.capture->overhead.threads = 2;
  c.capture->bracketing.push_back({4001, 0, 0, 16, 7.5, 7.25, 20.75, 9.5, 9.25, 48.75, 53.5});
  const std::string page = page_of(c);
  EXPECT_TRUE(has(page, "latlab&#39;s CPU per frame, us (calls and threads)</th><td>41.2")) << page;
  EXPECT_TRUE(has(page, "queue 0.0: before / after p50, us</th><td>7.5 / 9.5 (min 7.2 / 9.2"));
  // No driver estimate in this result: n/a, never 0.
  EXPECT_TRUE(has(page, "(estimate)</th><td><span class=\"na\""));
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

// The page's data block: every chart's data and axes.
nlohmann::json charts_of(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"latlab-data\">";
  const size_t from = page.find(open);
  if (from == std::string::npos) return nullptr;
  const size_t at = from + open.size();
  return nlohmann::json::parse(page.substr(at, page.find("</script>", at) - at))["charts"];
}

const nlohmann::json* chart_named(const nlohmann::json& charts, const std::string& id) {
  for (const auto& c : charts)
    if (c["id"] == id) return &c;
  return nullptr;
}

// A sim run with a Loaded mode that is its Baseline, every per-frame GPU
// time multiplied by gpu_scale.
RunResult run_with_baseline_as_loaded(const testing::SimRunSpec& spec, int64_t gpu_scale) {
  RunResult r = testing::sim_run_result(spec);
  LatencyModeResult loaded = r.latency->modes.at(0);
  loaded.name = "loaded";
  r.latency->modes.push_back(loaded);
  PerFrameMode pm = r.per_frame->modes.at(0);
  pm.mode = "loaded";
  for (auto& v : pm.series_ns[static_cast<size_t>(Series::gpu_execution)])
    if (v) *v *= gpu_scale;
  r.per_frame->modes.push_back(pm);
  return r;
}

// A run whose Loaded mode is Baseline with every GPU time 200x longer.
RunResult run_with_far_apart_modes() {
  return run_with_baseline_as_loaded({.frames = 60, .blocks = 2}, 200);
}

TEST(ReportHtml, ModesMoreThanTenfoldApartGetOwnAxes) {
  const std::string page = page_of(run_with_far_apart_modes());
  const nlohmann::json charts = charts_of(page);
  // gpu_execution: a histogram per mode on its own bins, the percentile curves on two axes.
  EXPECT_EQ(chart_named(charts, "r0-hist-gpu_execution"), nullptr);
  for (const char* mode : {"baseline", "loaded"}) {
    const std::string id = std::string("r0-hist-gpu_execution-") + mode;
    EXPECT_TRUE(has(page, "id=\"" + id + "\" data-chart=\"hist\" data-axis=\"own\"")) << id;
    ASSERT_NE(chart_named(charts, id), nullptr) << id;
  }
  const nlohmann::json* pct = chart_named(charts, "r0-pct-gpu_execution");
  ASSERT_NE(pct, nullptr);
  EXPECT_EQ((*pct)["axis"], "own");
  EXPECT_TRUE((*pct)["axes"].contains("y2"));
  EXPECT_EQ((*pct)["series"][1]["scale"], "y2");
  // Stages alike in both modes share one histogram and one axis.
  const nlohmann::json* queue = chart_named(charts, "r0-hist-submit_start_to_gpu_begin");
  ASSERT_NE(queue, nullptr);
  EXPECT_EQ((*queue)["axis"], "linear");
  EXPECT_EQ((*queue)["series"].size(), 2u);
  // Loaded's timeline: GPU time 200x the other stages, one log axis.
  const nlohmann::json* timeline = chart_named(charts, "r0-timeline-loaded");
  ASSERT_NE(timeline, nullptr);
  EXPECT_EQ((*timeline)["axis"], "log");
  EXPECT_TRUE((*timeline)["axes"]["y"]["log"].get<bool>());
}

TEST(ReportHtml, EveryChartHasAxesWhoseNeighbouringLabelsDiffer) {
  const std::string page = page_of(run_with_far_apart_modes());
  const nlohmann::json charts = charts_of(page);
  ASSERT_GT(charts.size(), 20u);
  for (const auto& c : charts) {
    ASSERT_TRUE(c.contains("axes")) << c["id"];
    EXPECT_TRUE(c["axes"].contains("x") && c["axes"].contains("y")) << c["id"];
    for (const auto& [key, axis] : c["axes"].items()) {
      const auto& labels = axis["labels"];
      EXPECT_GE(labels.size(), 2u) << c["id"] << " " << key;
      for (size_t i = 1; i < labels.size(); ++i)
        EXPECT_NE(labels[i - 1], labels[i]) << c["id"] << " " << key << " " << labels.dump();
    }
  }
}

TEST(ReportHtml, AnOutlierHistogramKeepsItsBinsAndCountsTheOverflow) {
  // Every 25th frame's GPU time 5 ms more: 4 % of the frames, p99 among them.
  const RunResult r = testing::sim_run_result(
      {.frames = 200, .blocks = 2, .outlier_every = 25, .outlier_ns = 5'000'000});
  const std::string page = page_of(r);
  const nlohmann::json charts = charts_of(page);
  const nlohmann::json* h = chart_named(charts, "r0-hist-gpu_execution");
  ASSERT_NE(h, nullptr);
  int used = 0;
  for (const auto& c : (*h)["series"][0]["values"]) used += c.get<int>() > 0 ? 1 : 0;
  EXPECT_GT(used, 10);
  EXPECT_LT((*h)["x"].back().get<double>(), 1000);  // the bins end below the 5 ms outliers
  const size_t at = page.find("id=\"r0-hist-gpu_execution\"");
  const std::string figure = page.substr(at, page.find("</figure>", at) - at);
  EXPECT_TRUE(has(figure, "baseline: 8 frames above")) << figure;  // frames 25, 50, ... 200
}

// 1 MB of HTML at most for a 1250-frame latency run: the report of a
// virtual-time sim run (deterministic) with 1250 frames in each of two modes.
TEST(ReportHtml, A1250FrameRunReportIsAtMostOneMegabyte) {
  const RunResult r = run_with_baseline_as_loaded({.frames = 1250, .blocks = 10}, 1);
  ASSERT_EQ(r.per_frame->modes[1].frame_id.size(), 1250u);
  const std::string page = page_of(r);
  std::printf("report of 2 x 1250 frames: %zu bytes\n", page.size());
  EXPECT_LE(page.size(), 1'000'000u);
}

// A schema_version 1 document (no raw-sleep CPU and wall time) still renders:
// headline, breakdown and charts.
TEST(ReportHtml, ASchemaVersion1ResultStillRenders) {
  nlohmann::ordered_json doc = run_result_to_json(testing::sim_run_result({.frames = 40}));
  doc["schema_version"] = 1;
  nlohmann::ordered_json& raw = doc["diagnostics"]["raw_sleep"];
  if (raw.is_object()) {
    raw.erase("cpu_ns");
    raw.erase("wall_ns");
  }
  Result<ResultDocument> read = read_result_json(doc.dump(2), "v1.json");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->schema_version, 1);
  std::string page = page_of(read->result);
  EXPECT_TRUE(has(page, "id=\"r0-headline\""));
  EXPECT_TRUE(has(page, "id=\"r0-breakdown\""));
  EXPECT_TRUE(has(page, "id=\"r0-hist-gpu_execution\""));
  EXPECT_GT(charts_of(page).size(), 20u);
  // Written without --per-frame: tables and the clock chart, and why no more.
  doc.erase("per_frame");
  Result<ResultDocument> bare = read_result_json(doc.dump(2), "v1-bare.json");
  ASSERT_TRUE(bare) << bare.error().message;
  page = page_of(bare->result);
  EXPECT_TRUE(has(page, "id=\"r0-headline\""));
  EXPECT_TRUE(has(page, "no per-frame series"));
}

}  // namespace
}  // namespace latlab
