// latlab run --store, store add, history on SQLite: what is stored, bad
// input (exit 2, nothing changed), concurrent writers.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "e2e/cli_run_helpers.hpp"

namespace latlab::e2e {
namespace {

namespace fs = std::filesystem;

// A short real-time sim run (baseline, 4 blocks).
// Runs `sql` on the SQLite store `db` behind latlab's back.
void exec_sql(const std::string& db, const char* sql) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  const int rc = sqlite3_exec(h, sql, nullptr, nullptr, nullptr);
  const std::string error = sqlite3_errmsg(h);
  sqlite3_close(h);
  ASSERT_EQ(rc, SQLITE_OK) << error;
}

std::string sim_run_args(const fs::path& out, uint64_t seed = 1) {
  return "run --backend sim --mode baseline --frames 40 --blocks 4 --warmup 5 --interval-ms 2-3 "
         "--seed " +
         std::to_string(seed) + " --out " + out.string();
}

nlohmann::json history_json(const std::string& store) {
  const CliSplitResult h = run_cli_split("history --limit 1000 --json --store " + store);
  EXPECT_EQ(h.rc, 0) << h.err;
  return nlohmann::json::parse(h.out, nullptr, false);
}

TEST(StoreCli, RunStoreAndStoreAddShowInHistory) {
  TempDir dir;
  const std::string db = (dir.path / "results.db").string();
  const fs::path a = dir.path / "a.json";
  CliResult r = run_cli(sim_run_args(a) + " --frames-csv " + (dir.path / "a.csv").string() +
                        " --store " + db);
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("run stored as 1 in " + db), std::string::npos) << r.output;
  r = run_cli("store add " + a.string() + " --store " + db);
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("stored as run 2"), std::string::npos) << r.output;

  const nlohmann::json h = history_json(db);
  ASSERT_EQ(h["runs"].size(), 2u) << h.dump(2);
  EXPECT_EQ(h["runs"][0]["id"], 2);
  EXPECT_TRUE(h["runs"][0]["frame_rows"].is_null());  // store add of a JSON: no per-frame series
  EXPECT_EQ(h["runs"][1]["frame_rows"], 45);          // run --store: warm-up + measured frames
  const auto& base = h["runs"][1]["modes"]["baseline"];
  const nlohmann::json result = nlohmann::json::parse(slurp(a));
  // The store's text path keeps 15 significant digits (SQLite's REAL as
  // text): equal to well below a picosecond, not always to the last bit.
  const double stored = base["core_latency_p50_us"].get<double>();
  const double written = result["modes"]["baseline"]["total"]["core_latency"]["p50"].get<double>();
  EXPECT_NEAR(stored, written, 1e-12 * std::abs(written) + 1e-12);
  EXPECT_EQ(h["runs"][0]["fingerprint"], h["runs"][1]["fingerprint"]);

  // The readable table lists both.
  r = run_cli("history --store " + db);
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("core p50"), std::string::npos);
}

TEST(StoreCli, AStoreThatCannotBeOpenedStopsTheRunBeforeItStarts) {
  TempDir dir;
  const fs::path a = dir.path / "a.json";
  for (const std::string& store :
       {(dir.path / "missing" / "r.db").string(),
        std::string("'postgresql:///latlab?host=/nonexistent&connect_timeout=2'")}) {
    const CliResult r = run_cli(sim_run_args(a) + " --store " + store);
    EXPECT_EQ(r.rc, 2) << r.output;
    EXPECT_NE(r.output.find("--store"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("latlab run: mode"), std::string::npos) << "the run started";
    EXPECT_FALSE(fs::exists(a));
  }
  const CliResult r =
      run_cli("run --backend sim --mode performance --store " + (dir.path / "r.db").string());
  EXPECT_EQ(r.rc, 2) << r.output;
}

TEST(StoreCli, AnotherSchemaVersionIsRefusedWithExit2AndNothingChanged) {
  TempDir dir;
  const std::string db = (dir.path / "r.db").string();
  const fs::path a = dir.path / "a.json";
  ASSERT_EQ(run_cli(sim_run_args(a) + " --store " + db).rc, 0);
  ASSERT_NO_FATAL_FAILURE(
      exec_sql(db, "UPDATE latlab_meta SET value = '7' WHERE key = 'schema_version'"));
  const std::string before = slurp(db);
  const fs::path b = dir.path / "b.json";
  for (const std::string& args :
       {sim_run_args(b) + " --store " + db, "store add " + a.string() + " --store " + db,
        "history --store " + db, "compare 1 1 --store " + db}) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.rc, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("schema version 7"), std::string::npos) << r.output;
  }
  EXPECT_FALSE(fs::exists(b));
  EXPECT_EQ(slurp(db), before);
}

