// Capture results (kind "capture") through the commands that read results
// (report, store add, history and compare work on them unchanged):
// vkcube captured under Xvfb on lavapipe, then each command on its result
// file. Skipped, with the reason, where vkcube, lavapipe or Xvfb is absent
// (the same conditions as capture_test.cpp's).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "capture_env.hpp"
#include "cli_run_helpers.hpp"
#include "report/result_json.hpp"
#include "report/result_reader.hpp"
#include "xvfb_server.hpp"

namespace latlab::e2e {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// Two captures of vkcube, made once for the suite (a capture takes seconds).
class CaptureResults : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    skip_ = vkcube_skip_reason();
    if (skip_.empty()) capture_both();
  }
  static void capture_both() {
    XvfbServer xvfb;
    if (!xvfb.ok()) {
      skip_ = xvfb.why_not();
      return;
    }
    const std::string env = vkcube_env(xvfb);
    dir_ = new TempDir;
    for (const char* name : {"a.json", "b.json"}) {
      const CliResult r = run_cli(
          "capture --out " + (dir_->path / name).string() + " --gpu-spans all -- vkcube --c 40",
          CliOptions{env});
      if (r.rc != 0) failure_ += name + std::string(": ") + r.output;
    }
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(failure_.empty()) << failure_;
  }
  static std::string file(const char* name) { return (dir_->path / name).string(); }

  static inline std::string skip_, failure_;
  static inline TempDir* dir_ = nullptr;
};

// The reader takes the file and gives back its document byte for byte.
TEST_F(CaptureResults, ReadBackTheyAreTheirDocument) {
  const Result<ResultDocument> r = read_result_file(file("a.json"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->result.capture.has_value());
  EXPECT_EQ(r->result.capture->frames, 40u);
  EXPECT_EQ(run_result_to_json(r->result).dump(2) + "\n", slurp(file("a.json")));
}

TEST_F(CaptureResults, ReportRendersTheirFiguresAndChart) {
  const std::string out = (dir_->path / "c.html").string();
  const CliResult r = run_cli("report " + file("a.json") + " " + file("b.json") + " -o " + out);
  ASSERT_EQ(r.rc, 0) << r.output;
  const std::string html = slurp(out);
  EXPECT_NE(html.find("kind capture"), std::string::npos);
  EXPECT_NE(html.find("<th>between_presents</th><td>39</td>"), std::string::npos);
  EXPECT_NE(html.find("<th>gpu_busy</th><td>40</td>"), std::string::npos);
  EXPECT_NE(html.find("id=\"r0-capture-pct\""), std::string::npos);
  EXPECT_NE(html.find("id=\"r1-capture-pct\""), std::string::npos);
  EXPECT_NE(html.find("<code>vkcube --c 40</code>"), std::string::npos);
  EXPECT_NE(html.find("<tr><th>average FPS</th><td>"), std::string::npos);
  EXPECT_NE(html.find("<tr><th>1% low FPS (p99 frame time)</th><td>"), std::string::npos);
}

// FPS are the between-presents frame times inverted: the mean for the
// average, p99 and p99.9 for the 1 % and 0.1 % lows.
TEST_F(CaptureResults, FpsAreTheFrameTimesInverted) {
  const json j = json::parse(slurp(file("a.json")));
  const json& bp = j["figures"]["between_presents"];
  const json& fps = j["fps"];
  EXPECT_EQ(fps["frame_time"], "between_presents");
  EXPECT_EQ(fps["frame_times"], bp["count"]);
  EXPECT_DOUBLE_EQ(fps["average"].get<double>(), 1e6 / bp["mean"].get<double>());
  EXPECT_DOUBLE_EQ(fps["low_1_percent"].get<double>(), 1e6 / bp["p99"].get<double>());
  EXPECT_DOUBLE_EQ(fps["low_0_1_percent"].get<double>(), 1e6 / bp["p99_9"].get<double>());
  EXPECT_LE(fps["low_0_1_percent"].get<double>(), fps["low_1_percent"].get<double>());
  EXPECT_LE(fps["low_1_percent"].get<double>(), fps["average"].get<double>() * 1.0000001);
}

TEST_F(CaptureResults, StoreAddsAndHistoryListsThem) {
  const std::string db = (dir_->path / "s.db").string();
  const CliResult add =
      run_cli("store add " + file("a.json") + " " + file("b.json") + " --store " + db);
  ASSERT_EQ(add.rc, 0) << add.output;
  const CliResult h = run_cli("history --store " + db);
  ASSERT_EQ(h.rc, 0) << h.output;
  EXPECT_NE(h.output.find("between presents p50"), std::string::npos) << h.output;
  const CliSplitResult hj = run_cli_split("history --json --store " + db);
  ASSERT_EQ(hj.rc, 0) << hj.err;
  const json j = json::parse(hj.out);
  ASSERT_EQ(j["runs"].size(), 2u);
  const json& m = j["runs"][0]["modes"]["capture"];
  EXPECT_EQ(m["frames"], 40);
  EXPECT_TRUE(m["between_presents_p50_us"].is_number()) << m;
  EXPECT_TRUE(m["gpu_busy_p99_us"].is_number()) << m;
  EXPECT_EQ(j["runs"][0]["mode"], "capture");
  // Stored runs compare like files.
  const CliResult c = run_cli("compare 1 2 --store " + db);
  EXPECT_EQ(c.rc, 0) << c.output;
  EXPECT_NE(c.output.find("between_presents"), std::string::npos) << c.output;
}

TEST_F(CaptureResults, CompareTakesTheirFrameFiguresAsStages) {
  const CliSplitResult c =
      run_cli_split("compare " + file("a.json") + " " + file("b.json") + " --json");
  ASSERT_EQ(c.rc, 0) << c.err;
  const json j = json::parse(c.out);
  EXPECT_EQ(j["method"]["unit"], "runs");
  bool between = false;
  for (const json& row : j["rows"]) {
    EXPECT_EQ(row["mode"], "capture");
    if (row["series"] == "between_presents" && row["statistic"] == "p50") {
      between = true;
      EXPECT_TRUE(row["a_total_us"].is_number()) << row;
      EXPECT_TRUE(row["shift_us"].is_number()) << row;
      EXPECT_EQ(row["call"], "too_few_runs");
    }
  }
  EXPECT_TRUE(between) << c.out;
  // A capture and a latency run are not compared.
  const std::string run = (dir_->path / "run.json").string();
  ASSERT_EQ(run_cli("run --backend sim --mode baseline --frames 20 --blocks 2 --warmup 2 "
                    "--interval-ms 2 --out " +
                    run)
                .rc,
            0);
  const CliResult mixed = run_cli("compare " + file("a.json") + " " + run);
  EXPECT_EQ(mixed.rc, 2) << mixed.output;
  EXPECT_NE(mixed.output.find("one kind"), std::string::npos) << mixed.output;
}

}  // namespace
}  // namespace latlab::e2e
