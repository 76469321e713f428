// Several devices end to end: `devices` physical identity, `clocks` and
// `run` with --device all or a list. Sim devices for the logic (two
// simulated devices with different clocks, a fault on one); lavapipe (one
// device) with the validation layer for the real path; tests that need two
// devices of a backend skip with the reason.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run_helpers.hpp"

namespace latlab {
namespace {

using e2e::CliResult;
using e2e::CliSplitResult;
using e2e::run_cli;
using e2e::run_cli_split;
using e2e::slurp;
using e2e::TempDir;

constexpr const char* kShortRun =
    "run --backend sim --device all --frames 40 --blocks 2 --warmup 4 --interval-ms 1-2 "
    "--load-complexity 50 --cpu-iterations 100";

std::set<std::string> keys_of(const nlohmann::json& j) {
  std::set<std::string> k;
  for (const auto& [key, v] : j.items()) k.insert(key);
  return k;
}

TEST(DevicesSeveral, EveryEntryHasAPhysicalDevice) {
  const CliSplitResult r = run_cli_split("devices --json");
  if (r.rc == 3) GTEST_SKIP() << "no device on this machine: " << r.err;
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["physical_devices"].is_array());
  std::set<int> ids;
  for (const auto& g : j["physical_devices"]) ids.insert(g["id"].get<int>());
  for (const auto& d : j["devices"]) {
    ASSERT_TRUE(d.contains("uuid") && d.contains("pci_bus_id")) << d.dump();
    ASSERT_TRUE(d["physical_device"].is_number_integer()) << d.dump();
    EXPECT_TRUE(ids.count(d["physical_device"].get<int>())) << d.dump();
  }
  const CliResult text = run_cli("devices");
  EXPECT_NE(text.output.find("physical device #0:"), std::string::npos) << text.output;
}

TEST(ClocksSeveral, SimDevicesEachGetTheirOwnModel) {
  const CliSplitResult r = run_cli_split(
      "clocks --backend sim --device all --seconds 1 --interval-ms 20 --fresh 8 --json "
      "--cross-check --cross-trials 21");
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["per_device"].size(), 2u);
  EXPECT_EQ(j["device"]["name"], j["per_device"][0]["result"]["device"]["name"]);
  // Drifts +4 and -3 ppm: each model finds its own.
  const double d0 = j["per_device"][0]["result"]["drift_ppm"].get<double>();
  const double d1 = j["per_device"][1]["result"]["drift_ppm"].get<double>();
  EXPECT_NEAR(d0, 4.0, j["per_device"][0]["result"]["drift_uncertainty_ppm"].get<double>() + 0.5);
  EXPECT_NEAR(d1, -3.0, j["per_device"][1]["result"]["drift_uncertainty_ppm"].get<double>() + 0.5);
  for (const auto& s : j["per_device"]) {
    EXPECT_EQ(s["status"], "ok");
    EXPECT_TRUE(s["failure"].is_null());
    EXPECT_GT(s["result"]["bound_now_ns"].get<int64_t>(), 0);
  }
  const auto& cc = j["cross_check"];
  EXPECT_TRUE(cc["error"].is_null()) << cc.dump();
  EXPECT_EQ(cc["trials"], 21);
  EXPECT_GT(cc["trials_mapped"].get<int>(), 0);
  EXPECT_TRUE(cc["agree"].is_boolean());
}

TEST(ClocksSeveral, BadListsAreBadInput) {
  for (const char* list : {"0,,1", "0,0", "all,0", "0,"}) {
    const CliResult r = run_cli(std::string("clocks --backend sim --seconds 0.1 --device ") + list);
    EXPECT_EQ(r.rc, 2) << list << ": " << r.output;
  }
  const CliResult none = run_cli("clocks --backend sim --seconds 0.1 --device 0,7");
  EXPECT_EQ(none.rc, 2) << none.output;
}

