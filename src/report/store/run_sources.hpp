// The runs a command names on its command line (compare, docs/compare.md):
// a result file, a run id of the store, or a range of ids "N-M" (both ends
// included), read into typed results.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "latlab/bench/run_result.hpp"
#include "latlab/result.hpp"
#include "report/store/results_store.hpp"

namespace latlab {

// Largest id range one argument may name (a typo such as 1-99999 is refused,
// not loaded).
inline constexpr int64_t kMaxRunRange = 1000;

struct RunSource {
  std::string file;              // set: a result file
  int64_t first = 0, last = -1;  // else ids first..last of the store
  size_t runs() const { return file.empty() ? static_cast<size_t>(last - first + 1) : 1; }
};

// Each argument as a source, reading nothing (an existing file is a file).
// Error, naming the argument, for one that is none of the three.
Result<std::vector<RunSource>> parse_run_sources(const std::vector<std::string>& args);

struct LoadedRuns {
  std::vector<RunResult> runs;
  std::vector<std::string> names;  // the file, or "run ID"
};

struct RunLoading {
  std::string store_path;  // the store of the ids ("" = the default store)
  // A several-device run: the device section to take (< 0: each run's
  // top-level device, and `note` says so when it holds several).
  int section = -1;
  std::function<void(const std::string&)> note;
};

// Reads every run of `sources` (per-frame series left out); the store is
// opened on first need and kept in `store` for the next call.
Result<LoadedRuns> load_runs(const std::vector<RunSource>& sources, const RunLoading& how,
                             std::unique_ptr<store::ResultsStore>& store);

}  // namespace latlab
