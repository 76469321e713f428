// `latlab compare` (run_comparison.hpp): the rows, each side's samples,
// the unit's test per row and the family-wise call.
#include "report/run_comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/compare_parts.hpp"

namespace latlab {

using compare::NamedRun;

namespace {

double stat_of(const Distribution& d, const std::string& statistic) {
  return statistic == "p50" ? d.p50 : d.p99;
}

// `load_calibration.source` of the run: whether Loaded's complexity was
// calibrated or given ("" when Loaded was not asked for).
std::string load_source_of(const RunResult& r) {
  if (r.loaded.calibration) return "calibrated";
  return r.loaded.given_complexity > 0 ? "given" : "";
}

std::optional<double> total_stat(const RunResult& r, const std::string& mode,
                                 const std::string& series, const std::string& statistic) {
  const Distribution* d = compare::total_of(r, mode, series);
  if (d == nullptr || d->empty()) return std::nullopt;
  return stat_of(*d, statistic);
}

// Each run's total statistic and each block's statistic of a side; blocks cut
// short (a partial run's last block, more than a frame below the run's block
// size) are left out.
void side_samples(const std::vector<NamedRun>& side, const std::string& mode,
                  const std::string& series, const std::string& statistic,
                  std::vector<double>& runs, std::vector<double>& blocks) {
  for (const NamedRun& n : side) {
    if (const std::optional<double> t = total_stat(*n.r, mode, series, statistic))
      runs.push_back(*t);
    const uint64_t size = compare::block_size(*n.r, mode);
    for (const compare::BlockView& b : compare::measured_blocks(*n.r, mode)) {
      if (b.frames_run + 1 < size) continue;
      const Distribution* d = compare::block_series(b, series);
      if (d != nullptr && !d->empty()) blocks.push_back(stat_of(*d, statistic));
    }
  }
}

size_t cut_blocks(const std::vector<NamedRun>& all, const std::string& mode) {
  size_t n = 0;
  for (const NamedRun& r : all) {
    const uint64_t size = compare::block_size(*r.r, mode);
    for (const compare::BlockView& b : compare::measured_blocks(*r.r, mode))
      n += b.frames_run + 1 < size ? 1 : 0;
  }
  return n;
}

// The unit's test of a row; its call is settled after Holm's adjustment.
void test_row(CompareRow& r, CompareUnit unit, const CompareOptions& o) {
  if (!r.a_runs.empty()) r.a_total = mean_of(r.a_runs);
  if (!r.b_runs.empty()) r.b_total = mean_of(r.b_runs);
  if (unit == CompareUnit::runs) {
    if (r.a_runs.empty() || r.b_runs.empty()) {
      r.call = ChangeCall::no_data;
      return;
    }
    r.run_test = welch_test(r.a_runs, r.b_runs, o.alpha);
    r.shift = r.run_test.shift;
    r.a_reference = r.run_test.mean_a;
    if (r.a_runs.size() < kMinRunsPerSide || r.b_runs.size() < kMinRunsPerSide) {
      r.call = ChangeCall::too_few_runs;
      return;
    }
    r.ci_low = r.run_test.ci_low;
    r.ci_high = r.run_test.ci_high;
    r.p_value = r.run_test.p_value;
  } else {
    if (r.a_blocks.empty() || r.b_blocks.empty()) {
      r.call = ChangeCall::no_data;
      return;
    }
    r.block_test = shift_test(r.a_blocks, r.b_blocks, o.alpha);
    r.shift = r.block_test.shift;
    r.a_reference = median_of(r.a_blocks);
    r.ci_low = r.block_test.ci_low;
    r.ci_high = r.block_test.ci_high;
    r.p_value = r.block_test.p_value;
    if (r.block_test.min_p_value >= o.alpha) {
      r.call = ChangeCall::too_few_blocks;
      return;
    }
  }
  r.call = ChangeCall::no_change;  // tested; judged after the adjustment
}

void judge(CompareRow& r, const CompareOptions& o) {
  if (r.a_reference && *r.a_reference > 0) r.relative = r.shift / *r.a_reference;
  if (!tested(r)) return;
  const bool significant = r.p_adjusted < o.alpha;
  const bool big_abs = std::abs(r.shift) >= o.min_effect_us;
  // No relative change of a reference <= 0: the absolute minimum decides.
  const bool big_rel = !r.relative || std::abs(*r.relative) >= o.min_effect;
  if (significant && big_abs && big_rel) {
    r.call = r.shift > 0 ? ChangeCall::regression : ChangeCall::improvement;
  }
  if (o.fail_on_regression_pct && r.call == ChangeCall::regression &&
      (!r.relative || *r.relative * 100.0 >= *o.fail_on_regression_pct)) {
    r.fails = true;
  }
}

std::vector<NamedRun> named(const CompareSide& s, char side) {
  std::vector<NamedRun> out;
  for (size_t i = 0; i < s.runs.size(); ++i) {
    std::string label = run_label(side, i, s.runs.size());
    const RunResult& one = s.runs[i]->top_level();
    out.push_back(
        NamedRun{&one, i < s.names.size() ? s.names[i] : label, label, load_source_of(one)});
  }
  return out;
}

// Every run of both sides is of one kind.
Result<void> check_kinds(const std::vector<NamedRun>& all) {
  for (const NamedRun& n : all) {
    if (n.r->kind() != all.front().r->kind()) {
      return make_error(fmt::format("{} is a {} and {} a {}: compare needs runs of one kind",
                                    compare::run_label(all.front()), all.front().r->kind(),
                                    compare::run_label(n), n.r->kind()));
    }
  }
  return {};
}

// The modes every run has available, in the order first seen; a note for each other.
std::vector<std::string> common_modes(const std::vector<NamedRun>& all,
                                      std::vector<std::string>& notes) {
  std::vector<std::string> seen, modes;
  for (const NamedRun& n : all) {
    for (const std::string& m : compare::mode_names(*n.r)) {
      if (std::find(seen.begin(), seen.end(), m) == seen.end()) seen.push_back(m);
    }
  }
  for (const std::string& name : seen) {
    const bool everywhere = std::all_of(all.begin(), all.end(), [&](const NamedRun& n) {
      return compare::mode_available(*n.r, name);
    });
    if (everywhere) {
      modes.push_back(name);
    } else {
      notes.push_back(fmt::format("mode {} is not available in every run: not compared", name));
    }
  }
  return modes;
}

// The unit of the test and what it leaves out, as a note.
CompareUnit unit_of(size_t na, size_t nb, bool captures, std::vector<std::string>& notes) {
  if (captures) {
    if (na < kMinRunsPerSide || nb < kMinRunsPerSide) {
      notes.push_back(fmt::format(
          "captures have no blocks: the unit is the capture, and with fewer than {} a side ({} "
          "in A, {} in B) no row is tested (each side's p50 and p99 and the shift only)",
          kMinRunsPerSide, na, nb));
    }
    return CompareUnit::runs;
  }
  if (na >= kMinRunsPerSide && nb >= kMinRunsPerSide) return CompareUnit::runs;
  notes.push_back(fmt::format(
      "run-to-run noise is not in this test ({} run(s) in A, {} in B; the unit is the block): an "
      "effect tied to one process or to when it ran (machine load, CPU placement, clocks) "
      "moves all of its blocks together and is called a change. Compare at least {} runs a "
      "side for a test over runs, or set --min-effect-pct from a measured A/A spread "
      "(docs/compare.md)",
      na, nb, kMinRunsPerSide));
  return CompareUnit::blocks;
}

// A note when the runs measured different numbers of frames of `mode`.
void note_frames(const std::string& mode, const std::vector<NamedRun>& all,
                 std::vector<std::string>& notes) {
  std::vector<uint64_t> frames;
  for (const NamedRun& n : all) frames.push_back(compare::measured_frames(*n.r, mode));
  const auto [fewest, most] = std::minmax_element(frames.begin(), frames.end());
  if (*fewest == *most) return;
  notes.push_back(fmt::format(
      "{}: the runs measured different numbers of frames ({} to {}): a run's p99 over fewer "
      "frames is noisier",
      mode, *fewest, *most));
}

// The checks and rows of one mode.
Result<void> compare_mode(const std::string& mode, const std::vector<NamedRun>& a,
                          const std::vector<NamedRun>& b, const std::vector<NamedRun>& all,
                          Comparison& c) {
  const size_t notes_before = c.notes.size();  // check_design notes only what differs
  if (Result<void> ok = compare::check_design(mode, all, c.options, c.notes); !ok) return ok;
  c.settings_differ = c.settings_differ || c.notes.size() > notes_before;
  if (Result<void> ok = compare::check_block_sizes(mode, all, c.unit, c.notes); !ok) return ok;
  if (c.unit == CompareUnit::blocks) {
    if (const size_t cut = cut_blocks(all, mode); cut > 0) {
      c.notes.push_back(fmt::format(
          "{}: {} block(s) cut short (a partial run's last block) are left out", mode, cut));
    }
  }
  note_frames(mode, all, c.notes);
  for (const auto& [series, role] : compare::compared_series(*all.front().r)) {
    for (const char* statistic : {"p50", "p99"}) {
      CompareRow r;
      r.mode = mode;
      r.series = series;
      r.role = role;
      r.statistic = statistic;
      side_samples(a, mode, series, statistic, r.a_runs, r.a_blocks);
      side_samples(b, mode, series, statistic, r.b_runs, r.b_blocks);
      test_row(r, c.unit, c.options);
      c.rows.push_back(std::move(r));
    }
  }
  return {};
}

// Holm over the tested rows: an A/A comparison calls any row with a chance
// of at most alpha, however many rows there are.
void call_rows(Comparison& c) {
  std::vector<double> p;
  for (const CompareRow& r : c.rows) {
    if (tested(r)) p.push_back(r.p_value);
  }
  c.tested_rows = p.size();
  const std::vector<double> adjusted = holm_adjust(p);
  double smallest_reachable = 1;
  for (size_t i = 0, k = 0; i < c.rows.size(); ++i) {
    CompareRow& r = c.rows[i];
    if (tested(r)) {
      r.p_adjusted = adjusted[k++];
      if (c.unit == CompareUnit::blocks)
        smallest_reachable = std::min(smallest_reachable, r.block_test.min_p_value);
    }
    judge(r, c.options);
    if (r.call == ChangeCall::improvement || r.call == ChangeCall::regression) ++c.changes;
    c.fails = c.fails || r.fails;
  }
  if (c.unit == CompareUnit::blocks && c.tested_rows > 0 &&
      smallest_reachable * static_cast<double>(c.tested_rows) >= c.options.alpha) {
    c.notes.push_back(fmt::format(
        "no row can be called: with these block counts the smallest p is {:.3g}, and the first "
        "of {} rows is called only below alpha / {} = {:.3g} (Holm); run more --blocks, or "
        "compare at least {} runs a side",
        smallest_reachable, c.tested_rows, c.tested_rows,
        c.options.alpha / static_cast<double>(c.tested_rows), kMinRunsPerSide));
  }
}

}  // namespace

Result<Comparison> compare_sides(const CompareSide& side_a, const CompareSide& side_b,
                                 const CompareOptions& options) {
  const std::vector<NamedRun> a = named(side_a, 'A'), b = named(side_b, 'B');
  for (const auto& [side, name] : {std::pair{&a, 'A'}, std::pair{&b, 'B'}}) {
    if (Result<void> ok = compare::check_runs(*side, name); !ok) return ok.error();
  }
  std::vector<NamedRun> all = a;
  all.insert(all.end(), b.begin(), b.end());
  if (Result<void> ok = check_kinds(all); !ok) return ok.error();
  Comparison c;
  for (const NamedRun& n : a) c.a_names.push_back(n.name);
  for (const NamedRun& n : b) c.b_names.push_back(n.name);
  if (!all.front().r->capture) {  // captures have no latency score
    for (const NamedRun& n : a) c.a_scores.push_back(n.r->score);
    for (const NamedRun& n : b) c.b_scores.push_back(n.r->score);
  }
  c.options = options;
  c.unit = unit_of(a.size(), b.size(), all.front().r->capture.has_value(), c.notes);
  compare::note_differences(a, b, c.notes);
  const std::vector<std::string> modes = common_modes(all, c.notes);
  if (modes.empty()) return make_error("the runs share no available latency mode");
  for (const std::string& mode : modes) {
    if (Result<void> ok = compare_mode(mode, a, b, all, c); !ok) return ok.error();
  }
  call_rows(c);
  return c;
}

Result<Comparison> compare_results(const RunResult& a, const RunResult& b, std::string a_name,
                                   std::string b_name, const CompareOptions& options) {
  return compare_sides(CompareSide{{&a}, {std::move(a_name)}},
                       CompareSide{{&b}, {std::move(b_name)}}, options);
}

}  // namespace latlab