TEST(StoreCli, StoreMigrateUpgradesAVersion1StoreThatReadsRefuseUntouched) {
  TempDir dir;
  const std::string db = (dir.path / "r.db").string();
  const fs::path a = dir.path / "a.json";
  ASSERT_EQ(run_cli(sim_run_args(a) + " --store " + db).rc, 0);
  // As version 1 left it: frames without the poll observer's columns, no scores.
  ASSERT_NO_FATAL_FAILURE(
      exec_sql(db,
               "ALTER TABLE frames DROP COLUMN poll_latency_ns; "
               "ALTER TABLE frames DROP COLUMN gpu_end_to_poll_wake_ns; "
               "ALTER TABLE frames DROP COLUMN poll_cpu_ns; "
               "DROP TABLE scores; "
               "UPDATE latlab_meta SET value = '1' WHERE key = 'schema_version'"));
  const std::string before = slurp(db);
  for (const std::string& args : {"history --store " + db, "compare 1 1 --store " + db}) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.rc, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("store migrate --store " + db), std::string::npos) << r.output;
  }
  EXPECT_EQ(slurp(db), before);
  const CliResult m = run_cli("store migrate --store " + db);
  EXPECT_EQ(m.rc, 0) << m.output;
  EXPECT_NE(m.output.find("upgraded from schema version 1 to 3"), std::string::npos) << m.output;
  const CliResult again = run_cli("store migrate --store " + db);
  EXPECT_EQ(again.rc, 0) << again.output;
  EXPECT_NE(again.output.find("already"), std::string::npos) << again.output;
  EXPECT_EQ(run_cli("store add " + a.string() + " --store " + db).rc, 0);
  const CliResult hist = run_cli("history --store " + db);
  EXPECT_EQ(hist.rc, 0) << hist.output;
}

TEST(StoreCli, BadResultFilesAreRefusedWithExit2AndNothingChanged) {
  TempDir dir;
  const std::string db = (dir.path / "r.db").string();
  const fs::path a = dir.path / "a.json";
  ASSERT_EQ(run_cli(sim_run_args(a) + " --store " + db).rc, 0);
  const std::string good = slurp(a);
  const std::string before = slurp(db);
  nlohmann::json newer = nlohmann::json::parse(good);
  newer["schema_version"] = 4;  // newer than this latlab reads
  const std::pair<const char*, std::string> bad[] = {
      {"truncated.json", good.substr(0, good.size() / 3)},
      {"v4.json", newer.dump()},
      {"array.json", "[1, 2, 3]"},
      {"empty.json", ""}};
  for (const auto& [name, text] : bad) {
    const fs::path p = dir.path / name;
    std::ofstream(p) << text;
    // The bad file second: the good one before it is not stored either.
    const CliResult r = run_cli("store add " + a.string() + " " + p.string() + " --store " + db);
    EXPECT_EQ(r.rc, 2) << name << "\n" << r.output;
    EXPECT_NE(r.output.find(name), std::string::npos) << r.output;
    const CliResult c = run_cli("compare " + a.string() + " " + p.string());
    EXPECT_EQ(c.rc, 2) << name << "\n" << c.output;
  }
  EXPECT_EQ(slurp(db), before);
  EXPECT_EQ(run_cli("store add " + (dir.path / "nope.json").string() + " --store " + db).rc, 2);
  EXPECT_EQ(run_cli("compare 1 99 --store " + db).rc, 2);
  EXPECT_EQ(run_cli("compare 1 abc --store " + db).rc, 2);
  EXPECT_EQ(run_cli("history --store " + (dir.path / "absent.db").string()).rc, 2);
  EXPECT_FALSE(fs::exists(dir.path / "absent.db"));
}

TEST(StoreCli, ConcurrentWritersLoseNothing) {
  TempDir dir;
  const std::string db = (dir.path / "r.db").string();
  const fs::path a = dir.path / "a.json";
  ASSERT_EQ(run_cli(sim_run_args(a)).rc, 0);
  std::string files;
  for (int i = 0; i < 15; ++i) files += " " + a.string();
  // Two writers at once, one creating the schema, each appending 15 runs
  // in its own transactions.
  const std::string bin = latlab_binary();
  std::string out;
  const int rc = run_shell("( " + bin + " store add" + files + " --store " + db + " >/dev/null & " +
                               bin + " store add" + files + " --store " + db +
                               " >/dev/null & wait %1 && wait %2 ) 2>&1",
                           out);
  ASSERT_EQ(rc, 0) << out;
  const nlohmann::json h = history_json(db);
  ASSERT_EQ(h["runs"].size(), 30u);
  EXPECT_EQ(h["runs"][0]["id"], 30);
}

}  // namespace
}  // namespace latlab::e2e
