#include "core/streaming_distribution.hpp"

#include <algorithm>
#include <cmath>

namespace latlab {
namespace {

double us_of(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

}  // namespace

void StreamingDistribution::add(int64_t ns) {
  ++n_;
  const double x = us_of(ns);
  const double delta = x - mean_;
  mean_ += delta / static_cast<double>(n_);
  m2_ += delta * (x - mean_);
  min_ = n_ == 1 ? ns : std::min(min_, ns);
  max_ = n_ == 1 ? ns : std::max(max_, ns);
  if (!exact()) {
    histogram_.add(ns);
    return;
  }
  if (exact_.size() < exact_limit_) {
    exact_.push_back(ns);
    return;
  }
  // The limit is reached: from here on the histogram holds every sample.
  for (const int64_t v : exact_) histogram_.add(v);
  std::vector<int64_t>().swap(exact_);
  histogram_.add(ns);
}

Distribution StreamingDistribution::summary() const {
  if (exact()) {
    std::vector<double> us(exact_.size());
    std::transform(exact_.begin(), exact_.end(), us.begin(), us_of);
    return summarize_in_place(us, missing_);
  }
  Distribution d;
  d.count = n_;
  d.missing = missing_;
  d.mean = mean_;
  if (n_ > 1) d.stddev = std::sqrt(m2_ / static_cast<double>(n_ - 1));
  d.min = us_of(min_);
  d.max = us_of(max_);
  d.percentile_resolution = LogLinearHistogram::kRelativeResolution;
  // Type 7 over the buckets' middles, kept inside the exact min and max.
  auto at = [&](uint64_t k) {
    return std::clamp(histogram_.value_at(k), static_cast<double>(min_),
                      static_cast<double>(max_)) /
           1000.0;
  };
  auto percentile = [&](double q) {
    const double rank = q * static_cast<double>(n_ - 1);
    const auto lo = static_cast<uint64_t>(std::floor(rank));
    const uint64_t hi = std::min(lo + 1, n_ - 1);
    const double lo_value = at(lo);
    return lo_value + (at(hi) - lo_value) * (rank - static_cast<double>(lo));
  };
  d.p50 = percentile(0.50);
  d.p90 = percentile(0.90);
  d.p95 = percentile(0.95);
  d.p99 = percentile(0.99);
  d.p999 = percentile(0.999);
  return d;
}

size_t StreamingDistribution::bytes() const {
  return exact_.capacity() * sizeof(int64_t) + histogram_.bytes();
}

}  // namespace latlab
