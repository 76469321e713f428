#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/result_json.hpp"
#include "report/result_reader.hpp"
#include "report/store/results_store.hpp"
#include "sim_result_doc.hpp"
#include "temp_dir.hpp"
#include "unit/capture_result_doc.hpp"

namespace latlab::store {
namespace {

namespace fs = std::filesystem;
using testing::sim_result_doc;
using testing::SimRunSpec;

struct TempDir : test::TempDir {
  TempDir() : test::TempDir("latlab-store-test") {}
};

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void exec_sql(const fs::path& db, const std::string& sql) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(h);
}

TEST(ResultsStoreSqlite, AppendsListsAndReadsBack) {
  TempDir dir;
  const std::string db = (dir.path / "r.db").string();
  LatencyRun run;
  const std::string doc = sim_result_doc(SimRunSpec{.frames = 40, .blocks = 4}, &run);
  Result<ResultDocument> rr = read_result_json(doc, "doc");
  ASSERT_TRUE(rr.ok());
  auto s = ResultsStore::open(db, ResultsStore::Access::append);
  ASSERT_TRUE(s.ok()) << s.error().message;
  const std::vector<FrameSeriesRow> frames = frame_series_of(run);
  EXPECT_EQ(frames.size(), 45u);  // 5 warm-up + 40 measured
  const StoredText text{rr->text, rr->schema_version};
  Result<int64_t> id1 = s.value()->add(rr->result, text, frames);
  ASSERT_TRUE(id1.ok()) << id1.error().message;
  Result<int64_t> id2 = s.value()->add(rr->result, text, {});
  ASSERT_TRUE(id2.ok()) << id2.error().message;
  EXPECT_GT(id2.value(), id1.value());

  auto reader = ResultsStore::open(db, ResultsStore::Access::read);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  Result<std::vector<StoredRunSummary>> list = reader.value()->list(10);
  ASSERT_TRUE(list.ok()) << list.error().message;
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ(list->at(0).id, id2.value());  // newest first
  EXPECT_EQ(list->at(1).frame_rows, 45);
  EXPECT_FALSE(list->at(0).frame_rows.has_value());  // none given: null, not 0
  ASSERT_EQ(list->at(1).modes.size(), 1u);
  const Distribution& core = run.modes[0].total[static_cast<size_t>(Series::core_latency)];
  ASSERT_TRUE(list->at(1).modes[0].core_p50.has_value());
  EXPECT_DOUBLE_EQ(*list->at(1).modes[0].core_p50, core.p50);
  EXPECT_EQ(list->at(1).fingerprint, fingerprint_of(rr->result));

  Result<RunResult> back = reader.value()->load(id1.value());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(back.value() == rr->result);  // the stored document reads back as the result
  EXPECT_FALSE(reader.value()->load(999).ok());
}

// A capture is stored as one mode "capture" whose totals are its per-frame
// figures; history lists them and the stored document reads back.
TEST(ResultsStoreSqlite, ACaptureIsStoredListedAndReadBack) {
  TempDir dir;
  const std::string db = (dir.path / "r.db").string();
  const RunResult c = testing::capture_result({.seed = 3});
  const std::string text = run_result_to_json(c).dump(2) + "\n";
  auto s = ResultsStore::open(db, ResultsStore::Access::append);
  ASSERT_TRUE(s.ok()) << s.error().message;
  Result<int64_t> id = s.value()->add(c, StoredText{text}, {});
  ASSERT_TRUE(id.ok()) << id.error().message;
  auto reader = ResultsStore::open(db, ResultsStore::Access::read);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  Result<std::vector<StoredRunSummary>> list = reader.value()->list(10);
  ASSERT_TRUE(list.ok()) << list.error().message;
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ(list->at(0).settings_mode, "capture");
  EXPECT_EQ(list->at(0).device, "llvmpipe");
  ASSERT_EQ(list->at(0).modes.size(), 1u);
  const StoredModeFigures& m = list->at(0).modes[0];
  EXPECT_EQ(m.mode, "capture");
  EXPECT_EQ(m.frames, 120u);
  ASSERT_TRUE(m.between_presents_p50 && m.gpu_busy_p99);
  EXPECT_DOUBLE_EQ(*m.between_presents_p50, c.capture->figure("between_presents")->p50);
  EXPECT_DOUBLE_EQ(*m.gpu_busy_p99, c.capture->figure("gpu_busy")->p99);
  EXPECT_FALSE(m.core_p50.has_value());
  Result<RunResult> back = reader.value()->load(*id);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(back.value() == c);
}

TEST(ResultsStoreSqlite, AnotherSchemaVersionIsRefusedUntouched) {
  TempDir dir;
  const fs::path db = dir.path / "r.db";
  {
    auto created = ResultsStore::open(db.string(), ResultsStore::Access::append);
    ASSERT_TRUE(created.ok());
    ASSERT_TRUE(created.value()->prepare_for_writes().ok());
  }
  exec_sql(db, "UPDATE latlab_meta SET value = '9' WHERE key = 'schema_version'");
  const std::string before = bytes_of(db);
  for (auto access : {ResultsStore::Access::append, ResultsStore::Access::read}) {
    auto s = ResultsStore::open(db.string(), access);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message.find("schema version 9"), std::string::npos) << s.error().message;
    EXPECT_NE(s.error().message.find("nothing changed"), std::string::npos);
  }
  EXPECT_EQ(bytes_of(db), before);
}

