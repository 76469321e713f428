// What the HTML report draws, computed in C++ from the result's numbers (the
// page's script only plots them). Private to latlab.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace latlab {

// Equal-width bins over [lo, hi] shared by several sample sets, so they can
// be drawn on one axis. Samples above hi are counted in `above`, below lo in
// `below` (the page says how many and up to where).
struct Histogram {
  double lo = 0, hi = 0;                      // bin range (same unit as the samples)
  std::vector<double> edges;                  // bins + 1 edges, ascending
  std::vector<std::vector<uint64_t>> counts;  // per sample set, per bin
  std::vector<uint64_t> above, below;         // per sample set
};

// How far out a value lies before the bins leave it out: beyond the
// quartiles by this many interquartile ranges (Tukey's "far out" is 3).
inline constexpr double kHistogramFence = 3;

// Bins `sets` (each any order) into `bins` (>= 1) equal bins. Per set the
// range runs from its lowest sample, or its lower fence (p25 - 3 IQR) when
// that is higher, to its `clip_quantile` (in (0, 1]; 1 = the maximum), or
// its upper fence (p75 + 3 IQR) when that is lower: so a few outliers (a
// p99 far above the rest) do not squeeze every other frame into one bin;
// they are counted in above/below. The bins cover every set's range. Empty
// sets give zero counts; no sample at all gives no edges.
Histogram make_histogram(std::span<const std::vector<double>> sets, uint32_t bins,
                         double clip_quantile);

// The quantile levels a percentile curve is drawn at: dense in the tail
// (0..90 by 1, then 90..99 by 0.25, 99..99.9 by 0.05, 99.9..100 by 0.01), in
// percent.
std::vector<double> percentile_levels();

// The values of `samples` (any order) at each of `levels_percent` (type 7,
// like every distribution in the result); empty samples give nullopt.
std::vector<std::optional<double>> percentile_curve(std::vector<double> samples,
                                                    std::span<const double> levels_percent);

// Least-squares line y = a + b * x and each point's residual y - (a + b x).
// Fewer than two points (or all x equal) give no fit.
struct LineFit {
  double a = 0, b = 0;
  std::vector<double> residuals;
};
std::optional<LineFit> fit_line(std::span<const double> x, std::span<const double> y);

}  // namespace latlab
