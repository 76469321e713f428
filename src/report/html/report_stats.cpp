#include "report/html/report_stats.hpp"

#include <algorithm>
#include <cmath>

#include "latlab/stats.hpp"

namespace latlab {

Histogram make_histogram(std::span<const std::vector<double>> sets, uint32_t bins,
                         double clip_quantile) {
  Histogram h;
  h.counts.assign(sets.size(), std::vector<uint64_t>(bins, 0));
  h.above.assign(sets.size(), 0);
  h.below.assign(sets.size(), 0);
  bool any = false;
  for (const auto& s : sets) {
    if (s.empty()) continue;
    std::vector<double> sorted = s;
    std::sort(sorted.begin(), sorted.end());
    const double q1 = *percentile_sorted(sorted, 0.25);  // not empty
    const double q3 = *percentile_sorted(sorted, 0.75);
    const double iqr = q3 - q1;
    const double top =
        std::min(*percentile_sorted(sorted, clip_quantile), q3 + kHistogramFence * iqr);
    const double bottom = std::max(sorted.front(), q1 - kHistogramFence * iqr);
    h.lo = any ? std::min(h.lo, bottom) : bottom;
    h.hi = any ? std::max(h.hi, top) : top;
    any = true;
  }
  if (!any || bins == 0) {
    h.counts.assign(sets.size(), {});
    return h;
  }
  if (!(h.hi > h.lo)) h.hi = h.lo + 1e-3;  // one value: one narrow bin holds it
  const double width = (h.hi - h.lo) / bins;
  for (uint32_t i = 0; i <= bins; ++i) h.edges.push_back(h.lo + width * i);
  for (size_t k = 0; k < sets.size(); ++k) {
    for (double v : sets[k]) {
      if (v < h.lo) {
        ++h.below[k];
      } else if (v > h.hi) {
        ++h.above[k];
      } else {
        const auto bin =
            static_cast<size_t>(std::min<double>(bins - 1, std::floor((v - h.lo) / width)));
        ++h.counts[k][bin];
      }
    }
  }
  return h;
}

std::vector<double> percentile_levels() {
  std::vector<double> l;
  for (int i = 0; i < 90; ++i) l.push_back(i);
  for (int i = 0; i < 36; ++i) l.push_back(90 + 0.25 * i);
  for (int i = 0; i < 18; ++i) l.push_back(99 + 0.05 * i);
  for (int i = 0; i <= 10; ++i) l.push_back(99.9 + 0.01 * i);
  l.back() = 100;
  return l;
}

std::vector<std::optional<double>> percentile_curve(std::vector<double> samples,
                                                    std::span<const double> levels_percent) {
  std::vector<std::optional<double>> out(levels_percent.size());
  if (samples.empty()) return out;
  std::sort(samples.begin(), samples.end());
  for (size_t i = 0; i < levels_percent.size(); ++i)
    out[i] = percentile_sorted(samples, levels_percent[i] / 100.0);
  return out;
}

std::optional<LineFit> fit_line(std::span<const double> x, std::span<const double> y) {
  const size_t n = std::min(x.size(), y.size());
  if (n < 2) return std::nullopt;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  if (!(sxx > 0)) return std::nullopt;
  LineFit f;
  f.b = sxy / sxx;
  f.a = my - f.b * mx;
  for (size_t i = 0; i < n; ++i) f.residuals.push_back(y[i] - (f.a + f.b * x[i]));
  return f;
}

}  // namespace latlab