// A count from the first column of `sql`'s single row.
int64_t count_of(const fs::path& db, const std::string& sql) {
  sqlite3* h = nullptr;
  EXPECT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(h);
  int64_t n = -1;
  if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

// A version 1 store as latlab 0.x left it: `frames` without the poll
// observer's columns (version 2 added them), no `scores` (version 3), one
// run with frame rows.
void make_v1_store(const fs::path& db) {
  LatencyRun run;
  const std::string doc = sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2}, &run);
  Result<ResultDocument> rr = read_result_json(doc, "doc");
  ASSERT_TRUE(rr.ok());
  auto s = ResultsStore::open(db.string(), ResultsStore::Access::append);
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_TRUE(s.value()->add(rr->result, StoredText{rr->text}, frame_series_of(run)).ok());
  s.value().reset();
  exec_sql(db,
           "ALTER TABLE frames DROP COLUMN poll_latency_ns; "
           "ALTER TABLE frames DROP COLUMN gpu_end_to_poll_wake_ns; "
           "ALTER TABLE frames DROP COLUMN poll_cpu_ns; DROP TABLE scores; "
           "UPDATE latlab_meta SET value = '1' WHERE key = 'schema_version'");
}

TEST(ResultsStoreSqlite, AVersion1StoreIsUpgradedByTheFirstWriteAndRefusedUntouchedByReads) {
  TempDir dir;
  const fs::path db = dir.path / "v1.db";
  ASSERT_NO_FATAL_FAILURE(make_v1_store(db));
  const std::string before = bytes_of(db);
  auto reader = ResultsStore::open(db.string(), ResultsStore::Access::read);
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.error().message.find("schema version 1"), std::string::npos)
      << reader.error().message;
  EXPECT_NE(reader.error().message.find("store migrate"), std::string::npos);
  EXPECT_EQ(bytes_of(db), before);

  // Opening for writes changes nothing yet: the first add() upgrades.
  auto writer = ResultsStore::open(db.string(), ResultsStore::Access::append);
  ASSERT_TRUE(writer.ok()) << writer.error().message;
  EXPECT_FALSE(writer.value()->migrated_from().has_value());
  EXPECT_EQ(bytes_of(db), before);
  // A run with frames goes in, and both read back.
  LatencyRun run;
  const std::string doc = sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2}, &run);
  Result<ResultDocument> rr = read_result_json(doc, "doc");
  ASSERT_TRUE(rr.ok());
  ASSERT_TRUE(writer.value()->add(rr->result, StoredText{rr->text}, frame_series_of(run)).ok());
  EXPECT_EQ(writer.value()->migrated_from(), std::optional<int>(1));
  EXPECT_EQ(count_of(db, "SELECT value FROM latlab_meta WHERE key = 'schema_version'"), 3);
  // The rows stored before have no poll values: NULL, never 0.
  EXPECT_EQ(count_of(db,
                     "SELECT COUNT(*) FROM frames WHERE poll_latency_ns IS NULL AND "
                     "poll_cpu_ns IS NULL AND gpu_end_to_poll_wake_ns IS NULL"),
            25);
  EXPECT_EQ(count_of(db, "SELECT COUNT(*) FROM frames"), 25 + 25);
  writer.value().reset();
  auto again = ResultsStore::open(db.string(), ResultsStore::Access::read);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_FALSE(again.value()->migrated_from().has_value());
  Result<std::vector<StoredRunSummary>> list = again.value()->list(10);
  ASSERT_TRUE(list.ok()) << list.error().message;
  EXPECT_EQ(list->size(), 2u);
}

