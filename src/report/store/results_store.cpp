// GCC 12 at -O2 warns "may be used uninitialized" inside std::variant's move
// of a std::string alternative built in a conditional expression (a known
// false positive of its inliner); the values here are always initialised.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "report/store/results_store.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <set>

#include "core/output_file.hpp"
#include "latlab/bench/latency_report.hpp"
#include "report/json_parts.hpp"
#include "report/result_json.hpp"
#include "report/result_reader.hpp"
#include "report/store/sql_connection.hpp"
#include "report/store/store_migration.hpp"
#include "report/store/store_schema.hpp"

namespace latlab::store {
namespace {

// Any pg_advisory lock key, held while a new store's schema is created.
constexpr int64_t kSchemaLockKey = 0x6c61746c6162;  // "latlab"

SqlValue text_or_null(const std::string& s) { return s.empty() ? SqlValue{} : SqlValue{s}; }

std::vector<SqlValue> distribution_params(const Distribution& d) {
  std::vector<SqlValue> p{static_cast<int64_t>(d.count), static_cast<int64_t>(d.missing)};
  // stddev is null below two samples, like every statistic of an empty distribution.
  const std::optional<double> stats[] = {d.mean, d.stddev, d.min,  d.p50, d.p90,
                                         d.p95,  d.p99,    d.p999, d.max};
  for (const std::optional<double>& s : stats)
    p.emplace_back(d.empty() || !s ? SqlValue{} : SqlValue{*s});
  return p;
}

std::string placeholders(const SqlConnection& db, int n) {
  std::string s;
  for (int i = 1; i <= n; ++i) s += (i > 1 ? ", " : "") + db.param(i);
  return s;
}

std::optional<double> opt_double(const std::optional<std::string>& s) {
  if (!s) return std::nullopt;
  return std::stod(*s);
}

// Rolls back on scope exit unless committed.
class Transaction {
 public:
  explicit Transaction(SqlConnection& db) : db_(db) {}
  ~Transaction() {
    if (open_) (void)db_.query("ROLLBACK");
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  Result<void> begin(bool write) {
    Result<void> r = write ? db_.begin_write() : db_.begin_read();
    open_ = r.ok();
    return r;
  }
  Result<void> commit() {
    open_ = false;
    Result<std::vector<SqlRow>> r = db_.query("COMMIT");
    if (!r) return r.error();
    return {};
  }

 private:
  SqlConnection& db_;
  bool open_ = false;
};

}  // namespace

ResultsStore::ResultsStore(std::unique_ptr<SqlConnection> db, std::string name)
    : db_(std::move(db)), name_(std::move(name)) {}
ResultsStore::~ResultsStore() = default;

namespace {

// The store's schema version as stored ("(none)" when latlab_meta has no
// row); "" for a store with no tables yet. An error for tables that are not
// latlab's.
Result<std::string> stored_schema_version(SqlConnection& db, const std::string& name) {
  const bool pg = std::string(db.dialect()) == "postgresql";
  Result<std::vector<SqlRow>> tables =
      db.query(pg ? "SELECT table_name FROM information_schema.tables WHERE table_schema = "
                    "current_schema()"
                  : "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                    "'sqlite_%'");
  if (!tables) return tables.error();
  std::set<std::string> names;
  for (const SqlRow& row : tables.value()) names.insert(row.at(0).value_or(""));
  if (names.count("latlab_meta") == 0) {
    if (names.empty()) return std::string();
    return make_error(fmt::format(
        "{} is not a latlab results store (it has tables but no latlab_meta); nothing changed. "
        "Use another --store.",
        name));
  }
  Result<std::vector<SqlRow>> version =
      db.query("SELECT value FROM latlab_meta WHERE key = 'schema_version'");
  if (!version) return version.error();
  return version->empty() ? std::string("(none)") : version->at(0).at(0).value_or("(null)");
}

// An older schema that a write upgrades in place.
bool upgradable(const std::string& v) { return v == "1" || v == "2"; }

// From schema version `from` ("1" or "2") to the current one, step by step,
// inside the caller's transaction.
Result<void> upgrade_schema(SqlConnection& db, const std::string& from) {
  if (from == "1") {
    if (Result<void> r = migrate_v1_to_v2(db); !r) return r;
  }
  return migrate_v2_to_v3(db);
}

Error other_schema_version(const std::string& name, const std::string& v) {
  return make_error(fmt::format(
      "the results store {} has schema version {}; this latlab ({}) reads and writes version "
      "{} only: refused, nothing changed. Use another --store (or a latlab of that version).",
      name, v, kVersion, kStoreSchemaVersion));
}

// The SQLite store `path` as a file latlab may write (`verb`: "create",
// "write"): its directory writable (SQLite keeps its journal there), a
// regular file or a new name that fits.
Result<void> check_store_file(const std::string& path, const char* verb) {
  Result<OutputTarget> t = check_output_path(path);
  if (!t)
    return make_error(fmt::format("cannot {} the results store: {}", verb, t.error().message));
  if (t->kind != OutputTarget::Kind::file) {
    return make_error(
        fmt::format("cannot {} the results store {}: not a regular file", verb, path));
  }
  return {};
}

// Where a new SQLite store at `path` would be created: refused now (before
// any run) when it could not be. The default location's missing directories
// are latlab's to create: the nearest existing one must be writable.
Result<void> check_new_sqlite_store(const std::string& path, bool default_location) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::path(path).parent_path();
  if (default_location && !dir.empty() && !fs::exists(dir, ec)) {
    while (!fs::exists(dir, ec) && dir != dir.parent_path()) dir = dir.parent_path();
    if (access(dir.c_str(), W_OK | X_OK) != 0) {
      return make_error(fmt::format("cannot create the default store {}: {} is not writable", path,
                                    dir.string()));
    }
    return {};
  }
  return check_store_file(path, "create");
}

}  // namespace

Result<std::unique_ptr<ResultsStore>> ResultsStore::open(const std::string& location,
                                                         Access access) {
  std::unique_ptr<SqlConnection> db;
  std::string name = location;
  bool new_sqlite = false;
  if (is_postgres_url(location)) {
    Result<std::unique_ptr<SqlConnection>> c = open_postgres(location);
    if (!c) return c.error();
    db = std::move(c.value());
    const size_t at = location.find('@');
    if (at != std::string::npos)
      name = location.substr(0, location.find("://") + 3) + "..." + location.substr(at);
  } else {
    const bool default_location = name.empty();
    if (default_location) name = default_store_location();
    Result<bool> exists = sqlite_store_exists(name);
    if (!exists) return exists.error();
    if (!*exists && access == Access::append) {
      // Nothing is created before the first add(): a command refused or
      // failed before it leaves no store behind.
      if (Result<void> r = check_new_sqlite_store(name, default_location); !r) return r.error();
      new_sqlite = true;
    } else {
      if (access == Access::append) {
        if (Result<void> r = check_store_file(name, "write"); !r) return r.error();
      }
      Result<std::unique_ptr<SqlConnection>> c = open_sqlite(name, false);
      if (!c) return c.error();
      db = std::move(c.value());
    }
  }
  std::unique_ptr<ResultsStore> s(new ResultsStore(std::move(db), name));
  if (new_sqlite) return s;
  if (Result<void> r = s->check(access); !r) return r.error();
  return s;
}

Result<void> ResultsStore::check(Access access) {
  Transaction tx(*db_);
  if (Result<void> r = tx.begin(false); !r) return r;
  Result<std::string> stored = stored_schema_version(*db_, name_);
  if (!stored) return stored.error();
  const std::string& v = *stored;
  if (v.empty()) {
    empty_ = access == Access::read;  // append: the schema is created by the first add()
    return tx.commit();
  }
  if (upgradable(v)) {
    if (access == Access::read) {
      return make_error(fmt::format(
          "the results store {} has schema version {} ({}); reads need version {}: `latlab "
          "store migrate --store {}` upgrades it in place (as does any write to it); nothing "
          "changed.",
          name_, v,
          v == "1" ? "before the poll observer's series and the score" : "before the score",
          kStoreSchemaVersion, name_));
    }
    return tx.commit();  // upgraded by the first write (prepare_for_writes)
  }
  if (v != std::to_string(kStoreSchemaVersion)) return other_schema_version(name_, v);
  write_ready_ = access == Access::append;
  return tx.commit();
}

Result<void> ResultsStore::prepare_for_writes() {
  if (write_ready_) return {};
  if (db_) return create_or_upgrade_schema();
  // A new SQLite store: its directory (the default location's) and file.
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(name_).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  if (ec) {
    return make_error(
        fmt::format("cannot create the directory of the store {}: {}", name_, ec.message()));
  }
  Result<std::unique_ptr<SqlConnection>> c = open_sqlite(name_, true);
  if (!c) return c.error();
  db_ = std::move(c.value());
  Result<void> r = create_or_upgrade_schema();
  if (!r) {
    // Leave no empty file behind (another writer's store is never empty).
    db_.reset();
    if (std::filesystem::file_size(name_, ec) == 0 && !ec) std::filesystem::remove(name_, ec);
  }
  return r;
}

Result<void> ResultsStore::create_or_upgrade_schema() {
  SqlConnection& db = *db_;
  const bool pg = std::string(db.dialect()) == "postgresql";
  Transaction tx(db);
  if (Result<void> r = tx.begin(true); !r) return r;
  if (pg) {
    // Two first writers must not both create the schema.
    Result<std::vector<SqlRow>> lock =
        db.query(fmt::format("SELECT pg_advisory_xact_lock({})", kSchemaLockKey));
    if (!lock) return lock.error();
  }
  // Checked again inside the write lock: another writer may have created or
  // upgraded the store since open().
  Result<std::string> stored = stored_schema_version(db, name_);
  if (!stored) return stored.error();
  const std::string& v = *stored;
  if (v.empty()) {
    for (const std::string& sql : schema_statements(db.dialect())) {
      if (Result<std::vector<SqlRow>> r = db.query(sql); !r) return r.error();
    }
    Result<std::vector<SqlRow>> meta =
        db.query(fmt::format("INSERT INTO latlab_meta (key, value) VALUES ('schema_version', {})",
                             db.param(1)),
                 {std::to_string(kStoreSchemaVersion)});
    if (!meta) return meta.error();
    if (Result<void> r = tx.commit(); !r) return r;
    write_ready_ = true;
    empty_ = false;
    return {};
  }
  if (upgradable(v)) {
    if (Result<void> m = upgrade_schema(db, v); !m) {
      return make_error(fmt::format(
          "the results store {} could not be upgraded from schema version {} to {}: {}; nothing "
          "changed.",
          name_, v, kStoreSchemaVersion, m.error().message));
    }
    migrated_from_ = std::stoi(v);
  } else if (v != std::to_string(kStoreSchemaVersion)) {
    return other_schema_version(name_, v);
  }
  if (Result<void> r = tx.commit(); !r) return r;
  write_ready_ = true;
  return {};
}

namespace {

// What a stored run's row says of its device: its latency run's, a run
// without latency blocks' own, or a capture's first source.
struct DeviceColumns {
  std::string backend, name, driver;
};
DeviceColumns device_columns(const RunResult& r) {
  if (r.capture) {
    if (r.capture->sources.empty()) return {};
    return {r.capture->sources[0].api, r.capture->sources[0].device, ""};
  }
  const DeviceInfo& d = r.latency ? r.latency->device : r.device;
  return {d.backend, d.name, d.driver};
}

// The run's own row; its id.
Result<int64_t> insert_run_row(SqlConnection& db, const RunResult& run, const StoredText& doc,
                               size_t frame_rows) {
  const DeviceColumns dev = device_columns(run);
  const LatencyRunDesc* desc = run.latency ? &run.latency->desc : nullptr;
  const std::vector<SqlValue> params = {
      utc_now_iso8601(),
      run.meta.created_utc,
      std::string(run.kind()),
      static_cast<int64_t>(doc.schema_version),
      run.meta.tool_version,
      run.meta.command_line,
      static_cast<int64_t>(run.partial() ? 1 : 0),
      text_or_null(run.partial_reason()),
      run.capture ? std::string("capture") : run.meta.mode,
      run.capture ? dev.backend : run.meta.backend,
      desc ? SqlValue{std::to_string(desc->schedule.seed)} : SqlValue{},
      desc ? SqlValue{int64_t{desc->frames}} : SqlValue{},
      desc ? SqlValue{int64_t{desc->blocks}} : SqlValue{},
      run.meta.machine.hostname,
      text_or_null(run.meta.machine.os),
      run.meta.machine.kernel,
      run.meta.machine.arch,
      text_or_null(run.meta.machine.cpu_model),
      static_cast<int64_t>(run.meta.machine.logical_cpus),
      dev.backend,
      dev.name,
      dev.driver,
      fingerprint_of(run),
      frame_rows == 0 ? SqlValue{} : SqlValue{static_cast<int64_t>(frame_rows)},
      result_settings_to_json(run).dump(),
      std::string(doc.text)};
  Result<std::vector<SqlRow>> inserted = db.query(
      "INSERT INTO runs (stored_utc, created_utc, kind, result_schema_version, tool_version, "
      "command_line, partial, partial_reason, settings_mode, settings_backend, seed, frames, "
      "blocks, hostname, os, kernel, arch, cpu_model, logical_cpus, device_backend, device_name, "
      "device_driver, fingerprint, frame_rows, settings_json, result_json) VALUES (" +
          placeholders(db, static_cast<int>(params.size())) + ") RETURNING id",
      params);
  if (!inserted) return inserted.error();
  return std::stoll(inserted->at(0).at(0).value());
}

// The rows of run_modes and distributions of one run.
struct ModeRows {
  int64_t id = 0;
  std::vector<std::vector<SqlValue>> modes, dists;

