// The latency score end to end on the sim backend (docs/score.md): `latlab
// run --mode all` prints it and writes it with components equal to the
// result's own Core Latency p50/p99 and an interval around it; the result's
// per-frame series give the same score again; the store, `history` and
// `compare` show it; a Baseline-only run has none and says why.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "e2e/cli_run_helpers.hpp"
#include "report/result_reader.hpp"
#include "report/score_report.hpp"

namespace latlab::e2e {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string run_args(const std::string& mode, const fs::path& out, uint64_t seed) {
  return "run --backend sim --mode " + mode +
         " --time-scale 100 --frames 40 --warmup 4 --blocks 4 --interval-ms 10-12 --perf-frames "
         "20 --per-frame --seed " +
         std::to_string(seed) + " --out " + out.string();
}

// The score again, from the result's per-frame series: each measured
// frame's core_latency (ns) in its block, as the run took them.
LatencyScore score_from_per_frame(const json& r) {
  ScoreInput in;
  for (const char* name : {"baseline", "loaded"}) {
    const json& m = r["per_frame"]["modes"][name];
    std::map<uint64_t, std::vector<double>> blocks;
    for (size_t i = 0; i < m["block_index"].size(); ++i) {
      const json& ns = m["series_ns"]["core_latency"][i];
      if (!ns.is_null())
        blocks[m["block_index"][i].get<uint64_t>()].push_back(ns.get<double>() / 1000.0);
    }
    ScoreMode mode;
    for (auto& [index, us] : blocks) {
      mode.frames += us.size();
      mode.blocks.push_back(std::move(us));
    }
    (std::string(name) == "baseline" ? in.baseline : in.loaded) = std::move(mode);
  }
  return compute_latency_score(in);
}

// The result's score: components equal to its Core Latency p50/p99, an
// interval around the value, the same as the per-frame series give.
void expect_score_of_its_own_core_latency(const json& r) {
  const json& s = r["score"];
  ASSERT_TRUE(s["value"].is_number()) << s.dump(2);
  EXPECT_EQ(s["formula"], "latency-score/1");
  ASSERT_EQ(s["components"].size(), 4u);
  size_t i = 0;
  for (const char* mode : {"baseline", "loaded"}) {
    for (const char* stat : {"p50", "p99"}) {
      const json& c = s["components"][i++];
      EXPECT_EQ(c["mode"], mode);
      EXPECT_EQ(c["statistic"], stat);
      EXPECT_EQ(c["value_us"].get<double>(),
                r["modes"][mode]["total"]["core_latency"][stat].get<double>())
          << mode << " " << stat;
    }
  }
  const double value = s["value"].get<double>();
  EXPECT_LE(s["ci95"][0].get<double>(), value);
  EXPECT_GE(s["ci95"][1].get<double>(), value);
  EXPECT_EQ(s["interval"]["blocks"]["baseline"], 4);
  const LatencyScore again = score_from_per_frame(r);
  ASSERT_TRUE(again.value.has_value()) << again.unavailable_reason;
  EXPECT_EQ(*again.value, value);
  EXPECT_EQ(*again.ci_low, s["ci95"][0].get<double>());
  EXPECT_EQ(*again.ci_high, s["ci95"][1].get<double>());
}

TEST(ScoreCli, ARunOfAllModesScoresItsOwnCoreLatencyAndHistoryAndCompareShowIt) {
  TempDir dir;
  const std::string db = (dir.path / "r.db").string();
  std::vector<json> results;
  for (uint64_t seed : {1, 2}) {
    const fs::path out = dir.path / ("r" + std::to_string(seed) + ".json");
    const CliResult r = run_cli(run_args("all", out, seed) + " --store " + db);
    ASSERT_EQ(r.rc, 0) << r.output;
    results.push_back(json::parse(slurp(out)));
    ASSERT_NO_FATAL_FAILURE(expect_score_of_its_own_core_latency(results.back()));
    Result<ResultDocument> doc = read_result_file(out.string());
    ASSERT_TRUE(doc.ok()) << doc.error().message;
    const std::string cell = score_cell(score_for_display(doc->result));
    EXPECT_NE(r.output.find("latency score " + cell), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("Core Latency us: baseline p50"), std::string::npos) << r.output;
  }
  const CliResult h = run_cli("history --store " + db);
  ASSERT_EQ(h.rc, 0) << h.output;
  EXPECT_NE(h.output.find("score [95% interval]"), std::string::npos) << h.output;
  const CliSplitResult hj = run_cli_split("history --json --store " + db);
  ASSERT_EQ(hj.rc, 0) << hj.err;
  const json runs = json::parse(hj.out)["runs"];
  ASSERT_EQ(runs.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const json& want = results[1 - i]["score"];  // newest first
    const json& got = runs[i]["score"];
    // Through SQLite's REAL as text: 15 significant digits.
    EXPECT_NEAR(got["value"].get<double>(), want["value"].get<double>(), 1e-9) << got.dump();
    EXPECT_NEAR(got["ci95"][0].get<double>(), want["ci95"][0].get<double>(), 1e-9);
    EXPECT_NEAR(got["ci95"][1].get<double>(), want["ci95"][1].get<double>(), 1e-9);
    EXPECT_NE(h.output.find(score_number(want["value"].get<double>()) + " ["), std::string::npos)
        << h.output;
  }
  const CliResult c = run_cli("compare 1 2 --store " + db);
  ASSERT_EQ(c.rc, 0) << c.output;
  EXPECT_NE(c.output.find("latency score (docs/score.md"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("not run-to-run noise"), std::string::npos) << c.output;
  const CliSplitResult cj = run_cli_split("compare " + (dir.path / "r1.json").string() + " " +
                                          (dir.path / "r2.json").string() + " --json");
  ASSERT_EQ(cj.rc, 0) << cj.err;
  const json cmp = json::parse(cj.out);
  EXPECT_EQ(cmp["scores"]["a"][0]["score"], results[0]["score"]);
  EXPECT_EQ(cmp["scores"]["b"][0]["score"], results[1]["score"]);
  EXPECT_EQ(cmp["scores"]["tested"], false);
  // The pages: the report's headline, the comparison and the history page,
  // each score with its interval (components beside it).
  const fs::path report = dir.path / "r1.html", cmp_html = dir.path / "cmp.html",
                 hist_html = dir.path / "hist.html";
  ASSERT_EQ(run_cli("report " + (dir.path / "r1.json").string() + " -o " + report.string()).rc, 0);
  ASSERT_EQ(run_cli("compare 1 2 --store " + db + " --report " + cmp_html.string()).rc, 0);
  ASSERT_EQ(run_cli("history --store " + db + " --report " + hist_html.string()).rc, 0);
  const std::string page = slurp(report), cmp_page = slurp(cmp_html), hist = slurp(hist_html);
  EXPECT_NE(page.find("id=\"r0-score\""), std::string::npos);
  for (const json& r : results) {
    const json& s = r["score"];
    const std::string shown = score_number(s["value"].get<double>()) + "</b> [" +
                              score_number(s["ci95"][0].get<double>()) + ", " +
                              score_number(s["ci95"][1].get<double>()) + "]";
    EXPECT_NE(cmp_page.find(shown), std::string::npos) << shown;
    EXPECT_NE(hist.find(shown), std::string::npos) << shown;
  }
  const json& s1 = results[0]["score"];
  EXPECT_NE(page.find(score_number(s1["value"].get<double>()) + "</b> ["), std::string::npos);
}

TEST(ScoreCli, ABaselineOnlyRunHasNoScoreAndSaysWhyEverywhere) {
  TempDir dir;
  const std::string db = (dir.path / "r.db").string();
  const fs::path out = dir.path / "b.json";
  const CliResult r = run_cli(run_args("baseline", out, 1) + " --store " + db);
  ASSERT_EQ(r.rc, 0) << r.output;
  const json s = json::parse(slurp(out))["score"];
  EXPECT_TRUE(s["value"].is_null()) << s.dump(2);
  EXPECT_TRUE(s["ci95"].is_null());
  EXPECT_TRUE(s["components"].empty());
  const std::string why = s["unavailable_reason"].get<std::string>();
  EXPECT_NE(why.find("no Loaded mode"), std::string::npos) << why;
  EXPECT_NE(r.output.find("latency score: none: " + why), std::string::npos) << r.output;
  const CliResult h = run_cli("history --store " + db);
  ASSERT_EQ(h.rc, 0) << h.output;
  EXPECT_NE(h.output.find("run 1: no score: " + why), std::string::npos) << h.output;
  const fs::path report = dir.path / "b.html";
  ASSERT_EQ(run_cli("report " + out.string() + " -o " + report.string()).rc, 0);
  EXPECT_NE(slurp(report).find("<b>Latency score</b>: no score: " + why), std::string::npos);
}

}  // namespace
}  // namespace latlab::e2e
