// latlab compare --report and latlab history --report: the pages of sim
// runs kept in a temporary store are well formed, carry the figures of
// compare --json and history --json (the shift printed is compare's), show
// missing values as gaps, and the page's path is checked before any work.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "e2e/cli_run_helpers.hpp"
#include "e2e/html_dom.hpp"

namespace latlab::e2e {
namespace {

namespace fs = std::filesystem;

// Seven sim runs in one store, one after another: ids 1-3 (A: --complexity
// 1), 4 (Baseline only: no Loaded figures), 5-7 (B: --complexity 2000, about
// 16 us more GPU time per Baseline frame, exact on the sim). The poll
// observer is off: its rows have no data on any machine.
class ReportPages : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    for (int id = 1; id <= 7; ++id) {
      const std::string mode = id == 4 ? "baseline" : "latency";
      const std::string complexity = id >= 5 ? "2000" : "1";
      const CliResult r = run_cli(fmt::format(
          "run --backend sim --time-scale 100 --mode {} --frames 60 --warmup 6 --blocks 3 "
          "--interval-ms 10-12 --complexity {} --poll off --seed {} --out {} --store {}",
          mode, complexity, id, file(id), db()));
      if (r.rc != 0) setup_error_ += r.output;
    }
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override { ASSERT_EQ(setup_error_, "") << "a run failed"; }

  static std::string db() { return (dir_->path / "r.db").string(); }
  static std::string file(int id) { return (dir_->path / fmt::format("r{}.json", id)).string(); }
  static fs::path path(const std::string& name) { return dir_->path / name; }

  static TempDir* dir_;
  static std::string setup_error_;
};
TempDir* ReportPages::dir_ = nullptr;
std::string ReportPages::setup_error_;

std::unique_ptr<HtmlNode> parse_page(const fs::path& p) {
  std::string error;
  std::unique_ptr<HtmlNode> dom = parse_html(slurp(p), error);
  EXPECT_NE(dom, nullptr) << p << ": " << error;
  return dom;
}

// Self-contained: no element refers to anything outside the file; the
// scripts (the charts' data, uPlot, the drawing script) are inline.
void expect_self_contained(const fs::path& p) {
  const std::string html = slurp(p);
  EXPECT_FALSE(std::regex_search(html, std::regex(R"((src|href)\s*=)"))) << p;
  EXPECT_EQ(html.find("<link"), std::string::npos) << p;
  size_t scripts = 0;
  for (size_t at = html.find("<script"); at != std::string::npos; at = html.find("<script", at + 1))
    ++scripts;
  EXPECT_EQ(scripts, 3u) << p;
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos) << p;
}

// The page's charts (its "latlab-data" block) by id; each has its figure,
// named by the chart's title, holding the element it is drawn into, and a
// line of text and a value per series for each x.
std::map<std::string, nlohmann::json> charts_of(const HtmlNode& dom) {
  std::map<std::string, nlohmann::json> out;
  const HtmlNode* data = dom.by_id("latlab-data");
  if (data == nullptr) {
    ADD_FAILURE() << "no latlab-data block";
    return out;
  }
  const nlohmann::json doc = nlohmann::json::parse(data->inner_text());
  for (const auto& c : doc["charts"]) {
    const std::string id = c["id"];
    const auto figures = dom.find_all([&](const HtmlNode& n) {
      return n.tag == "figure" && n.attr("aria-label") == c["title"] &&
             !n.find_all([&](const HtmlNode& e) { return e.attr("id") == id; }).empty();
    });
    EXPECT_EQ(figures.size(), 1u) << id << ": no figure named " << c["title"];
    EXPECT_EQ(c["x"].size(), c["hover"].size()) << id;
    for (const auto& s : c["series"]) EXPECT_EQ(s["values"].size(), c["x"].size()) << id;
    out[id] = c;
  }
  return out;
}

// The values of series `label` of chart `c` that are there, in x order.
std::vector<double> present(const nlohmann::json& c, const std::string& label) {
  std::vector<double> out;
  for (const auto& s : c["series"])
    if (s["label"] == label)
      for (const auto& v : s["values"])
        if (!v.is_null()) out.push_back(v.get<double>());
  return out;
}

// The table row of `mode`/`series`/`stat`, or null.
const HtmlNode* row_of(const HtmlNode& dom, const nlohmann::json& r) {
  const auto rows = dom.find_all([&](const HtmlNode& n) {
    return n.tag == "tr" && n.attr("data-mode") == r["mode"] &&
           n.attr("data-series") == r["series"] && n.attr("data-stat") == r["statistic"];
  });
  return rows.size() == 1 ? rows[0] : nullptr;
}

