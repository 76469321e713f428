#include "latlab/stats.hpp"

#include <algorithm>
#include <cmath>

namespace latlab {

std::optional<double> percentile_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) return std::nullopt;
  q = std::clamp(q, 0.0, 1.0);
  const double rank = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Distribution summarize_in_place(std::vector<double>& samples, uint64_t missing) {
  Distribution d;
  d.missing = missing;
  d.count = samples.size();
  if (samples.empty()) return d;
  std::sort(samples.begin(), samples.end());
  // Welford: stable for long runs of similar values.
  double mean = 0, m2 = 0;
  uint64_t n = 0;
  for (double x : samples) {
    ++n;
    const double delta = x - mean;
    mean += delta / static_cast<double>(n);
    m2 += delta * (x - mean);
  }
  d.mean = mean;
  if (n > 1) d.stddev = std::sqrt(m2 / static_cast<double>(n - 1));
  d.min = samples.front();
  d.max = samples.back();
  // Not empty here: every percentile exists.
  d.p50 = *percentile_sorted(samples, 0.50);
  d.p90 = *percentile_sorted(samples, 0.90);
  d.p95 = *percentile_sorted(samples, 0.95);
  d.p99 = *percentile_sorted(samples, 0.99);
  d.p999 = *percentile_sorted(samples, 0.999);
  return d;
}

Distribution summarize(std::span<const double> samples, uint64_t missing) {
  std::vector<double> copy(samples.begin(), samples.end());
  return summarize_in_place(copy, missing);
}

std::optional<double> median_standard_error(std::span<const double> samples, double median) {
  if (samples.empty()) return std::nullopt;
  std::vector<double> deviation;
  deviation.reserve(samples.size());
  for (double v : samples) deviation.push_back(std::fabs(v - median));
  std::sort(deviation.begin(), deviation.end());
  return 1.2533 * 1.4826 * *percentile_sorted(deviation, 0.5) /
         std::sqrt(static_cast<double>(samples.size()));
}

}  // namespace latlab
