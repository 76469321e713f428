#include "report/store/store_schema.hpp"

#include <fmt/format.h>

#include "latlab/bench/frame_markers.hpp"

namespace latlab::store {

std::vector<std::string> schema_statements(const std::string& dialect) {
  const std::string id = dialect == "sqlite" ? "INTEGER PRIMARY KEY AUTOINCREMENT"
                                             : "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY";
  std::vector<std::string> s;
  s.push_back("CREATE TABLE latlab_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  s.push_back(fmt::format(R"(CREATE TABLE runs (
  id {},
  stored_utc TEXT NOT NULL,
  created_utc TEXT NOT NULL,
  kind TEXT NOT NULL,
  result_schema_version BIGINT NOT NULL,
  tool_version TEXT NOT NULL,
  command_line TEXT NOT NULL,
  partial BIGINT NOT NULL,
  partial_reason TEXT,
  settings_mode TEXT NOT NULL,
  settings_backend TEXT NOT NULL,
  seed TEXT,
  frames BIGINT,
  blocks BIGINT,
  hostname TEXT NOT NULL,
  os TEXT,
  kernel TEXT NOT NULL,
  arch TEXT NOT NULL,
  cpu_model TEXT,
  logical_cpus BIGINT NOT NULL,
  device_backend TEXT NOT NULL,
  device_name TEXT NOT NULL,
  device_driver TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  frame_rows BIGINT,
  settings_json TEXT NOT NULL,
  result_json TEXT NOT NULL))",
                          id));
  s.push_back(R"(CREATE TABLE run_modes (
  run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  mode TEXT NOT NULL,
  available BIGINT NOT NULL,
  reason TEXT,
  passes BIGINT, complexity BIGINT, width BIGINT, height BIGINT, form TEXT,
  frames BIGINT,
  PRIMARY KEY (run_id, mode)))");
  std::string stats;
  for (const char* c : kStatColumns) stats += fmt::format(",\n  {} DOUBLE PRECISION", c);
  s.push_back(fmt::format(R"(CREATE TABLE distributions (
  run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  mode TEXT NOT NULL,
  scope TEXT NOT NULL,
  block_index BIGINT,
  block_order BIGINT,
  frames_run BIGINT,
  series TEXT NOT NULL,
  count BIGINT NOT NULL,
  missing BIGINT NOT NULL{}))",
                          stats));
  s.push_back("CREATE INDEX distributions_run ON distributions (run_id, mode, series)");
  std::string series;
  for (size_t i = 0; i < kSeriesCount; ++i)
    series += fmt::format(",\n  {}_ns BIGINT", to_string(static_cast<Series>(i)));
  s.push_back(fmt::format(R"(CREATE TABLE frames (
  run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  mode TEXT NOT NULL,
  block_kind TEXT NOT NULL,
  block_index BIGINT NOT NULL,
  frame_id BIGINT NOT NULL{}))",
                          series));
  s.push_back("CREATE INDEX frames_run ON frames (run_id)");
  s.push_back(scores_table_statement());
  return s;
}

std::string scores_table_statement() {
  // The components are the run's `distributions` rows (scope total,
  // core_latency p50_us and p99_us of baseline and loaded): not copied here.
  return R"(CREATE TABLE scores (
  run_id BIGINT NOT NULL PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  formula TEXT NOT NULL,
  value DOUBLE PRECISION,
  ci95_low DOUBLE PRECISION,
  ci95_high DOUBLE PRECISION,
  unavailable_reason TEXT))";
}

}  // namespace latlab::store