std::string cell_text(const HtmlNode& row, const char* cls) {
  const auto cells = row.find_all([&](const HtmlNode& n) { return n.has_class(cls); });
  return cells.size() == 1 ? cells[0]->inner_text() : "(no " + std::string(cls) + " cell)";
}

// Every row of compare --json is in the page with the same shift, interval and call.
void expect_rows_match(const HtmlNode& dom, const nlohmann::json& c) {
  ASSERT_FALSE(c["rows"].empty());
  for (const auto& r : c["rows"]) {
    const HtmlNode* tr = row_of(dom, r);
    ASSERT_NE(tr, nullptr) << r.dump();
    const std::string what = r["mode"].get<std::string>() + " " + r["series"].get<std::string>() +
                             " " + r["statistic"].get<std::string>();
    EXPECT_EQ(tr->attr("data-call"), r["call"]) << what;
    if (r["shift_us"].is_null()) {  // a gap: n/a, never 0
      EXPECT_EQ(cell_text(*tr, "shift"), "n/a") << what;
      EXPECT_EQ(tr->attr("data-shift"), "") << what;
    } else {
      EXPECT_EQ(cell_text(*tr, "shift"), fmt::format("{:.2f}", r["shift_us"].get<double>()))
          << what;
      EXPECT_EQ(std::stod(tr->attr("data-shift")), r["shift_us"].get<double>()) << what;
    }
    const std::string ci = r["ci_low_us"].is_null()
                               ? "n/a"
                               : fmt::format("[{:.2f}, {:.2f}]", r["ci_low_us"].get<double>(),
                                             r["ci_high_us"].get<double>());
    EXPECT_EQ(cell_text(*tr, "ci"), ci) << what;
    for (const char* side : {"a", "b"}) {
      const auto& v = r[std::string(side) + "_total_us"];
      EXPECT_EQ(cell_text(*tr, side), v.is_null() ? "n/a" : fmt::format("{:.2f}", v.get<double>()))
          << what;
    }
  }
}

// A row without data has no shift anywhere on the page: n/a in the table
// (expect_rows_match); in the shift chart no value, "no data" and no number
// at the cursor, and the caption names it.
void expect_no_data_rows_say_so(const HtmlNode& dom, const nlohmann::json& c) {
  const auto charts = charts_of(dom);
  size_t n = 0;
  for (const auto& r : c["rows"]) {
    if (r["call"] != "no_data") continue;
    ++n;
    const std::string mode = r["mode"];
    const std::string row =
        r["series"].get<std::string>() + " " + r["statistic"].get<std::string>();
    ASSERT_EQ(charts.count("shift-" + mode), 1u) << mode;
    const nlohmann::json& chart = charts.at("shift-" + mode);
    std::vector<size_t> at;
    for (size_t i = 0; i < chart["hover"].size(); ++i)
      if (chart["hover"][i].get<std::string>().rfind(mode + " " + row + ":", 0) == 0)
        at.push_back(i);
    ASSERT_EQ(at.size(), 1u) << r.dump();
    const std::string hover = chart["hover"][at[0]];
    EXPECT_NE(hover.find("no data"), std::string::npos) << hover;
    EXPECT_EQ(hover.find("shift"), std::string::npos) << hover;
    for (const auto& s : chart["series"]) EXPECT_TRUE(s["values"][at[0]].is_null()) << s.dump();
    EXPECT_NE(dom.inner_text().find(row + " (no data)"), std::string::npos) << row;
  }
  EXPECT_GE(n, 2u);  // poll_latency p50 and p99 of every mode (the poll observer is off)
}

// The notes compare --json gives are the page's notes, in order.
void expect_notes_match(const HtmlNode& dom, const nlohmann::json& c) {
  std::vector<std::string> page;
  if (const HtmlNode* ul = dom.by_id("notes"))
    for (const HtmlNode* li : ul->by_tag("li")) page.push_back(li->inner_text());
  EXPECT_EQ(nlohmann::json(page), c["notes"]);
}

