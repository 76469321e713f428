// `latlab compare A... --vs B...`: per mode, stage and observer, p50 and p99
// of each side, the shift B - A with its confidence interval, and a call
// (docs/compare.md). The unit of the test is the RUN when each side has at
// least kMinRunsPerSide runs (each run's total over every measured frame: run
// to run noise is in the test, block size does not matter), else the BLOCK
// (each measured block's statistic: run-to-run noise is not in the test, and
// blocks must be alike in size). Calls are family-wise over the comparison's
// rows (Holm). Private to src/report and the CLI.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "latlab/bench/run_result.hpp"
#include "latlab/bench/score_result.hpp"
#include "latlab/result.hpp"
#include "report/compare_stats.hpp"

namespace latlab {

// Runs a side needs for the run to be the unit of the test.
inline constexpr size_t kMinRunsPerSide = 3;

struct CompareOptions {
  // Family-wise level: the chance that an A/A comparison calls any row is at
  // most alpha (Holm over the tested rows); each row's interval is at 1-alpha.
  // 0.01: at most 1 false call in 40 A/A comparisons asks for 1/40 even of an
  // exact test, and the test over 3 runs is an approximation (docs/compare.md).
  double alpha = 0.01;
  double min_effect = 0.05;    // smallest relative shift (of A's reference) that is flagged
  double min_effect_us = 1.0;  // smallest absolute shift that is flagged, us
  // Regressions at least this large (a row called `regression` whose change
  // is >= this %, or whose A reference is <= 0) make `fails` true; nullopt: never.
  std::optional<double> fail_on_regression_pct;
  // Compare runs whose settings differ (mode asked, interval range, workload,
  // CPU step cost): the differences become notes instead of an error. Never
  // lets blocks of different sizes be tested against each other.
  bool allow_different_settings = false;
};

enum class CompareUnit {
  runs,    // each run's total statistic; Welch's t test
  blocks,  // each block's statistic; Mann-Whitney U, Hodges-Lehmann
};
const char* to_string(CompareUnit u);

enum class ChangeCall {
  no_change,       // not significant, or smaller than the minimum effect
  improvement,     // significant, at least the minimum effect, B faster
  regression,      // significant, at least the minimum effect, B slower
  too_few_blocks,  // unit blocks: the block counts cannot reach alpha (min_p_value >= alpha)
  too_few_runs,    // unit runs: a side has fewer than kMinRunsPerSide runs with a value
  no_data,         // a side has no block or run with a measured value
};
const char* to_string(ChangeCall c);

struct CompareRow {
  std::string mode;       // baseline, loaded
  std::string series;     // e.g. gpu_execution, core_latency
  std::string role;       // "stage" or "observer"
  std::string statistic;  // "p50" or "p99"
  // The side's statistic, us: its run's total over every measured frame;
  // with several runs the mean of their totals (null: no run has data).
  std::optional<double> a_total, b_total;
  std::vector<double> a_runs, b_runs;      // each run's total statistic (runs with data), us
  std::vector<double> a_blocks, b_blocks;  // each measured block's statistic, all runs, us
  ShiftTest block_test;                    // unit blocks: B vs A over the blocks
  MeanShiftTest run_test;                  // unit runs: B vs A over the runs
  // The unit's test, whichever it is: shift B - A (us), its 1-alpha interval,
  // p and p adjusted over the family (Holm; 1 when the row is not tested).
  double shift = 0;
  std::optional<double> ci_low, ci_high;
  double p_value = 1, p_adjusted = 1;
  // What `relative` divides by: A's median block value (blocks) or A's mean
  // run value (runs).
  std::optional<double> a_reference;
  // shift / a_reference; null when that is <= 0 (a relative change of a zero
  // or negative time means nothing): such a row is called on p and
  // min_effect_us alone, and a regression fails any gate.
  std::optional<double> relative;
  ChangeCall call = ChangeCall::no_data;
  bool fails = false;  // a regression beyond --fail-on-regression
};

struct Comparison {
  std::vector<std::string> a_names, b_names;  // the runs of each side, as named
  CompareOptions options;
  CompareUnit unit = CompareUnit::blocks;
  size_t tested_rows = 0;          // the rows Holm's adjustment runs over (the family)
  std::vector<std::string> notes;  // what differs between the runs, modes not compared
  std::vector<CompareRow> rows;
  size_t changes = 0;  // rows called improvement or regression
  bool fails = false;  // any row fails
  // Each run's latency score as its result holds it (nullopt: none), in
  // a_names / b_names order: shown beside the rows, never tested. Empty
  // when captures are compared (they have none).
  std::vector<std::optional<LatencyScore>> a_scores, b_scores;
  bool settings_differ = false;  // compared despite different settings
};

// Whether the row's unit test ran (it has a p value): not no_data,
// too_few_blocks or too_few_runs.
bool tested(const CompareRow& r);

// The label compare gives run `index` (0-based) of a side of `runs` runs:
// the side's letter alone ("A") for one run, else A1, A2, ...
std::string run_label(char side, size_t index, size_t runs);

// One side of a comparison: its runs (not owned; alive during the call) and
// their names (a path, "run 12"). A several-device run is compared by its
// top-level device (select_device_section picks another).
struct CompareSide {
  std::vector<const RunResult*> runs;
  std::vector<std::string> names;
};

// Compares side B against side A: latency runs (their modes' stages and
// observers), or captures (their per-frame figures, as the stages of one
// mode "capture"; they have no blocks, so the unit is the capture). An error
// (with the reason) when a run is neither, the runs are not all of one kind,
// a side is empty or holds the same run twice, the runs share no available
// mode, their settings differ (unless allow_different_settings; a capture's
// setting is its program), or the unit is blocks and the blocks of a mode
// differ in size between runs.
Result<Comparison> compare_sides(const CompareSide& a, const CompareSide& b,
                                 const CompareOptions& options);

// One run a side.
Result<Comparison> compare_results(const RunResult& a, const RunResult& b, std::string a_name,
                                   std::string b_name, const CompareOptions& options);

// The readable table.
std::string format_comparison(const Comparison& c);

// The comparison as a JSON document (docs/compare.md).
std::string comparison_json(const Comparison& c);

}  // namespace latlab
