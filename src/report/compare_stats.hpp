// Two-sample statistics for `latlab compare` over independent samples (block
// or run statistics, never frames): the Mann-Whitney U test (two-sided), the
// Hodges-Lehmann shift estimate and its distribution-free confidence interval;
// Welch's t test with its interval of the difference of means; Holm's
// family-wise adjustment of p-values (docs/compare.md). Pure functions;
// private to src/report.
#pragma once

#include <optional>
#include <span>
#include <vector>

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

// Welch's two-sided t test of mean(B) - mean(A), for a few samples a side
// (runs) whose spread is unknown and may differ between the sides.
struct MeanShiftTest {
  size_t n_a = 0, n_b = 0;
  double mean_a = 0, mean_b = 0;
  double shift = 0;    // mean_b - mean_a
  double se = 0;       // standard error of the shift: sqrt(var_a / n_a + var_b / n_b)
  double df = 0;       // Welch-Satterthwaite degrees of freedom (0 when se is 0)
  double t = 0;        // shift / se (0 when se is 0)
  double p_value = 1;  // two-sided; with se 0: 1 if the means are equal, else 0
  // shift -+ t(1 - alpha/2, df) * se; [shift, shift] when se is 0; nullopt
  // when a side has fewer than 2 samples.
  std::optional<double> ci_low, ci_high;
};

// Tests B against A at level `alpha` (for the interval). Needs at least 2
// samples a side (else p_value 1 and no interval); no NaNs.
MeanShiftTest welch_test(std::span<const double> a, std::span<const double> b, double alpha);

// Two-sided p of Student's t distribution with `df` > 0 degrees of freedom:
// P(|T| >= |t|).
double student_t_two_sided_p(double t, double df);

// The t with student_t_two_sided_p(t, df) == p, for p in (0, 1].
double student_t_two_sided_quantile(double p, double df);

// Holm's step-down adjustment: the adjusted p-value of each of `p` (same
// order), so that calling every hypothesis with adjusted p < alpha keeps the
// chance of any false call at most alpha, whatever the dependence.
std::vector<double> holm_adjust(std::span<const double> p);

// Median (type 7) of `v`; nullopt for an empty span.
std::optional<double> median_of(std::span<const double> v);

// Arithmetic mean of `v`; 0 for an empty span.
double mean_of(std::span<const double> v);

}  // namespace latlab