TEST(RunSeveral, SimDevicesInterleaveWithOneSectionEach) {
  TempDir dir;
  const auto out = dir.path / "r.json";
  const auto one = dir.path / "one.json";
  const CliResult r = run_cli(std::string(kShortRun) + " --out " + out.string());
  ASSERT_EQ(r.rc, 0) << r.output;
  const CliResult single = run_cli(
      "run --backend sim --frames 40 --blocks 2 --warmup 4 --interval-ms 1-2 --load-complexity 50 "
      "--cpu-iterations 100 --out " +
      one.string());
  ASSERT_EQ(single.rc, 0) << single.output;
  const auto j = nlohmann::json::parse(slurp(out));
  const auto s = nlohmann::json::parse(slurp(one));
  // The one-device shape, plus devices_run only.
  std::set<std::string> want = keys_of(s);
  want.insert("devices_run");
  EXPECT_EQ(keys_of(j), want);
  const auto& dr = j["devices_run"];
  EXPECT_EQ(dr["top_level_section"], 0);
  ASSERT_EQ(dr["sections"].size(), 2u);
  std::vector<std::vector<int64_t>> block_starts;
  for (size_t i = 0; i < 2; ++i) {
    const auto& sec = dr["sections"][i];
    EXPECT_EQ(sec["section"], i);
    EXPECT_EQ(sec["status"], "ok");
    EXPECT_EQ(sec["selector"], std::to_string(i));
    EXPECT_EQ(keys_of(sec["result"]), keys_of(s));
    EXPECT_EQ(sec["result"]["modes"]["baseline"]["total"]["frames"], 40);
    EXPECT_EQ(sec["result"]["modes"]["loaded"]["total"]["frames"], 40);
    // Several devices: each block is preceded by the default turn warm-up.
    EXPECT_EQ(sec["result"]["settings"]["turn_warmup_ns"], 250'000'000);
    for (const auto& b : sec["result"]["block_order"]) {
      EXPECT_GE(b["turn_warmup_frames"].get<uint64_t>(), 1u) << b.dump();
      EXPECT_GE(b["turn_warmup_ms"].get<double>(), 250.0) << b.dump();
    }
  }
  // One device: no turn warm-up.
  EXPECT_EQ(s["settings"]["turn_warmup_ns"], 0);
  for (const auto& b : s["block_order"]) EXPECT_EQ(b["turn_warmup_frames"], 0) << b.dump();
  EXPECT_NE(dr["sections"][0]["result"]["device"]["name"],
            dr["sections"][1]["result"]["device"]["name"]);
  // compare and report read it and say which device they use.
  const CliResult cmp = run_cli("compare " + out.string() + " " + out.string());
  EXPECT_EQ(cmp.rc, 0) << cmp.output;
  EXPECT_NE(cmp.output.find("comparing its top-level device (section 0"), std::string::npos)
      << cmp.output;
  const CliResult cmp1 = run_cli("compare " + out.string() + " " + out.string() + " --section 1");
  EXPECT_EQ(cmp1.rc, 0) << cmp1.output;
  const CliResult bad = run_cli("compare " + out.string() + " " + out.string() + " --section 5");
  EXPECT_EQ(bad.rc, 2) << bad.output;
}

TEST(RunSeveral, TurnWarmupCanBeTurnedOff) {
  TempDir dir;
  const auto out = dir.path / "r.json";
  const CliResult r = run_cli(std::string(kShortRun) + " --turn-warmup-ms 0 --out " + out.string());
  ASSERT_EQ(r.rc, 0) << r.output;
  const auto j = nlohmann::json::parse(slurp(out));
  for (const auto& sec : j["devices_run"]["sections"]) {
    EXPECT_EQ(sec["result"]["settings"]["turn_warmup_ns"], 0);
    for (const auto& b : sec["result"]["block_order"]) EXPECT_EQ(b["turn_warmup_frames"], 0);
  }
  const CliResult bad = run_cli(std::string(kShortRun) + " --turn-warmup-ms -1 --out ''");
  EXPECT_EQ(bad.rc, 2) << bad.output;
}

TEST(RunSeveral, AFaultOnOneDeviceKeepsTheOthersResults) {
  TempDir dir;
  const auto out = dir.path / "r.json";
  // The simulated fault comes at a frame id counted without turn warm-ups.
  const CliResult r = run_cli(std::string(kShortRun) +
                              " --sim-fail-device 1 --turn-warmup-ms 0 --out " + out.string());
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_NE(r.output.find("device section 1"), std::string::npos) << r.output;
  const auto j = nlohmann::json::parse(slurp(out));
  const auto& secs = j["devices_run"]["sections"];
  EXPECT_EQ(secs[0]["status"], "ok");
  EXPECT_EQ(secs[0]["result"]["modes"]["baseline"]["total"]["frames"], 40);
  EXPECT_EQ(secs[0]["result"]["modes"]["loaded"]["total"]["frames"], 40);
  EXPECT_EQ(secs[1]["status"], "partial");
  EXPECT_NE(secs[1]["failure"].get<std::string>().find("simulated submit failure"),
            std::string::npos)
      << secs[1].dump();
  EXPECT_TRUE(secs[1]["result"]["partial"].get<bool>());
  EXPECT_FALSE(j["partial"].get<bool>());  // the top level is device 0's
}

