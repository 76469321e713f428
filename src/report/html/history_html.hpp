// The history page of `latlab history --report FILE`: one self-contained
// HTML file (uPlot, the charts' data and CSS inline, no request) with the key figures
// of stored runs across time: per mode and observer, p50 and p99 of the
// run's total, one small chart per figure with the runs in time order on the
// x axis (each point's run, time, machine, version and settings on hover),
// and the same figures in a table. A run without a figure leaves a gap,
// never a 0. Private to latlab (apps/latlab/history.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "latlab/bench/run_result.hpp"

namespace latlab {

// One stored run: its store id, fingerprint and result (as read back; a
// several-device run shows its top-level device).
struct HistoryRun {
  int64_t id = 0;
  std::string stored_utc;
  std::string fingerprint;  // machine, driver and device (store.md)
  RunResult result;
};

// The page for `runs` (any order: shown by created time, then id); `store`
// names the store they came from.
std::string render_history_html(std::span<const HistoryRun> runs, std::string_view store);

}  // namespace latlab