// A version 2 store (before the score): one run stored, no `scores`.
void make_v2_store(const fs::path& db) {
  Result<ResultDocument> rr =
      read_result_json(sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2}), "doc");
  ASSERT_TRUE(rr.ok());
  auto s = ResultsStore::open(db.string(), ResultsStore::Access::append);
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_TRUE(s.value()->add(rr->result, StoredText{rr->text}, {}).ok());
  s.value().reset();
  exec_sql(db,
           "DROP TABLE scores; UPDATE latlab_meta SET value = '2' WHERE key = 'schema_version'");
}

TEST(ResultsStoreSqlite, AVersion2StoreGetsItsScoresTableByTheFirstWriteAndKeepsOldRunsScoreless) {
  TempDir dir;
  const fs::path db = dir.path / "v2.db";
  ASSERT_NO_FATAL_FAILURE(make_v2_store(db));
  const std::string before = bytes_of(db);
  auto reader = ResultsStore::open(db.string(), ResultsStore::Access::read);
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.error().message.find("schema version 2 (before the score)"), std::string::npos)
      << reader.error().message;
  EXPECT_NE(reader.error().message.find("store migrate"), std::string::npos);
  EXPECT_EQ(bytes_of(db), before);

  auto writer = ResultsStore::open(db.string(), ResultsStore::Access::append);
  ASSERT_TRUE(writer.ok()) << writer.error().message;
  Result<ResultDocument> rr =
      read_result_json(sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2}), "doc");
  ASSERT_TRUE(rr.ok());
  LatencyScore score;
  score.value = 412.5;
  score.ci_low = 400.25;
  score.ci_high = 425.75;
  rr->result.score = score;
  ASSERT_TRUE(writer.value()->add(rr->result, StoredText{rr->text}, {}).ok());
  EXPECT_EQ(writer.value()->migrated_from(), std::optional<int>(2));
  EXPECT_EQ(count_of(db, "SELECT value FROM latlab_meta WHERE key = 'schema_version'"), 3);
  writer.value().reset();
  auto again = ResultsStore::open(db.string(), ResultsStore::Access::read);
  ASSERT_TRUE(again.ok()) << again.error().message;
  Result<std::vector<StoredRunSummary>> list = again.value()->list(10);
  ASSERT_TRUE(list.ok()) << list.error().message;
  ASSERT_EQ(list->size(), 2u);
  ASSERT_TRUE(list->at(0).score.has_value());  // newest first
  EXPECT_EQ(list->at(0).score->formula, "latency-score/1");
  EXPECT_EQ(list->at(0).score->value, std::optional<double>(412.5));
  EXPECT_EQ(list->at(0).score->ci_low, std::optional<double>(400.25));
  EXPECT_EQ(list->at(0).score->ci_high, std::optional<double>(425.75));
  EXPECT_EQ(list->at(0).score->unavailable_reason, "");
  EXPECT_FALSE(list->at(1).score.has_value()) << "stored before version 3: no score row";
}