TEST(RunSeveral, UnsupportedOptionsAndBadListsAreBadInput) {
  for (const char* extra : {" --mode all", " --device 1,1"}) {
    const CliResult r = run_cli(std::string(kShortRun) + extra + " --out ''");
    EXPECT_EQ(r.rc, 2) << extra << ": " << r.output;
  }
}

TEST(RunSeveral, VulkanDeviceAllWithValidation) {
  TempDir dir;
  const auto out = dir.path / "r.json";
  const CliResult r = run_cli(
      "run --backend vulkan --device all --validation --mode baseline --frames 40 --blocks 2 "
      "--warmup 5 --interval-ms 2-3 --out " +
      out.string());
  if (r.rc == 3) GTEST_SKIP() << "no Vulkan device: " << r.output;
  ASSERT_EQ(r.rc, 0) << r.output;
  const auto j = nlohmann::json::parse(slurp(out));
  const auto& secs = j["devices_run"]["sections"];
  ASSERT_GE(secs.size(), 1u);
  for (const auto& s : secs) {
    EXPECT_EQ(s["status"], "ok") << s["failure"];
    EXPECT_EQ(s["result"]["diagnostics"]["validation"]["errors"], 0)
        << s["result"]["diagnostics"]["validation"].dump();
    EXPECT_EQ(s["result"]["modes"]["baseline"]["total"]["frames"], 40);
    EXPECT_TRUE(s["physical_device"].is_number_integer()) << s.dump();
  }
  EXPECT_EQ(j["device"]["name"], secs[0]["result"]["device"]["name"]);
}

// The cross-check of two devices' clock models: needs two Vulkan devices.
TEST(ClocksSeveral, VulkanCrossCheckOfTwoDevices) {
  const CliSplitResult r = run_cli_split(
      "clocks --backend vulkan --device all --seconds 1 --interval-ms 50 --fresh 4 --json "
      "--cross-check --cross-trials 50");
  if (r.rc == 3) GTEST_SKIP() << "no Vulkan device: " << r.err;
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  if (j["per_device"].size() < 2) {
    ASSERT_TRUE(j["cross_check"].contains("skipped"));
    GTEST_SKIP() << "fewer than two Vulkan devices: " << j["cross_check"]["skipped"];
  }
  EXPECT_TRUE(j["cross_check"]["error"].is_null()) << j["cross_check"].dump();
  EXPECT_TRUE(j["cross_check"]["agree"].get<bool>()) << j["cross_check"]["verdict"];
}

// The lines of `text`.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string first_cell(const std::string& line) { return line.substr(0, line.find(',')); }

TEST(RunSeveral, FramesCsvHoldsEverySectionBehindADeviceSectionColumn) {
  TempDir dir;
  const auto csv = dir.path / "f.csv";
  const auto one = dir.path / "one.csv";
  const CliResult r = run_cli(std::string(kShortRun) + " --out '' --frames-csv " + csv.string());
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("per-frame markers written to " + csv.string()), std::string::npos)
      << r.output;
  const CliResult single = run_cli(
      "run --backend sim --frames 40 --blocks 2 --warmup 4 --interval-ms 1-2 --load-complexity 50 "
      "--cpu-iterations 100 --out '' --frames-csv " +
      one.string());
  ASSERT_EQ(single.rc, 0) << single.output;
  const std::vector<std::string> rows = lines_of(slurp(csv));
  const std::vector<std::string> one_rows = lines_of(slurp(one));
  ASSERT_FALSE(rows.empty());
  ASSERT_FALSE(one_rows.empty());
  // The one-device header behind the leading column; the one-device file has none.
  EXPECT_EQ(rows[0], "device_section," + one_rows[0]);
  EXPECT_EQ(one_rows[0].rfind("frame_id,", 0), 0u) << one_rows[0];
  // Each section has as many rows as the one-device run (the same schedule),
  // with 40 measured frames per mode; sections in order.
  std::map<std::string, size_t> per_section, measured;
  std::string last = "0";
  for (size_t i = 1; i < rows.size(); ++i) {
    const std::string section = first_cell(rows[i]);
    EXPECT_GE(section, last) << rows[i];
    last = section;
    ++per_section[section];
    if (rows[i].find(",measured,") != std::string::npos) ++measured[section];
  }
  ASSERT_EQ(per_section.size(), 2u);
  for (const char* s : {"0", "1"}) {
    EXPECT_EQ(per_section[s], one_rows.size() - 1) << "section " << s;
    EXPECT_EQ(measured[s], 80u) << "section " << s;
  }
}

