// Distributions over samples: count, missing, mean, stddev, min,
// percentiles, max. Percentiles interpolate linearly between the closest
// ranks (numpy's default, "type 7"), computed over every sample, no sketch,
// except where a Distribution says otherwise (percentile_resolution: a
// capture's figures past their exact limit, src/core/streaming_distribution.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace latlab {

struct Distribution {
  uint64_t count = 0;    // samples that went in
  uint64_t missing = 0;  // samples that could not be measured (never zeros)
  double mean = 0, min = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, p999 = 0, max = 0;
  // Sample standard deviation; nullopt with fewer than two samples (one
  // sample has none: never written as 0).
  std::optional<double> stddev;
  // nullopt: the percentiles are exact. Else they come from a histogram and
  // each lies within this fraction of its exact value (count, missing,
  // mean, stddev, min and max stay exact).
  std::optional<double> percentile_resolution;
  bool empty() const { return count == 0; }
  bool operator==(const Distribution&) const = default;
};

// Percentile q in [0,1] of already sorted values (type 7); nullopt when
// `sorted` is empty (there is no such value, and 0 would pass for one).
std::optional<double> percentile_sorted(std::span<const double> sorted, double q);

// Standard error of the median of `samples` (any order), from their median
// absolute deviation: 1.2533 * 1.4826 * MAD / sqrt(n) (normal noise; robust
// to the odd outlier, unlike the stddev). nullopt when `samples` is empty.
std::optional<double> median_standard_error(std::span<const double> samples, double median);

// Summarises `samples` (any order; copied and sorted). `missing` is carried.
// Statistics of an empty set stay 0 with count 0: check empty().
Distribution summarize(std::span<const double> samples, uint64_t missing = 0);

// Same, sorting `samples` in place (no copy).
Distribution summarize_in_place(std::vector<double>& samples, uint64_t missing = 0);

}  // namespace latlab
