// The results store: runs appended to SQLite (a file) or PostgreSQL (a
// server, `postgresql://...`) under one schema (docs/store.md): the settings,
// the machine/driver/device fingerprint, every block's and the total's
// distributions, the per-frame series when given, and the result document
// itself. Appends are single transactions, so concurrent writers lose
// nothing. A new store is created, and a version 1 or 2 store upgraded in place,
// by the first write (one transaction); a store of another schema version is
// refused untouched. One
// object per process and thread; not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "latlab/bench/frame_markers.hpp"
#include "latlab/bench/run_result.hpp"
#include "latlab/result.hpp"
#include "report/file_plan.hpp"  // default_store_location, is_postgres_url

namespace latlab::store {

// 2: the poll observer's series in `frames`; 3: the table `scores`.
inline constexpr int kStoreSchemaVersion = 3;

class SqlConnection;

// One frame's series in ns (nullopt where the frame lacks a marker), as the
// per-frame CSV holds them.
struct FrameSeriesRow {
  uint64_t frame_id = 0;
  std::string mode;        // baseline, loaded
  std::string block_kind;  // warmup, measured
  uint32_t block_index = 0;
  std::array<std::optional<int64_t>, kSeriesCount> ns{};
};

// One mode's headline of a stored run, us: a latency mode's observers, or
// a capture's frame figures (mode "capture").
struct StoredModeFigures {
  std::string mode;
  uint64_t frames = 0;
  std::optional<double> core_p50, core_p99, fence_p50, fence_p99;
  uint64_t core_missing = 0;
  std::optional<double> between_presents_p50, between_presents_p99, gpu_busy_p50, gpu_busy_p99;
};

// The document a result is stored with: its text, byte for byte, and the
// schema version it was written in.
struct StoredText {
  std::string_view text;
  int schema_version = kResultSchemaVersion;
};

// A stored run's latency score (table `scores`, docs/score.md). Its
// components are its modes' core_p50 and core_p99 (StoredModeFigures).
struct StoredScore {
  std::string formula;
  std::optional<double> value, ci_low, ci_high;  // value nullopt: no score
  std::string unavailable_reason;                // why not, when value is nullopt
};

struct StoredRunSummary {
  int64_t id = 0;
  std::string stored_utc, created_utc;
  std::string hostname, backend, device, driver, tool_version, settings_mode;
  std::string fingerprint;
  bool partial = false;
  std::optional<int64_t> frame_rows;  // per-frame rows stored; null when none were given
  std::vector<StoredModeFigures> modes;
  // nullopt: stored without one (before schema version 3). A result
  // written before the score is stored with why it has none.
  std::optional<StoredScore> score;
};

class ResultsStore {
 public:
  enum class Access {
    append,  // create the schema when the store is new
    read,    // never create or change anything
  };

  // Opens `location`: a postgresql:// or postgres:// URL, else a SQLite file
  // path ("" = default_store_location()). Checks the schema version, and for
  // Access::append that the store can be written (a new SQLite store: that
  // it can be created). Creates and changes nothing: a new store's file and
  // schema, or an older schema's upgrade, wait for prepare_for_writes() (the
  // first add()). An error names the store and what to do.
  static Result<std::unique_ptr<ResultsStore>> open(const std::string& location, Access access);

  ~ResultsStore();
  ResultsStore(const ResultsStore&) = delete;
  ResultsStore& operator=(const ResultsStore&) = delete;

  // Creates a new store (its file and directory, the default location's)
  // or upgrades an older schema in place, each in one transaction; nothing
  // when the store is ready. Access::append only.
  Result<void> prepare_for_writes();

  // Whether the store exists (a SQLite file not created yet: false).
  bool exists() const { return db_ != nullptr; }

  // Appends a run (a several-device run: its top-level device; a capture:
  // one mode "capture" whose series are its per-frame figures) with its
  // document in one transaction (prepare_for_writes() first); its id.
  Result<int64_t> add(const RunResult& run, const StoredText& doc,
                      std::span<const FrameSeriesRow> frames);

  // The newest `limit` runs, newest first.
  Result<std::vector<StoredRunSummary>> list(size_t limit);

  // The stored result of run `id`, read back (without per_frame).
  Result<RunResult> load(int64_t id);

  // The store as the user named it (password redacted).
  const std::string& name() const { return name_; }
  // The schema version prepare_for_writes() upgraded the store from;
  // nullopt when it was already current or new.
  std::optional<int> migrated_from() const { return migrated_from_; }

 private:
  ResultsStore(std::unique_ptr<SqlConnection> db, std::string name);
  Result<void> check(Access access);
  Result<void> create_or_upgrade_schema();

  std::unique_ptr<SqlConnection> db_;
  std::string name_;
  bool empty_ = false;        // opened for reading with no schema yet: no runs
  bool write_ready_ = false;  // the schema is current: add() needs no preparation
  std::optional<int> migrated_from_;
};


// The per-frame series of a run's warm-up and measured frames.
std::vector<FrameSeriesRow> frame_series_of(const LatencyRun& run);

// A machine/driver/device fingerprint: 16 hex digits of FNV-1a over
// hostname, CPU model, kernel, backend, device name and driver.
std::string fingerprint_of(const RunResult& r);

}  // namespace latlab::store
