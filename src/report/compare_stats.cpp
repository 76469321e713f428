#include "report/compare_stats.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "latlab/stats.hpp"

namespace latlab {
namespace {

constexpr size_t kExactMax = 50;  // exact U distribution up to 50 samples a side

// Number of arrangements of n A's and m B's with U_B = k, for k in 0..n*m
// (no ties). f(i, j, k) = f(i, j-1, k-i) + f(i-1, j, k): the largest value is
// a B (above all i A's) or an A.
std::vector<double> u_counts(size_t n, size_t m) {
  const size_t kmax = n * m;
  std::vector<std::vector<double>> prev(n + 1, std::vector<double>(kmax + 1, 0.0));
  for (size_t i = 0; i <= n; ++i) prev[i][0] = 1.0;  // j = 0: U = 0, one arrangement
  for (size_t j = 1; j <= m; ++j) {
    std::vector<std::vector<double>> cur(n + 1, std::vector<double>(kmax + 1, 0.0));
    for (size_t i = 0; i <= n; ++i) {
      for (size_t k = 0; k <= kmax; ++k) {
        double v = k >= i ? prev[i][k - i] : 0.0;
        if (i > 0) v += cur[i - 1][k];
        cur[i][k] = v;
      }
    }
    prev = std::move(cur);
  }
  return prev[n];
}

// Standard normal quantile by bisection on erfc (accurate to 1e-12; called
// once per comparison row).
double normal_quantile_upper(double tail) {
  double lo = 0, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    if (0.5 * std::erfc(mid / std::sqrt(2.0)) > tail) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return (lo + hi) / 2;
}

// Continued fraction of the regularized incomplete beta function (modified
// Lentz, as Numerical Recipes' betacf); converges fast for x < (a+1)/(a+b+2).
double beta_continued_fraction(double a, double b, double x) {
  constexpr int kMaxIterations = 500;
  constexpr double kEps = 1e-15, kTiny = 1e-300;
  auto guard = [](double v) { return std::abs(v) < kTiny ? kTiny : v; };
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 / guard(1 - qab * x / qap);
  double h = d;
  for (int m = 1; m <= kMaxIterations; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 / guard(1 + aa * d);
    c = guard(1 + aa / c);
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 / guard(1 + aa * d);
    c = guard(1 + aa / c);
    const double step = d * c;
    h *= step;
    if (std::abs(step - 1) < kEps) break;
  }
  return h;
}

// I_x(a, b), the regularized incomplete beta function.
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  return 1 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

double sample_variance(std::span<const double> v, double mean) {
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return ss / static_cast<double>(v.size() - 1);
}

}  // namespace

double student_t_two_sided_p(double t, double df) {
  if (!std::isfinite(t)) return 0;
  return std::min(1.0, incomplete_beta(df / 2, 0.5, df / (df + t * t)));
}

double student_t_two_sided_quantile(double p, double df) {
  if (p >= 1) return 0;
  double lo = 0, hi = 1;
  while (student_t_two_sided_p(hi, df) > p && hi < 1e300) {
    lo = hi;
    hi *= 2;
  }
  for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    if (student_t_two_sided_p(mid, df) > p) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return (lo + hi) / 2;
}

MeanShiftTest welch_test(std::span<const double> a, std::span<const double> b, double alpha) {
  MeanShiftTest t;
  t.n_a = a.size();
  t.n_b = b.size();
  t.mean_a = mean_of(a);
  t.mean_b = mean_of(b);
  t.shift = t.mean_b - t.mean_a;
  if (t.n_a < 2 || t.n_b < 2) return t;
  const double va = sample_variance(a, t.mean_a) / static_cast<double>(t.n_a);
  const double vb = sample_variance(b, t.mean_b) / static_cast<double>(t.n_b);
  t.se = std::sqrt(va + vb);
  if (t.se == 0) {
    // No spread on either side: the difference is exact.
    t.p_value = t.shift == 0 ? 1 : 0;
    t.ci_low = t.ci_high = t.shift;
    return t;
  }
  t.df = (va + vb) * (va + vb) /
         (va * va / static_cast<double>(t.n_a - 1) + vb * vb / static_cast<double>(t.n_b - 1));
  t.t = t.shift / t.se;
  t.p_value = student_t_two_sided_p(t.t, t.df);
  const double q = student_t_two_sided_quantile(alpha, t.df);
  t.ci_low = t.shift - q * t.se;
  t.ci_high = t.shift + q * t.se;
  return t;
}

std::vector<double> holm_adjust(std::span<const double> p) {
  const size_t k = p.size();
  std::vector<size_t> order(k);
  for (size_t i = 0; i < k; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return p[x] < p[y]; });
  std::vector<double> adjusted(k, 1.0);
  double running = 0;  // adjusted p-values never decrease down the order
  for (size_t r = 0; r < k; ++r) {
    running = std::max(running, std::min(1.0, static_cast<double>(k - r) * p[order[r]]));
    adjusted[order[r]] = running;
  }
  return adjusted;
}

