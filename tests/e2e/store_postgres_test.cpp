// The results store on a real PostgreSQL server (a throwaway cluster per
// test, unix socket only): the same commands as on SQLite, concurrent
// writers, another schema version refused.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <nlohmann/json.hpp>

#include "e2e/cli_run_helpers.hpp"
#include "e2e/pg_cluster.hpp"

namespace latlab::e2e {
namespace {

namespace fs = std::filesystem;

#define LATLAB_START_CLUSTER(c)                          \
  PgCluster c;                                           \
  if (!c.skip_reason.empty()) GTEST_SKIP() << c.skip_reason; \
  ASSERT_TRUE(c.error.empty()) << c.error

std::string sql_one(const std::string& url, const std::string& sql) {
  PGconn* conn = PQconnectdb(url.c_str());
  EXPECT_EQ(PQstatus(conn), CONNECTION_OK) << PQerrorMessage(conn);
  PGresult* r = PQexec(conn, sql.c_str());
  std::string v;
  if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0) v = PQgetvalue(r, 0, 0);
  EXPECT_TRUE(PQresultStatus(r) == PGRES_TUPLES_OK || PQresultStatus(r) == PGRES_COMMAND_OK)
      << PQresultErrorMessage(r);
  PQclear(r);
  PQfinish(conn);
  return v;
}

std::string sim_run(uint64_t seed, const fs::path& out) {
  return "run --backend sim --mode baseline --frames 40 --blocks 4 --warmup 5 --interval-ms 2-3 "
         "--seed " + std::to_string(seed) + " --out " + out.string();
}

TEST(StorePostgres, TwoRunsAtOnceStoreAddHistoryAndCompare) {
  LATLAB_START_CLUSTER(pg);
  TempDir dir;
  const std::string store = "'" + pg.url + "'";
  const std::string bin = latlab_binary();
  std::string out;
  const int rc = run_shell("( " + bin + " " + sim_run(1, dir.path / "a.json") + " --store " + store +
                               " >/dev/null 2>&1 & " + bin + " " + sim_run(2, dir.path / "b.json") +
                               " --store " + store + " >/dev/null 2>&1 & wait %1 && wait %2 )",
                           out);
  ASSERT_EQ(rc, 0);
  CliResult r = run_cli("store add " + (dir.path / "a.json").string() + " --store " + store);
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("stored as run 3"), std::string::npos) << r.output;
  const CliSplitResult h = run_cli_split("history --json --store " + store);
  ASSERT_EQ(h.rc, 0) << h.err;
  const nlohmann::json j = nlohmann::json::parse(h.out);
  ASSERT_EQ(j["runs"].size(), 3u);
  EXPECT_EQ(j["runs"][2]["frame_rows"], 45);
  EXPECT_TRUE(j["runs"][0]["frame_rows"].is_null());
  EXPECT_EQ(sql_one(pg.url, "SELECT count(*) FROM frames"), "90");
  EXPECT_EQ(sql_one(pg.url, "SELECT count(*) FROM distributions WHERE scope = 'total'"),
            std::to_string(3 * 14));  // 7 stages, 3 observers, 4 diagnostics
  // The stored document is the file byte for byte.
  EXPECT_EQ(sql_one(pg.url, "SELECT result_json FROM runs WHERE id = 3"),
            slurp(dir.path / "a.json"));
  r = run_cli("compare 3 1 --store " + store);
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("latlab compare: A = run 3; B = run 1"), std::string::npos) << r.output;
}

TEST(StorePostgres, AnotherSchemaVersionIsRefusedUntouched) {
  LATLAB_START_CLUSTER(pg);
  TempDir dir;
  const std::string store = "'" + pg.url + "'";
  ASSERT_EQ(run_cli(sim_run(1, dir.path / "a.json") + " --store " + store).rc, 0);
  sql_one(pg.url, "UPDATE latlab_meta SET value = '9' WHERE key = 'schema_version'");
  const CliResult add = run_cli("store add " + (dir.path / "a.json").string() + " --store " + store);
  EXPECT_EQ(add.rc, 2) << add.output;
  EXPECT_NE(add.output.find("schema version 9"), std::string::npos) << add.output;
  const CliResult run = run_cli(sim_run(1, dir.path / "b.json") + " --store " + store);
  EXPECT_EQ(run.rc, 2) << run.output;
  EXPECT_FALSE(fs::exists(dir.path / "b.json"));
  EXPECT_EQ(sql_one(pg.url, "SELECT count(*) FROM runs"), "1");
  EXPECT_EQ(sql_one(pg.url, "SELECT value FROM latlab_meta"), "9");
}

TEST(StorePostgres, StoreMigrateUpgradesAVersion1Store) {
  LATLAB_START_CLUSTER(pg);
  TempDir dir;
  const std::string store = "'" + pg.url + "'";
  ASSERT_EQ(run_cli(sim_run(1, dir.path / "a.json") + " --store " + store).rc, 0);
  // As version 1 left it: frames without the poll observer's columns, no scores.
  sql_one(pg.url,
          "ALTER TABLE frames DROP COLUMN poll_latency_ns, DROP COLUMN gpu_end_to_poll_wake_ns, "
          "DROP COLUMN poll_cpu_ns");
  sql_one(pg.url, "DROP TABLE scores");
  sql_one(pg.url, "UPDATE latlab_meta SET value = '1' WHERE key = 'schema_version'");
  const CliResult history = run_cli("history --store " + store);
  EXPECT_EQ(history.rc, 2) << history.output;
  EXPECT_NE(history.output.find("store migrate"), std::string::npos) << history.output;
  EXPECT_EQ(sql_one(pg.url, "SELECT value FROM latlab_meta"), "1");
  const CliResult m = run_cli("store migrate --store " + store);
  EXPECT_EQ(m.rc, 0) << m.output;
  EXPECT_NE(m.output.find("upgraded from schema version 1 to 3"), std::string::npos) << m.output;
  EXPECT_EQ(sql_one(pg.url, "SELECT value FROM latlab_meta"), "3");
  EXPECT_EQ(sql_one(pg.url, "SELECT count(*) FROM scores"), "0");
  EXPECT_EQ(sql_one(pg.url, "SELECT count(*) FROM frames WHERE poll_latency_ns IS NULL"),
            sql_one(pg.url, "SELECT count(*) FROM frames"));
  ASSERT_EQ(run_cli(sim_run(2, dir.path / "b.json") + " --store " + store).rc, 0);
  EXPECT_EQ(run_cli("history --store " + store).rc, 0);
  EXPECT_EQ(sql_one(pg.url, "SELECT count(*) FROM runs"), "2");
  EXPECT_EQ(sql_one(pg.url, "SELECT count(*) FROM scores"), "1");  // the run stored after
}

}  // namespace
}  // namespace latlab::e2e
