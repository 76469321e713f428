// The store's tables (schema version kStoreSchemaVersion), written once for
// both SQL dialects. Private to src/report/store.
#pragma once

#include <string>
#include <vector>

namespace latlab::store {

// CREATE statements in order, for `dialect` ("sqlite" or "postgresql").
std::vector<std::string> schema_statements(const std::string& dialect);

// CREATE TABLE scores (schema version 3; the same in both dialects): one row
// per stored run whose result has a `score`.
std::string scores_table_statement();

// Distribution columns of `distributions`, after `count` and `missing`.
inline constexpr const char* kStatColumns[] = {"mean_us", "stddev_us", "min_us",  "p50_us",
                                               "p90_us",  "p95_us",    "p99_us",  "p99_9_us",
                                               "max_us"};

}  // namespace latlab::store