// Each mode's shift chart: a row's point in % of A's reference in the
// series of its call; per row a chart of both sides' samples (each sample
// the test used) with each side's figure of the table.
void expect_charts(const HtmlNode& dom, const nlohmann::json& c, const char* samples) {
  const auto charts = charts_of(dom);
  std::map<std::string, size_t> rows;  // mode -> its rows so far
  for (const auto& r : c["rows"]) {
    const std::string mode = r["mode"], series = r["series"], stat = r["statistic"];
    const std::string what = mode + " " + series + " " + stat;
    ASSERT_EQ(charts.count("shift-" + mode), 1u) << mode;
    const nlohmann::json& shift = charts.at("shift-" + mode);
    const size_t i = rows[mode]++;
    EXPECT_EQ(shift["axes"]["x"]["names"][i], series + " " + stat);
    if (!r["relative"].is_null()) {
      const std::string call = r["call"] == "too_few_blocks" || r["call"] == "too_few_runs"
                                   ? "untested"
                                   : r["call"].get<std::string>();
      size_t found = 0;
      for (const auto& s : shift["series"]) {
        if (s["values"][i].is_null() || s["type"] != "points") continue;
        ++found;
        EXPECT_EQ(s["label"], call) << what;
        EXPECT_NEAR(s["values"][i].get<double>(), r["relative"].get<double>() * 100, 1e-9) << what;
      }
      EXPECT_EQ(found, 1u) << what;
    }
    const std::string id = "samples-" + mode + "-" + series + "-" + stat;
    const auto& a = r[std::string("a_") + samples];
    const auto& b = r[std::string("b_") + samples];
    if (a.empty() && b.empty() && r["a_total_us"].is_null() && r["b_total_us"].is_null()) {
      EXPECT_EQ(charts.count(id), 0u) << id;
      EXPECT_NE(dom.inner_text().find(what + ": no value on either side"), std::string::npos);
      continue;
    }
    ASSERT_EQ(charts.count(id), 1u) << id;
    const nlohmann::json& chart = charts.at(id);
    EXPECT_EQ(nlohmann::json(present(chart, "A")), a) << id;
    EXPECT_EQ(nlohmann::json(present(chart, "B")), b) << id;
    for (const std::string side : {"A", "B"}) {
      const auto& total = r[side == "A" ? "a_total_us" : "b_total_us"];
      const std::vector<double> marks = present(chart, side + " (the table's)");
      EXPECT_EQ(marks.size(), total.is_null() ? 0u : 2u) << id;
      for (double m : marks) EXPECT_EQ(m, total.get<double>()) << id;
    }
  }
}

TEST_F(ReportPages, CompareByStoreIdsThreeRunsASideCarriesCompareJsonAndIsWrittenWhenTheGateFails) {
  const fs::path html = path("ids.html");
  const CliSplitResult r = run_cli_split(
      "compare 1-3 --vs 5-7 --store " + db() +
      " --allow-different-settings --fail-on-regression 5 --json --report " + html.string());
  EXPECT_EQ(r.rc, 5) << r.err;  // B's Baseline GPU time is 16 us longer: a regression, exactly
  EXPECT_NE(r.err.find("report written to " + html.string()), std::string::npos) << r.err;
  const nlohmann::json c = nlohmann::json::parse(r.out);  // stdout: the JSON alone
  ASSERT_EQ(c["method"]["unit"], "runs");
  const auto dom = parse_page(html);
  ASSERT_NE(dom, nullptr);
  expect_self_contained(html);
  expect_rows_match(*dom, c);
  expect_no_data_rows_say_so(*dom, c);
  expect_notes_match(*dom, c);
  expect_charts(*dom, c, "runs_us");
  const HtmlNode* gate = dom->by_id("gate");
  ASSERT_NE(gate, nullptr);
  EXPECT_TRUE(gate->has_class("fail"));
  EXPECT_NE(gate->inner_text().find("exits 5"), std::string::npos) << gate->inner_text();
  const HtmlNode* tr =
      row_of(*dom, {{"mode", "baseline"}, {"series", "gpu_execution"}, {"statistic", "p50"}});
  ASSERT_NE(tr, nullptr);
  EXPECT_EQ(tr->attr("data-call"), "regression");
  // The settings that differ: the workload's complexity, between the sides.
  bool complexity = false;
  for (const HtmlNode* row : dom->by_tag("tr")) {
    const std::string text = row->inner_text();
    if (text.find("settings.workload.complexity") == 0)
      complexity = text.find("between A and B") != std::string::npos;
  }
  EXPECT_TRUE(complexity) << "no row of the complexity that differs between A and B";
  EXPECT_EQ(dom->inner_text().find("Run-to-run noise is not in this test"), std::string::npos);
}

