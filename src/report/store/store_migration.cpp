#include "report/store/store_migration.hpp"

#include <fmt/format.h>

#include <set>
#include <string>

#include "latlab/bench/frame_markers.hpp"
#include "report/store/sql_connection.hpp"
#include "report/store/store_schema.hpp"

namespace latlab::store {

Result<void> migrate_v1_to_v2(SqlConnection& db) {
  const bool pg = std::string(db.dialect()) == "postgresql";
  Result<std::vector<SqlRow>> cols =
      db.query(pg ? "SELECT column_name FROM information_schema.columns WHERE table_schema = "
                    "current_schema() AND table_name = 'frames'"
                  : "SELECT name FROM pragma_table_info('frames')");
  if (!cols) return cols.error();
  std::set<std::string> have;
  for (const SqlRow& row : cols.value()) have.insert(row.at(0).value_or(""));
  if (have.empty()) return make_error("schema version 1 store without a frames table");
  for (size_t i = 0; i < kSeriesCount; ++i) {
    const std::string col = fmt::format("{}_ns", to_string(static_cast<Series>(i)));
    if (have.count(col) != 0) continue;
    if (Result<std::vector<SqlRow>> r =
            db.query(fmt::format("ALTER TABLE frames ADD COLUMN {} BIGINT", col));
        !r) {
      return r.error();
    }
  }
  Result<std::vector<SqlRow>> v =
      db.query("UPDATE latlab_meta SET value = '2' WHERE key = 'schema_version'");
  if (!v) return v.error();
  return {};
}

Result<void> migrate_v2_to_v3(SqlConnection& db) {
  if (Result<std::vector<SqlRow>> r = db.query(scores_table_statement()); !r) return r.error();
  Result<std::vector<SqlRow>> v =
      db.query("UPDATE latlab_meta SET value = '3' WHERE key = 'schema_version'");
  if (!v) return v.error();
  return {};
}

}  // namespace latlab::store