double mean_of(std::span<const double> v) {
  if (v.empty()) return 0;
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

std::optional<double> median_of(std::span<const double> v) {
  std::vector<double> s(v.begin(), v.end());
  std::sort(s.begin(), s.end());
  return percentile_sorted(s, 0.5);
}

namespace {

// The sum of t^3 - t over runs of t equal values among a and b together;
// `ties` is set when there is a run.
double tie_sum(std::span<const double> a, std::span<const double> b, bool& ties) {
  std::vector<double> all(a.begin(), a.end());
  all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  double tie_term = 0;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j] == all[i]) ++j;
    const double run = static_cast<double>(j - i);
    if (run > 1) {
      ties = true;
      tie_term += run * run * run - run;
    }
    i = j;
  }
  return tie_term;
}

// Two-sided p-value of U from the normal approximation, tie-corrected, with
// continuity correction; nm = n * m, total_n = n + m.
double normal_p_value(double u, double nm, double total_n, double tie_term) {
  const double var = nm / 12.0 * ((total_n + 1) - tie_term / (total_n * (total_n - 1)));
  if (var <= 0) return 1;  // every value equal: no evidence of any change
  const double z = std::max(0.0, std::abs(u - nm / 2) - 0.5) / std::sqrt(var);
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

}  // namespace

ShiftTest shift_test(std::span<const double> a, std::span<const double> b, double alpha) {
  ShiftTest t;
  t.n_a = a.size();
  t.n_b = b.size();
  if (a.empty() || b.empty()) return t;
  const size_t n = a.size(), m = b.size();

  std::vector<double> diffs;
  diffs.reserve(n * m);
  bool ties = false;
  double u = 0;
  for (double x : a) {
    for (double y : b) {
      diffs.push_back(y - x);
      if (y > x) {
        u += 1;
      } else if (y == x) {
        u += 0.5;
        ties = true;
      }
    }
  }
  // Ties within a side matter for the normal variance and rule out the exact test.
  const double tie_term = tie_sum(a, b, ties);
  t.u = u;
  std::sort(diffs.begin(), diffs.end());
  t.shift = *percentile_sorted(diffs, 0.5);  // both sides have samples here

  const double nm = static_cast<double>(n * m);
  const double total_n = static_cast<double>(n + m);
  size_t c = 0;  // the interval is [D_(c), D_(nm+1-c)], 1-based, when c >= 1
  if (n <= kExactMax && m <= kExactMax) {
    const std::vector<double> counts = u_counts(n, m);
    double total = 0;
    for (double x : counts) total += x;
    t.min_p_value = std::min(1.0, 2.0 / total);
    std::vector<double> cdf(counts.size());
    double run = 0;
    for (size_t k = 0; k < counts.size(); ++k) cdf[k] = (run += counts[k]) / total;
    while (c < cdf.size() && cdf[c] <= alpha / 2) ++c;  // P(U <= c-1) <= alpha/2
    if (!ties) {
      t.exact = true;
      const double lower = std::min(u, nm - u);  // symmetric distribution
      t.p_value = std::min(1.0, 2.0 * cdf[static_cast<size_t>(lower)]);
    }
  } else {
    t.min_p_value = 0;  // below any alpha one would use at these sizes
    const double sigma = std::sqrt(nm * (total_n + 1) / 12.0);
    const double cc = std::floor(nm / 2 - normal_quantile_upper(alpha / 2) * sigma);
    c = cc > 0 ? static_cast<size_t>(cc) : 0;
  }
  if (!t.exact) t.p_value = normal_p_value(u, nm, total_n, tie_term);
  if (c >= 1 && c <= diffs.size() && diffs.size() + 1 - c >= c) {
    t.ci_low = diffs[c - 1];
    t.ci_high = diffs[diffs.size() - c];
  }
  return t;
}

}  // namespace latlab
