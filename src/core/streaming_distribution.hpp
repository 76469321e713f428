// A Distribution built one sample at a time in bounded memory, for figures
// of captures that may last hours: the samples (int64 ns) are kept while
// there are at most `exact_limit` of them, and summary() is then exactly
// summarize()'s; past the limit they go into a LogLinearHistogram and the
// percentiles are approximate (Distribution::percentile_resolution =
// LogLinearHistogram::kRelativeResolution). count, missing, mean, stddev,
// min and max are exact either way.
//
// Memory: at most exact_limit * 8 bytes, then the histogram's (24 KiB for
// a figure over three powers of two, 880 KiB at most).
//
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/log_linear_histogram.hpp"
#include "latlab/stats.hpp"

namespace latlab {

class StreamingDistribution {
 public:
  // Samples kept exactly before the histogram takes over.
  static constexpr size_t kExactSamples = 16384;

  explicit StreamingDistribution(size_t exact_limit = kExactSamples) : exact_limit_(exact_limit) {}

  void add(int64_t ns);
  void add_missing(uint64_t n = 1) { missing_ += n; }
  // A sample, or a missing one (nullopt).
  void add(const std::optional<int64_t>& ns) { ns ? add(*ns) : add_missing(); }

  // The distribution in microseconds.
  Distribution summary() const;
  bool exact() const { return histogram_.count() == 0; }
  // Bytes held for the percentiles (kept samples or histogram buckets).
  size_t bytes() const;

 private:
  size_t exact_limit_;
  std::vector<int64_t> exact_;  // while exact()
  LogLinearHistogram histogram_;
  uint64_t missing_ = 0;
  // Over every sample, in arrival order (Welford), in us; min and max in ns.
  uint64_t n_ = 0;
  double mean_ = 0, m2_ = 0;
  int64_t min_ = 0, max_ = 0;
};

}  // namespace latlab
