// The little SQL the results store needs, over SQLite and PostgreSQL alike:
// statements with positional parameters, rows of text. One connection per
// store, not thread-safe. Private to src/report/store.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "latlab/result.hpp"

namespace latlab::store {

// A parameter: NULL, an integer, a number or text.
using SqlValue = std::variant<std::monostate, int64_t, double, std::string>;
// A result row: each column as text, nullopt for NULL.
using SqlRow = std::vector<std::optional<std::string>>;

class SqlConnection {
 public:
  virtual ~SqlConnection() = default;
  // "sqlite" or "postgresql".
  virtual const char* dialect() const = 0;
  // Placeholder of parameter `i` (1-based): "?1" or "$1".
  virtual std::string param(int i) const = 0;
  // Runs `sql` with `params`; the rows it returns (none for most statements).
  virtual Result<std::vector<SqlRow>> query(const std::string& sql,
                                            const std::vector<SqlValue>& params = {}) = 0;
  // Runs one statement many times with different parameters (prepared once).
  virtual Result<void> execute_many(const std::string& sql,
                                    const std::vector<std::vector<SqlValue>>& rows) = 0;
  // Starts a transaction that holds the write lock from its first statement
  // (SQLite: BEGIN IMMEDIATE, waiting on a busy store; PostgreSQL: BEGIN).
  virtual Result<void> begin_write() = 0;
  virtual Result<void> begin_read() = 0;
};

// Whether a SQLite store file exists at `path`; an error naming the cause when
// the path cannot be looked at (a loop of symbolic links, a file where a
// directory should be, no permission).
Result<bool> sqlite_store_exists(const std::string& path);

// Opens the SQLite database at `path`. `create`: create the file when absent
// (its directory must exist); else an absent file is an error.
Result<std::unique_ptr<SqlConnection>> open_sqlite(const std::string& path, bool create);

// Connects to a PostgreSQL server (`url`: postgresql://... or postgres://...).
Result<std::unique_ptr<SqlConnection>> open_postgres(const std::string& url);

}  // namespace latlab::store
