#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "report/store/sql_connection.hpp"

namespace latlab::store {
namespace {

// A writer waits this long for another writer's transaction (ms).
constexpr int kBusyTimeoutMs = 60'000;

class SqliteConnection final : public SqlConnection {
 public:
  SqliteConnection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  ~SqliteConnection() override { sqlite3_close_v2(db_); }
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  const char* dialect() const override { return "sqlite"; }
  std::string param(int i) const override { return fmt::format("?{}", i); }

  Result<std::vector<SqlRow>> query(const std::string& sql,
                                    const std::vector<SqlValue>& params) override {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) return error(sql);
    std::vector<SqlRow> rows;
    Result<void> bound = bind(st, params);
    if (!bound) {
      sqlite3_finalize(st);
      return bound.error();
    }
    int rc = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      SqlRow row;
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        const unsigned char* t = sqlite3_column_text(st, c);
        if (t == nullptr) {
          row.emplace_back(std::nullopt);
        } else {
          row.emplace_back(std::string(reinterpret_cast<const char*>(t),
                                       static_cast<size_t>(sqlite3_column_bytes(st, c))));
        }
      }
      rows.push_back(std::move(row));
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return error(sql);
    return rows;
  }

  Result<void> execute_many(const std::string& sql,
                            const std::vector<std::vector<SqlValue>>& rows) override {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) return error(sql).error();
    for (const auto& params : rows) {
      sqlite3_reset(st);
      sqlite3_clear_bindings(st);
      Result<void> bound = bind(st, params);
      if (!bound || sqlite3_step(st) != SQLITE_DONE) {
        sqlite3_finalize(st);
        return bound ? error(sql).error() : bound.error();
      }
    }
    sqlite3_finalize(st);
    return {};
  }

  Result<void> begin_write() override { return simple("BEGIN IMMEDIATE"); }
  Result<void> begin_read() override { return simple("BEGIN"); }

 private:
  Result<void> simple(const char* sql) {
    Result<std::vector<SqlRow>> r = query(sql, {});
    if (!r) return r.error();
    return {};
  }

  Result<void> bind(sqlite3_stmt* st, const std::vector<SqlValue>& params) {
    for (size_t i = 0; i < params.size(); ++i) {
      const int idx = static_cast<int>(i + 1);
      int rc = SQLITE_OK;
      if (const auto* v = std::get_if<int64_t>(&params[i])) {
        rc = sqlite3_bind_int64(st, idx, *v);
      } else if (const auto* d = std::get_if<double>(&params[i])) {
        rc = sqlite3_bind_double(st, idx, *d);
      } else if (const auto* s = std::get_if<std::string>(&params[i])) {
        rc = sqlite3_bind_text(st, idx, s->data(), static_cast<int>(s->size()), SQLITE_TRANSIENT);
      } else {
        rc = sqlite3_bind_null(st, idx);
      }
      if (rc != SQLITE_OK) return error("bind").error();
    }
    return {};
  }

  Result<std::vector<SqlRow>> error(const std::string& sql) const {
    std::string first = sql.substr(0, sql.find('\n'));
    if (first.size() > 60) first = first.substr(0, 60) + "...";
    return make_error(fmt::format("SQLite store {}: {} (in: {})", path_, sqlite3_errmsg(db_), first));
  }

  sqlite3* db_;
  std::string path_;
};

}  // namespace

Result<bool> sqlite_store_exists(const std::string& path) {
  struct stat sb {};
  if (::stat(path.c_str(), &sb) == 0) {
    if (S_ISDIR(sb.st_mode))
      return make_error(fmt::format("the results store {} is a directory", path));
    return true;
  }
  if (errno == ENOENT) return false;
  if (errno == ELOOP) {
    return make_error(
        fmt::format("cannot open the results store {}: a loop of symbolic links", path));
  }
  return make_error(
      fmt::format("cannot open the results store {}: {}", path, std::strerror(errno)));
}

Result<std::unique_ptr<SqlConnection>> open_sqlite(const std::string& path, bool create) {
  if (!create) {
    Result<bool> exists = sqlite_store_exists(path);
    if (!exists) return exists.error();
    if (!*exists) {
      return make_error(fmt::format("no results store at {} (nothing stored there yet)", path));
    }
  }
  sqlite3* db = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    std::string why = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close_v2(db);
    return make_error(fmt::format("cannot open the SQLite store {}: {}", path, why));
  }
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  sqlite3_extended_result_codes(db, 1);
  return std::unique_ptr<SqlConnection>(std::make_unique<SqliteConnection>(db, path));
}

}  // namespace latlab::store
