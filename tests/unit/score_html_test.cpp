// The latency score on the HTML pages (src/report/html/score_html.*): the run
// report's headline, the history page's runs table and the comparison page
// show the score with its interval and components, or "no score: <reason>";
// never the value alone.
#include <gtest/gtest.h>

#include <string>

#include "latlab/bench/run_result.hpp"
#include "report/html/compare_html.hpp"
#include "report/html/history_html.hpp"
#include "report/html/report_html.hpp"
#include "report/result_json.hpp"
#include "report/result_reader.hpp"
#include "report/run_comparison.hpp"
#include "report/score_report.hpp"
#include "unit/sim_result_doc.hpp"

namespace latlab {
namespace {

// A Baseline-only sim run (virtual time) as `latlab run` reports it: scored
// (none: no Loaded), or the score given.
RunResult sim_run(uint64_t seed) {
  testing::SimRunSpec spec;
  spec.noise_seed = seed;
  spec.frames = 40;
  spec.blocks = 2;
  RunResult r;
  r.latency.emplace();
  EXPECT_FALSE(testing::sim_result_doc(spec, &*r.latency).empty());
  r.meta.backend = "sim";
  r.device = r.latency->device;
  attach_latency_scores(r);
  return r;
}

LatencyScore a_score(double value) {
  LatencyScore s;
  s.value = value;
  s.ci_low = value - 10;
  s.ci_high = value + 12;
  for (const char* mode : {"baseline", "loaded"})
    for (const char* stat : {"p50", "p99"}) s.components.push_back({mode, stat, 512.25, 0.25});
  s.baseline_blocks = s.loaded_blocks = 5;
  return s;
}

std::string report_of(const RunResult& r) {
  const ReportInput in{"r.json", &r};
  return render_html_report(std::span(&in, 1));
}

TEST(ScoreHtml, TheHeadlineShowsTheScoreWithItsIntervalAndComponents) {
  RunResult r = sim_run(1);
  r.score = a_score(426.7);
  const std::string page = report_of(r);
  const size_t at = page.find("id=\"r0-score\"");
  ASSERT_NE(at, std::string::npos);
  const std::string line = page.substr(at, page.find("</p>", at) - at);
  EXPECT_NE(line.find("<b class=\"score-value\">426.7</b> [416.7, 438.7]"), std::string::npos)
      << line;
  EXPECT_NE(line.find(score_components_text(*r.score)), std::string::npos) << line;
  EXPECT_NE(line.find("not run-to-run noise"), std::string::npos) << line;
  // In the headline, before the observers' table.
  EXPECT_LT(page.find("id=\"r0-headline\""), at);
  EXPECT_LT(at, page.find("id=\"r0-hl-0-core_latency-p50\""));
}

TEST(ScoreHtml, TheHeadlineSaysWhyARunHasNoScore) {
  const RunResult r = sim_run(1);  // Baseline only
  ASSERT_TRUE(r.score && !r.score->value);
  const std::string page = report_of(r);
  EXPECT_NE(page.find("<b>Latency score</b>: no score: " + r.score->unavailable_reason),
            std::string::npos);
  // A result written before the score: read back, it says so.
  nlohmann::ordered_json doc = run_result_to_json(r);
  doc["schema_version"] = 2;
  doc.erase("score");
  Result<ResultDocument> old = read_result_json(doc.dump(2), "old");
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_NE(report_of(old->result)
                .find("no score: the result was written with schema_version 2, before latlab "
                      "computed a latency score"),
            std::string::npos);
}

TEST(ScoreHtml, TheHistoryAndComparisonPagesShowEachRunsScore) {
  RunResult a = sim_run(1), b = sim_run(2);
  a.score = a_score(400.5);
  HistoryRun runs[] = {{1, "2026-12-02T07:00:00Z", "f", a}, {2, "2026-12-02T07:01:00Z", "f", b}};
  const std::string hist = render_history_html(runs, "test.db");
  EXPECT_NE(hist.find("<b class=\"score-value\">400.5</b> [390.5, 412.5]"), std::string::npos);
  EXPECT_NE(hist.find("no score: " + b.score->unavailable_reason), std::string::npos);

  Result<Comparison> c = compare_results(a, b, "a.json", "b.json", CompareOptions{});
  ASSERT_TRUE(c.ok()) << c.error().message;
  const CompareSide sa{{&a}, {"a.json"}}, sb{{&b}, {"b.json"}};
  const std::string page = render_compare_html(*c, sa, sb);
  const size_t at = page.find("id=\"scores\"");
  ASSERT_NE(at, std::string::npos);
  EXPECT_NE(page.find("<b class=\"score-value\">400.5</b> [390.5, 412.5]", at), std::string::npos);
  EXPECT_NE(page.find("no score: " + b.score->unavailable_reason, at), std::string::npos);
  EXPECT_NE(page.find("not run-to-run noise", at), std::string::npos);
}

}  // namespace
}  // namespace latlab
