// latlab report and latlab run --report: the HTML file from real result
// documents (sim backend), and bad input refused with exit 2, no file changed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "e2e/cli_run_helpers.hpp"

namespace latlab::e2e {
namespace {

namespace fs = std::filesystem;

// A short latency run (Baseline and Loaded) on the sim backend with --report.
struct SimReportRun {
  TempDir dir;
  fs::path json = dir.path / "r.json";
  fs::path html = dir.path / "r.html";
  CliResult r = run_cli(
      "run --backend sim --time-scale 100 --frames 60 --warmup 6 "
      "--blocks 3 --interval-ms 10-12 --out " +
      json.string() + " --report " + html.string());
};

void write(const fs::path& p, const std::string& s) { std::ofstream(p) << s; }

TEST(ReportCli, RunWritesResultWithPerFrameSeriesAndAReportBesideIt) {
  SimReportRun run;
  ASSERT_EQ(run.r.rc, 0) << run.r.output;
  EXPECT_NE(run.r.output.find("report written to " + run.html.string()), std::string::npos)
      << run.r.output;
  const auto doc = nlohmann::json::parse(slurp(run.json));
  ASSERT_TRUE(doc.contains("per_frame"));
  EXPECT_EQ(doc["schema_version"], 3);
  for (const char* mode : {"baseline", "loaded"}) {
    const auto& m = doc["per_frame"]["modes"][mode];
    ASSERT_TRUE(m.is_object()) << mode;
    // One entry per measured frame, the same count as the mode's total.
    EXPECT_EQ(m["frame_id"].size(), doc["modes"][mode]["total"]["frames"].get<size_t>()) << mode;
    EXPECT_EQ(m["series_ns"]["core_latency"].size(), m["frame_id"].size()) << mode;
  }
  const std::string html = slurp(run.html);
  EXPECT_NE(html.find("<table class=\"pct\">"), std::string::npos);
  EXPECT_NE(html.find("uPlot 1.6.32"), std::string::npos);
  EXPECT_NE(html.find("The MIT License"), std::string::npos);  // the licence notice travels
  // Self-contained: no reference to anything outside the file.
  EXPECT_FALSE(std::regex_search(html, std::regex(R"((src|href)\s*=\s*["']?(https?:|//))")));
  EXPECT_EQ(html.find("<link"), std::string::npos);
}

TEST(ReportCli, ReportCommandReadsSeveralResultsAndNamesEach) {
  SimReportRun run;
  ASSERT_EQ(run.r.rc, 0) << run.r.output;
  const fs::path second = run.dir.path / "second.json";
  fs::copy_file(run.json, second);
  const fs::path out = run.dir.path / "two.html";
  const CliResult r =
      run_cli("report " + run.json.string() + " " + second.string() + " -o " + out.string());
  ASSERT_EQ(r.rc, 0) << r.output;
  const std::string html = slurp(out);
  EXPECT_NE(html.find("id=\"run0\""), std::string::npos);
  EXPECT_NE(html.find("id=\"run1\""), std::string::npos);
  EXPECT_NE(html.find("second.json"), std::string::npos);
}

TEST(ReportCli, ResultWithoutPerFrameSeriesSaysSoInsteadOfDrawingNothing) {
  TempDir dir;
  const fs::path json = dir.path / "plain.json";
  const CliResult run = run_cli(
      "run --mode baseline --backend sim --time-scale 20 --frames 20 "
      "--warmup 2 --blocks 1 --interval-ms 2 --out " +
      json.string());
  ASSERT_EQ(run.rc, 0) << run.output;
  const fs::path out = dir.path / "plain.html";
  const CliResult r = run_cli("report " + json.string() + " -o " + out.string());
  ASSERT_EQ(r.rc, 0) << r.output;
  const std::string html = slurp(out);
  EXPECT_NE(html.find("no per-frame series"), std::string::npos);
  EXPECT_NE(html.find("signal_to_consumer_wake"), std::string::npos);  // the table is there
}

class ReportBadInput : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(ReportBadInput, ExitsTwoWithAClearMessageAndLeavesTheOutputAlone) {
  const auto& [content, message] = GetParam();
  TempDir dir;
  const fs::path in = dir.path / "in.json";
  const fs::path out = dir.path / "out.html";
  write(in, content);
  write(out, "previous");
  const CliResult r = run_cli("report " + in.string() + " -o " + out.string());
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
  EXPECT_EQ(slurp(out), "previous");
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path)) ++files;
  EXPECT_EQ(files, 2);  // no temporary file left behind
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, ReportBadInput,
    ::testing::Values(
        std::pair{"{\"schema_version\": 1, \"kind\": \"latency_run\", \"mod", "truncated"},
        std::pair{"[1, 2, 3]", "not a latlab result"},
        std::pair{"{\"schema_version\": 4, \"kind\": \"latency_run\", \"modes\": {}}",
                  "schema_version 4 is newer"},
        std::pair{"{\"schema_version\": \"1\", \"kind\": \"latency_run\", \"modes\": {}}",
                  "not an integer"},
        std::pair{"{\"schema_version\": 2, \"kind\": \"something\", \"modes\": {}}",
                  "kind: 'something' is not a latlab run result"},
        std::pair{"", "not valid JSON"},
        // The report reads with the store's and compare's reader: a document
        // with the right header but not the body of a result is refused the
        // same way there and here.
        std::pair{"{\"schema_version\": 1, \"kind\": \"latency_run\", \"modes\": {}}",
                  "not a valid latlab result: tool: missing"}));

TEST(ReportCli, MissingInputFileIsBadInput) {
  TempDir dir;
  const CliResult r = run_cli("report " + (dir.path / "nope.json").string() + " -o " +
                              (dir.path / "o.html").string());
  EXPECT_EQ(r.rc, 2) << r.output;
  EXPECT_NE(r.output.find("cannot open"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir.path / "o.html"));
}

}  // namespace
}  // namespace latlab::e2e
