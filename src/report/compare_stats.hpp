// Two-sample statistics for `latlab compare` over independent samples (block
// statistics, never frames): the Mann-Whitney U test (two-sided), the
// Hodges-Lehmann shift estimate and its distribution-free confidence interval
// (docs/compare.md). Pure functions; private to src/report.
#pragma once

#include <optional>
#include <span>

namespace latlab {

struct ShiftTest {
  size_t n_a = 0, n_b = 0;
  double u = 0;        // U of side B: pairs (a, b) with b > a, ties count 1/2
  double p_value = 1;  // two-sided; 1 when either side is empty
  bool exact = false;  // exact permutation distribution (no ties, n_a, n_b <= 50), else normal
  // The smallest two-sided p-value n_a and n_b blocks can give (exact): a
  // test at alpha below it can never call a change.
  double min_p_value = 1;
  double shift = 0;  // Hodges-Lehmann: median of all b - a
  // 1 - alpha interval of the shift; nullopt when the samples are too small
  // for that confidence.
  std::optional<double> ci_low, ci_high;
};

// Tests B against A at level `alpha` (for the interval). Samples may be in
// any order; NaNs are not allowed (callers pass measured values only).
ShiftTest shift_test(std::span<const double> a, std::span<const double> b, double alpha);

// Median (type 7) of `v`; nullopt for an empty span.
std::optional<double> median_of(std::span<const double> v);

}  // namespace latlab