  void mode(const std::string& name, bool available, const FrameWorkload* w,
            const std::string& reason, std::optional<uint64_t> frames) {
    auto opt = [w](uint32_t FrameWorkload::*f) {
      return w ? SqlValue{int64_t{w->*f}} : SqlValue{};
    };
    modes.push_back({id, name, static_cast<int64_t>(available ? 1 : 0), text_or_null(reason),
                     opt(&FrameWorkload::passes), opt(&FrameWorkload::complexity),
                     opt(&FrameWorkload::width), opt(&FrameWorkload::height),
                     w ? SqlValue{std::string(form_name(w->form))} : SqlValue{},
                     frames ? SqlValue{static_cast<int64_t>(*frames)} : SqlValue{}});
  }
  void dist(const std::string& mode, const char* scope, SqlValue index, SqlValue order,
            SqlValue frames_run, const std::string& series, const Distribution& d) {
    std::vector<SqlValue> row{id, mode, std::string(scope), index, order, frames_run, series};
    for (SqlValue& v : distribution_params(d)) row.push_back(std::move(v));
    dists.push_back(std::move(row));
  }
  void series(const std::string& mode, const char* scope, SqlValue index, SqlValue order,
              SqlValue frames_run, const SeriesDistributions& s) {
    for (size_t i = 0; i < kSeriesCount; ++i)
      dist(mode, scope, index, order, frames_run, std::string(to_string(static_cast<Series>(i))),
           s[i]);
  }
};

// A latency run's modes: every block's and the total's distributions.
void latency_mode_rows(const RunResult& run, ModeRows& rows) {
  const LatencyRun& l = *run.latency;
  for (uint32_t mi = 0; mi < l.modes.size(); ++mi) {
    const LatencyModeResult& m = l.modes[mi];
    rows.mode(m.name, true, &m.workload, "", m.measured_frames);
    for (const BlockResult& b : l.blocks) {
      if (b.kind != BlockKind::measured || b.mode != mi) continue;
      rows.series(m.name, "block", int64_t{b.index}, int64_t{b.order},
                  static_cast<int64_t>(b.frames_run), b.series);
    }
    rows.series(m.name, "total", {}, {}, static_cast<int64_t>(m.measured_frames), m.total);
  }
  if (run.loaded.asked && !run.loaded.runs)
    rows.mode("loaded", false, nullptr, run.loaded.unavailable, {});
}

// A capture: one mode whose totals are its per-frame figures.
void capture_mode_rows(const CaptureResult& c, ModeRows& rows) {
  rows.mode("capture", true, nullptr, "", c.frames);
  for (const auto& [name, d] : c.figures)
    rows.dist("capture", "total", {}, {}, static_cast<int64_t>(c.frames), name, d);
}

// Every mode's row and every block's and total's distributions.
Result<void> insert_modes(SqlConnection& db, int64_t id, const RunResult& run) {
  ModeRows rows;
  rows.id = id;
  if (run.capture) capture_mode_rows(*run.capture, rows);
  if (run.latency) latency_mode_rows(run, rows);
  if (Result<void> r = db.execute_many(
          "INSERT INTO run_modes (run_id, mode, available, reason, passes, complexity, width, "
          "height, form, frames) VALUES (" +
              placeholders(db, 10) + ")",
          rows.modes);
      !r) {
    return r.error();
  }
  std::string stat_cols;
  for (const char* c : kStatColumns) stat_cols += std::string(", ") + c;
  if (Result<void> r = db.execute_many(
          "INSERT INTO distributions (run_id, mode, scope, block_index, block_order, frames_run, "
          "series, count, missing" +
              stat_cols + ") VALUES (" + placeholders(db, 18) + ")",
          rows.dists);
      !r) {
    return r.error();
  }
  return {};
}

// The run's score, when its result has one (docs/score.md).
Result<void> insert_score(SqlConnection& db, int64_t id, const RunResult& run) {
  if (!run.score) return {};
  const LatencyScore& sc = *run.score;
  auto opt = [](std::optional<double> v) { return v ? SqlValue{*v} : SqlValue{}; };
  Result<std::vector<SqlRow>> r = db.query(
      "INSERT INTO scores (run_id, formula, value, ci95_low, ci95_high, unavailable_reason) "
      "VALUES (" +
          placeholders(db, 6) + ")",
      {id, sc.formula, opt(sc.value), opt(sc.ci_low), opt(sc.ci_high),
       text_or_null(sc.unavailable_reason)});
  if (!r) return r.error();
  return {};
}

// The per-frame series (run --store), one row a frame.
Result<void> insert_frames(SqlConnection& db, int64_t id, std::span<const FrameSeriesRow> frames) {
  if (frames.empty()) return {};

  std::string cols;
  for (size_t i = 0; i < kSeriesCount; ++i)
    cols += fmt::format(", {}_ns", to_string(static_cast<Series>(i)));
  std::vector<std::vector<SqlValue>> rows;
  rows.reserve(frames.size());
  for (const FrameSeriesRow& f : frames) {
    std::vector<SqlValue> row{id, f.mode, f.block_kind, int64_t{f.block_index},
                              static_cast<int64_t>(f.frame_id)};
    for (const auto& v : f.ns) row.push_back(v ? SqlValue{*v} : SqlValue{});
    rows.push_back(std::move(row));
  }
  if (Result<void> r = db.execute_many(
          "INSERT INTO frames (run_id, mode, block_kind, block_index, frame_id" + cols +
              ") VALUES (" + placeholders(db, static_cast<int>(5 + kSeriesCount)) + ")",
          rows);
      !r) {
    return r.error();
  }
  return {};
}

}  // namespace

Result<int64_t> ResultsStore::add(const RunResult& result, const StoredText& doc,
                                  std::span<const FrameSeriesRow> frames) {
  if (Result<void> r = prepare_for_writes(); !r) return r.error();
  const RunResult& run = result.top_level();
  SqlConnection& db = *db_;
  Transaction tx(db);  // all of a run, or nothing of it
  if (Result<void> r = tx.begin(true); !r) return r.error();
  const Result<int64_t> id = insert_run_row(db, run, doc, frames.size());
  if (!id) return id.error();
  if (Result<void> r = insert_modes(db, *id, run); !r) return r.error();
  if (Result<void> r = insert_score(db, *id, run); !r) return r.error();
  if (Result<void> r = insert_frames(db, *id, frames); !r) return r.error();
  if (Result<void> r = tx.commit(); !r) return r.error();
  return *id;
}

namespace {

// One row of the headline query into its mode's figures.
void add_figure(StoredRunSummary& s, const SqlRow& f) {
  const std::string mode = f[0].value_or("");
  auto it = std::find_if(s.modes.begin(), s.modes.end(),
                         [&](const StoredModeFigures& m) { return m.mode == mode; });
  if (it == s.modes.end()) {
    s.modes.emplace_back();
    s.modes.back().mode = mode;
    it = s.modes.end() - 1;
  }
  it->frames = f[2] ? std::stoull(*f[2]) : 0;
  if (f[1] == "core_latency") {
    it->core_p50 = opt_double(f[4]);
    it->core_p99 = opt_double(f[5]);
    it->core_missing = f[3] ? std::stoull(*f[3]) : 0;
  } else if (f[1] == "fence_latency") {
    it->fence_p50 = opt_double(f[4]);
    it->fence_p99 = opt_double(f[5]);
  } else if (f[1] == "between_presents") {
    it->between_presents_p50 = opt_double(f[4]);
    it->between_presents_p99 = opt_double(f[5]);
  } else {
    it->gpu_busy_p50 = opt_double(f[4]);
    it->gpu_busy_p99 = opt_double(f[5]);
  }
}

}  // namespace

Result<std::vector<StoredRunSummary>> ResultsStore::list(size_t limit) {
  std::vector<StoredRunSummary> out;
  if (empty_ || !db_) return out;
  SqlConnection& db = *db_;
  Transaction tx(db);
  if (Result<void> r = tx.begin(false); !r) return r.error();
  Result<std::vector<SqlRow>> runs = db.query(
      "SELECT id, stored_utc, created_utc, hostname, device_backend, device_name, device_driver, "
      "tool_version, settings_mode, fingerprint, partial, frame_rows, formula, value, ci95_low, "
      "ci95_high, unavailable_reason FROM runs LEFT JOIN scores ON scores.run_id = runs.id "
      "ORDER BY id DESC LIMIT " +
          db.param(1),
      {static_cast<int64_t>(limit)});
  if (!runs) return runs.error();
  for (const SqlRow& row : runs.value()) {
    StoredRunSummary s;
    s.id = std::stoll(row[0].value());
    s.stored_utc = row[1].value_or("");
    s.created_utc = row[2].value_or("");
    s.hostname = row[3].value_or("");
    s.backend = row[4].value_or("");
    s.device = row[5].value_or("");
    s.driver = row[6].value_or("");
    s.tool_version = row[7].value_or("");
    s.settings_mode = row[8].value_or("");
    s.fingerprint = row[9].value_or("");
    s.partial = row[10].value_or("0") != "0";
    if (row[11]) s.frame_rows = std::stoll(*row[11]);
    if (row[12]) {
      s.score = StoredScore{*row[12], opt_double(row[13]), opt_double(row[14]), opt_double(row[15]),
                            row[16].value_or("")};
    }
    Result<std::vector<SqlRow>> figs = db.query(
        "SELECT mode, series, frames_run, missing, p50_us, p99_us FROM distributions WHERE "
        "run_id = " +
            db.param(1) +
            " AND scope = 'total' AND series IN ('core_latency', 'fence_latency', "
            "'between_presents', 'gpu_busy') ORDER BY mode",
        {s.id});
    if (!figs) return figs.error();
    for (const SqlRow& f : figs.value()) add_figure(s, f);
    out.push_back(std::move(s));
  }
  if (Result<void> r = tx.commit(); !r) return r.error();
  return out;
}

Result<RunResult> ResultsStore::load(int64_t id) {
  if (empty_ || !db_)
    return make_error(fmt::format("no run {} in {}: the store is empty", id, name_));
  Result<std::vector<SqlRow>> r =
      db_->query("SELECT result_json FROM runs WHERE id = " + db_->param(1), {id});
  if (!r) return r.error();
  if (r->empty() || !r->at(0).at(0)) {
    return make_error(fmt::format("no run {} in {} (see `latlab history`)", id, name_));
  }
  Result<ResultDocument> doc =
      read_result_json(std::move(*r->at(0).at(0)), fmt::format("run {} in {}", id, name_),
                       ReadOptions{.per_frame = false});
  if (!doc) return doc.error();
  return std::move(doc->result);
}

std::string fingerprint_of(const RunResult& result) {
  const RunResult& r = result.top_level();
  const DeviceColumns d = device_columns(r);
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const std::string* s : {&r.meta.machine.hostname, &r.meta.machine.cpu_model,
                               &r.meta.machine.kernel, &d.backend, &d.name, &d.driver}) {
    for (unsigned char ch : *s) {
      h ^= ch;
      h *= 0x100000001b3ULL;
    }
    h ^= 0xff;  // field separator: ("ab","c") and ("a","bc") differ
    h *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", h);
}

std::vector<FrameSeriesRow> frame_series_of(const LatencyRun& run) {
  std::vector<FrameSeriesRow> out;
  for (const BlockResult& b : run.blocks) {
    if (b.kind != BlockKind::warmup && b.kind != BlockKind::measured) continue;
    const std::string mode =
        b.mode < run.modes.size() ? run.modes[b.mode].name : std::string("baseline");
    for (uint64_t i = 0; i < b.frames_run; ++i) {
      const FrameRecord& r = run.frames[b.first_frame + i];
      FrameSeriesRow row;
      row.frame_id = b.first_device_frame + i;
      row.mode = mode;
      row.block_kind = std::string(to_string(b.kind));
      row.block_index = b.index;
      for (size_t s = 0; s < kSeriesCount; ++s)
        row.ns[s] = series_value_ns(r, static_cast<Series>(s), run.device.ticks);
      out.push_back(std::move(row));
    }
  }
  return out;
}

}  // namespace latlab::store