TEST(RunSeveral, ReportIsThePageLatlabReportMakesOfTheResult) {
  TempDir dir;
  const auto out = dir.path / "r.json";
  const auto page = dir.path / "run.html";
  const auto again = dir.path / "report.html";
  const CliResult r =
      run_cli(std::string(kShortRun) + " --out " + out.string() + " --report " + page.string());
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("the report shows the top-level device of the 2 sections (section 0)"),
            std::string::npos)
      << r.output;
  const auto j = nlohmann::json::parse(slurp(out));
  ASSERT_EQ(j["devices_run"]["sections"].size(), 2u);
  // --report implies the per-frame series, in every section.
  for (const auto& sec : j["devices_run"]["sections"])
    EXPECT_TRUE(sec["result"].contains("per_frame")) << sec["section"];
  const CliResult rep = run_cli("report " + out.string() + " -o " + again.string());
  ASSERT_EQ(rep.rc, 0) << rep.output;
  // The same page but for its title: the path given to --out, the file's
  // name (the command line on both pages holds the path).
  auto by_name = [&out](std::string html) {
    for (size_t at; (at = html.find(out.string())) != std::string::npos;)
      html.replace(at, out.string().size(), "r.json");
    return html;
  };
  const std::string from_run = by_name(slurp(page));
  const std::string from_report = by_name(slurp(again));
  ASSERT_FALSE(from_run.empty());
  EXPECT_TRUE(from_run == from_report) << "the pages differ";
  EXPECT_NE(from_run.find("id=\"run0\""), std::string::npos);
  const std::string top = j["devices_run"]["sections"][0]["result"]["device"]["name"];
  EXPECT_NE(from_run.find(top), std::string::npos) << top;
}

// The rows of `sql` on the SQLite store `db`, each row's cells joined by '|'.
std::vector<std::string> sql_rows(const std::string& db, const char* sql) {
  sqlite3* h = nullptr;
  std::vector<std::string> rows;
  EXPECT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(h, sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(h);
  while (st != nullptr && sqlite3_step(st) == SQLITE_ROW) {
    std::string row;
    for (int c = 0; c < sqlite3_column_count(st); ++c) {
      const unsigned char* v = sqlite3_column_text(st, c);
      row += (c > 0 ? "|" : "") + std::string(v ? reinterpret_cast<const char*>(v) : "NULL");
    }
    rows.push_back(std::move(row));
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return rows;
}

TEST(RunSeveral, StoreKeepsTheRunAsStoreAddKeepsItsFile) {
  TempDir dir;
  const std::string db = (dir.path / "results.db").string();
  const auto out = dir.path / "r.json";
  CliResult r = run_cli(std::string(kShortRun) + " --out " + out.string() + " --store " + db);
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("run stored as 1 in " + db), std::string::npos) << r.output;
  r = run_cli("store add " + out.string() + " --store " + db);
  ASSERT_EQ(r.rc, 0) << r.output;
  // One row per run, each the top-level device's, with the whole document.
  const std::vector<std::string> runs =
      sql_rows(db, "SELECT id, device_name, kind FROM runs ORDER BY id");
  ASSERT_EQ(runs.size(), 2u);
  const auto j = nlohmann::json::parse(slurp(out));
  const std::string top = j["devices_run"]["sections"][0]["result"]["device"]["name"];
  EXPECT_EQ(runs[0], "1|" + top + "|latency_run");
  EXPECT_EQ(runs[1], "2|" + top + "|latency_run");
  for (const std::string& doc : sql_rows(db, "SELECT result_json FROM runs ORDER BY id"))
    EXPECT_EQ(nlohmann::json::parse(doc)["devices_run"]["sections"].size(), 2u);
  // The same modes and score rows from the run and from its file.
  const char* modes = "SELECT run_id, mode FROM run_modes ORDER BY run_id, mode";
  EXPECT_EQ(sql_rows(db, modes),
            (std::vector<std::string>{"1|baseline", "1|loaded", "2|baseline", "2|loaded"}));
  EXPECT_EQ(sql_rows(db, "SELECT COUNT(*) FROM scores"), std::vector<std::string>{"2"});
  // The run's per-frame rows are its top-level device's: 80 measured frames.
  EXPECT_EQ(sql_rows(db,
                     "SELECT COUNT(*) FROM frames WHERE run_id = 1 AND block_kind = "
                     "'measured'"),
            std::vector<std::string>{"80"});
}

}  // namespace
}  // namespace latlab
