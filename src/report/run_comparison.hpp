// `latlab compare A B`: per mode, stage and observer, p50 and p99 of each
// side, the shift B - A over BLOCK statistics (blocks are the independent
// samples; frames within a block are correlated) with its confidence
// interval, and a call (docs/compare.md). Private to src/report and the CLI.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "latlab/result.hpp"
#include "report/compare_stats.hpp"
#include "report/result_reader.hpp"

namespace latlab {

struct CompareOptions {
  double alpha = 0.05;         // two-sided level of the Mann-Whitney test and 1-alpha interval
  double min_effect = 0.05;    // smallest relative shift (of A's block median) that is flagged
  double min_effect_us = 1.0;  // smallest absolute shift that is flagged, us
  // Regressions (B slower) at least this large, significant, make
  // `fails` true; nullopt: never.
  std::optional<double> fail_on_regression_pct;
};

enum class ChangeCall {
  no_change,       // not significant, or smaller than the minimum effect
  improvement,     // significant, at least the minimum effect, B faster
  regression,      // significant, at least the minimum effect, B slower
  too_few_blocks,  // the block counts cannot reach alpha (min_p_value > alpha)
  no_data,         // a side has no block with a measured value
};
const char* to_string(ChangeCall c);

struct CompareRow {
  std::string mode;       // baseline, loaded
  std::string series;     // e.g. gpu_execution, core_latency
  std::string role;       // "stage" or "observer"
  std::string statistic;  // "p50" or "p99": of every block, and of the total
  std::optional<double> a_total, b_total;  // over all measured frames, us (null: none)
  std::vector<double> a_blocks, b_blocks;  // the statistic of each block with data, us
  ShiftTest test;                          // B vs A over the block statistics
  std::optional<double> a_block_median;    // the reference of `relative`
  std::optional<double> relative;          // shift / a_block_median (null when that is <= 0)
  ChangeCall call = ChangeCall::no_data;
  bool fails = false;  // a regression beyond --fail-on-regression
};

struct Comparison {
  std::string a_name, b_name;
  CompareOptions options;
  std::vector<std::string> notes;  // what differs between the runs, modes only one side has
  std::vector<CompareRow> rows;
  size_t changes = 0;  // rows called improvement or regression
  bool fails = false;  // any row fails
};

// Compares B against A. An error when either is not a latency run or they
// share no available mode.
Result<Comparison> compare_results(const ReadResult& a, const ReadResult& b, std::string a_name,
                                   std::string b_name, const CompareOptions& options);

// The readable table.
std::string format_comparison(const Comparison& c);

// The comparison as a JSON document (docs/compare.md).
std::string comparison_json(const Comparison& c);

}  // namespace latlab
