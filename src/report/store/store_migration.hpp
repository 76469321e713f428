// Upgrading an older results store in place (private to src/report/store).
#pragma once

#include "latlab/result.hpp"

namespace latlab::store {

class SqlConnection;

// Schema version 1 -> 2: version 2 added the poll observer's series to
// `frames` (poll_latency_ns, gpu_end_to_poll_wake_ns, poll_cpu_ns). Adds
// every series column `frames` lacks (NULL in the rows already stored: those
// runs had no poll observer, which is missing data, not 0) and records
// version 2. Runs inside the caller's transaction: on an error the caller
// rolls back and nothing has changed.
Result<void> migrate_v1_to_v2(SqlConnection& db);

// Schema version 2 -> 3: version 3 added the table `scores` (the latency
// score of each run, docs/score.md). Creates it empty (runs stored before
// have no score row: their score was never computed) and records version 3.
// In the caller's transaction, like migrate_v1_to_v2.
Result<void> migrate_v2_to_v3(SqlConnection& db);

}  // namespace latlab::store