TEST(ResultsStoreSqlite, ARunWithoutAScoreKeepsItsReason) {
  TempDir dir;
  const fs::path db = dir.path / "r.db";
  Result<ResultDocument> rr =
      read_result_json(sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2}), "doc");
  ASSERT_TRUE(rr.ok());
  ASSERT_TRUE(rr->result.score.has_value());
  ASSERT_FALSE(rr->result.score->value.has_value()) << "a Baseline-only run";
  auto s = ResultsStore::open(db.string(), ResultsStore::Access::append);
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_TRUE(s.value()->add(rr->result, StoredText{rr->text}, {}).ok());
  Result<std::vector<StoredRunSummary>> list = s.value()->list(10);
  ASSERT_TRUE(list.ok()) << list.error().message;
  ASSERT_TRUE(list->at(0).score.has_value());
  EXPECT_FALSE(list->at(0).score->value.has_value());
  EXPECT_FALSE(list->at(0).score->ci_low.has_value());
  EXPECT_EQ(list->at(0).score->unavailable_reason, rr->result.score->unavailable_reason);
}

// A result written before the score (schema_version 2) is stored with why it
// has none, never a 0.
TEST(ResultsStoreSqlite, AResultOfSchemaVersion2IsStoredWithWhyItHasNoScore) {
  TempDir dir;
  const fs::path db = dir.path / "r.db";
  nlohmann::ordered_json j =
      nlohmann::ordered_json::parse(sim_result_doc(SimRunSpec{.frames = 20, .blocks = 2}));
  j["schema_version"] = 2;
  j.erase("score");
  Result<ResultDocument> rr = read_result_json(j.dump(2) + "\n", "v2");
  ASSERT_TRUE(rr.ok()) << rr.error().message;
  auto s = ResultsStore::open(db.string(), ResultsStore::Access::append);
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_TRUE(s.value()->add(rr->result, StoredText{rr->text, 2}, {}).ok());
  Result<std::vector<StoredRunSummary>> list = s.value()->list(10);
  ASSERT_TRUE(list.ok()) << list.error().message;
  ASSERT_TRUE(list->at(0).score.has_value());
  EXPECT_FALSE(list->at(0).score->value.has_value());
  EXPECT_EQ(count_of(db, "SELECT COUNT(*) FROM scores WHERE value IS NULL"), 1);
  EXPECT_NE(list->at(0).score->unavailable_reason.find("schema_version 2"), std::string::npos)
      << list->at(0).score->unavailable_reason;
}

TEST(ResultsStoreSqlite, ForeignFilesAreRefusedUntouched) {
  TempDir dir;
  const fs::path text = dir.path / "notes.txt";
  std::ofstream(text) << "not a database, just text that is long enough to have a header\n";
  const fs::path other = dir.path / "other.db";
  exec_sql(other, "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)");
  for (const fs::path& p : {text, other}) {
    const std::string before = bytes_of(p);
    auto s = ResultsStore::open(p.string(), ResultsStore::Access::append);
    EXPECT_FALSE(s.ok()) << p;
    EXPECT_EQ(bytes_of(p), before) << p;
  }
  // A directory that does not exist is an error, not created.
  EXPECT_FALSE(
      ResultsStore::open((dir.path / "no" / "r.db").string(), ResultsStore::Access::append).ok());
  EXPECT_FALSE(fs::exists(dir.path / "no"));
  // Opening a new store for writes creates nothing until the first add().
  ASSERT_TRUE(
      ResultsStore::open((dir.path / "new.db").string(), ResultsStore::Access::append).ok());
  EXPECT_FALSE(fs::exists(dir.path / "new.db"));
  // Reading a store that does not exist creates nothing.
  EXPECT_FALSE(ResultsStore::open((dir.path / "x.db").string(), ResultsStore::Access::read).ok());
  EXPECT_FALSE(fs::exists(dir.path / "x.db"));
}

TEST(ResultsStoreSqlite, DefaultLocationFollowsXdgDataHome) {
  const char* old = std::getenv("XDG_DATA_HOME");
  const std::string saved = old ? old : "";
  setenv("XDG_DATA_HOME", "/tmp/xdg-data", 1);
  EXPECT_EQ(default_store_location(), "/tmp/xdg-data/latlab/results.db");
  if (old) {
    setenv("XDG_DATA_HOME", saved.c_str(), 1);
  } else {
    unsetenv("XDG_DATA_HOME");
  }
}

}  // namespace
}  // namespace latlab::store