TEST_F(ReportPages, CompareOneRunASideShowsBlocksAndSaysRunToRunNoiseIsNotInTheTest) {
  const fs::path html = path("one.html");
  const std::string args = "compare " + file(1) + " " + file(5) + " --allow-different-settings";
  const CliSplitResult r = run_cli_split(args + " --json --report " + html.string());
  ASSERT_EQ(r.rc, 0) << r.err;
  const nlohmann::json c = nlohmann::json::parse(r.out);
  ASSERT_EQ(c["method"]["unit"], "blocks");
  const auto dom = parse_page(html);
  ASSERT_NE(dom, nullptr);
  expect_rows_match(*dom, c);
  expect_no_data_rows_say_so(*dom, c);
  expect_notes_match(*dom, c);
  expect_charts(*dom, c, "blocks_us");
  EXPECT_NE(dom->inner_text().find("Run-to-run noise is not in this test"), std::string::npos);
  EXPECT_EQ(dom->by_id("gate"), nullptr);  // no gate asked for
  // Without --json the table is printed as before, and the page beside it.
  const CliSplitResult text = run_cli_split(args + " --report " + html.string());
  EXPECT_EQ(text.rc, 0) << text.err;
  EXPECT_NE(text.out.find("gpu_execution"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("report written to"), std::string::npos) << text.out;
  // A page that cannot be written: exit 4, after the comparison.
  if (fs::exists("/dev/full")) {
    const CliSplitResult full = run_cli_split(args + " --report /dev/full");
    EXPECT_EQ(full.rc, 4) << full.err;
  }
}

// The run id a history chart's line of text names ("... | run 7 | ..." or
// "run 4: no value ...").
std::string run_of(const std::string& hover) {
  std::smatch m;
  return std::regex_search(hover, m, std::regex(R"(run (\d+))")) ? m[1].str() : "";
}

// One figure's chart: a point per run that has the figure (the store's
// value, in its machine's series), none for a run without it; run 4 ran
// Baseline only, so Loaded has a gap there and its line breaks.
void expect_figure_chart(const std::map<std::string, nlohmann::json>& charts,
                         const nlohmann::json& h, const std::string& mode, const std::string& obs,
                         const std::string& stat) {
  const std::string id = fmt::format("hist-{}-{}-{}", mode, obs, stat);
  ASSERT_EQ(charts.count(id), 1u) << id;
  const nlohmann::json& chart = charts.at(id);
  ASSERT_GE(chart["series"].size(), 2u) << id;
  const nlohmann::json& line = chart["series"][0];
  EXPECT_EQ(line["label"], mode + " " + obs + " " + stat);
  std::map<std::string, size_t> index;  // run id -> x
  for (size_t i = 0; i < chart["hover"].size(); ++i) index[run_of(chart["hover"][i])] = i;
  ASSERT_EQ(index.size(), h["runs"].size()) << id;
  std::vector<size_t> gaps;
  for (const auto& run : h["runs"]) {
    const std::string run_id = std::to_string(run["id"].get<int>());
    ASSERT_EQ(index.count(run_id), 1u) << id << " run " << run_id;
    const size_t i = index.at(run_id);
    const auto& v = run["modes"].contains(mode)
                        ? run["modes"][mode][fmt::format("{}_{}_us", obs, stat)]
                        : nlohmann::json();
    size_t points = 0;
    for (size_t k = 1; k < chart["series"].size(); ++k) {
      const auto& p = chart["series"][k]["values"][i];
      if (p.is_null()) continue;
      ++points;
      EXPECT_NEAR(p.get<double>(), v.get<double>(), 1e-9 * std::abs(v.get<double>())) << id;
    }
    if (v.is_null()) {
      EXPECT_EQ(points, 0u) << id << " run " << run_id;
      EXPECT_TRUE(line["values"][i].is_null()) << id << " run " << run_id;  // the line breaks
      EXPECT_NE(chart["hover"][i].get<std::string>().find("no value ("), std::string::npos);
      gaps.push_back(i);
      continue;
    }
    EXPECT_EQ(points, 1u) << id << " run " << run_id;
    EXPECT_NEAR(line["values"][i].get<double>(), v.get<double>(), 1e-9 * std::abs(v.get<double>()))
        << id;
  }
  EXPECT_EQ(chart["gaps"], nlohmann::json(gaps)) << id;
  if (mode == "loaded") {
    ASSERT_EQ(gaps.size(), 1u) << id;
    EXPECT_EQ(run_of(chart["hover"][gaps[0]]), "4");
  } else {
    EXPECT_EQ(gaps.size(), 0u) << id;
  }
}

TEST_F(ReportPages, HistoryPageShowsEachRunInTimeOrderAndGapsWhereAFigureIsMissing) {
  const fs::path html = path("hist.html");
  const CliSplitResult r =
      run_cli_split("history --limit 100 --json --store " + db() + " --report " + html.string());
  ASSERT_EQ(r.rc, 0) << r.err;
  const nlohmann::json h = nlohmann::json::parse(r.out);
  ASSERT_EQ(h["runs"].size(), 7u);
  const auto dom = parse_page(html);
  ASSERT_NE(dom, nullptr);
  expect_self_contained(html);
  const auto charts = charts_of(*dom);
  for (const char* mode : {"baseline", "loaded"})
    for (const char* obs : {"core_latency", "fence_latency"})
      for (const char* stat : {"p50", "p99"}) expect_figure_chart(charts, h, mode, obs, stat);
  // Time order: run ids left to right as they ran (1 to 7), each named on the
  // axis; each point says what ran.
  ASSERT_EQ(charts.count("hist-baseline-core_latency-p50"), 1u);
  const nlohmann::json& chart = charts.at("hist-baseline-core_latency-p50");
  EXPECT_EQ(chart["axes"]["x"]["names"], nlohmann::json({"1", "2", "3", "4", "5", "6", "7"}));
  for (size_t i = 0; i < 7; ++i) EXPECT_EQ(run_of(chart["hover"][i]), std::to_string(i + 1));
  const std::string hover = chart["hover"].back();
  for (const std::string& part :
       {std::string("run 7"), h["runs"][0]["created_utc"].get<std::string>(),
        h["runs"][0]["hostname"].get<std::string>(), std::string("latlab "),
        std::string("complexity 2000")})
    EXPECT_NE(hover.find(part), std::string::npos) << part << " not in: " << hover;
  // The table: run 4's Loaded figures are n/a, never 0; its Baseline ones are there.
  const auto tables = dom->find_all([](const HtmlNode& e) { return e.has_class("history"); });
  ASSERT_EQ(tables.size(), 1u);
  const auto heads = tables[0]->by_tag("th");
  const HtmlNode* row4 = nullptr;
  for (const HtmlNode* tr : tables[0]->by_tag("tr"))
    if (tr->attr("data-run") == "4") row4 = tr;
  ASSERT_NE(row4, nullptr);
  const auto cells = row4->by_tag("td");
  ASSERT_EQ(cells.size(), heads.size());
  size_t loaded_columns = 0;
  for (size_t i = 0; i < heads.size(); ++i) {
    const std::string head = heads[i]->inner_text();
    if (head.rfind("loaded ", 0) == 0) {
      ++loaded_columns;
      EXPECT_EQ(cells[i]->inner_text(), "n/a") << head;
    } else if (head.rfind("baseline core", 0) == 0 || head.rfind("baseline fence", 0) == 0) {
      EXPECT_NE(cells[i]->inner_text(), "n/a") << head;
    }
  }
  EXPECT_GE(loaded_columns, 4u);  // core and fence p50/p99 (poll too where it ran)
}

// The page's path is checked with the command's other files, before any work.
TEST(ReportPagesCli, APageThatCannotBeWrittenIsRefusedBeforeAnyWork) {
  TempDir dir;
  const std::string db = (dir.path / "s.db").string();
  const std::string missing = (dir.path / "no" / "page.html").string();
  for (const std::string& cmd : {"compare 1 2 --store " + db + " --report " + missing,
                                 "compare 1 2 --store " + db + " --report " + db,
                                 "compare 1 2 --store " + db + " --json --report -",
                                 "history --store " + db + " --report " + missing,
                                 "history --store " + db + " --report " + db,
                                 "history --store " + db + " --json --report -"}) {
    const CliSplitResult r = run_cli_split(cmd);
    EXPECT_EQ(r.rc, 2) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("--report"), std::string::npos) << cmd << ": " << r.err;
    EXPECT_EQ(r.out, "") << cmd;
  }
  EXPECT_FALSE(fs::exists(db));  // nothing opened, nothing created
}

}  // namespace
}  // namespace latlab::e2e
