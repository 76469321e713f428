// Counts of int64 values in log-linear buckets, for percentiles of more
// samples than are worth keeping: every value below 2048 has a bucket of
// its own (exact); above, each power of two [2^e, 2^(e+1)) is split into
// 1024 equal buckets, so the middle of a value's bucket lies within 1/2048
// (0.049 %) of the value. Negative values are counted by magnitude in a
// mirror of the same buckets.
//
// Memory: 8 KiB per 1024 buckets, allocated when a value first falls in
// them: a figure spread over three powers of two holds 24 KiB; the most
// (every power of two of both signs hit) is 110 chunks, 880 KiB.
//
// Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace latlab {

class LogLinearHistogram {
 public:
  // The largest distance of value_at() from the value it stands for,
  // relative to that value.
  static constexpr double kRelativeResolution = 1.0 / 2048;

  void add(int64_t value);
  uint64_t count() const { return count_; }
  // The k-th smallest value counted (0-based; k < count()), as the middle
  // of its bucket (the value itself below 2048 in magnitude).
  double value_at(uint64_t k) const;
  // Bytes held by the buckets.
  size_t bytes() const;

 private:
  static constexpr size_t kChunk = 1024;
  using Chunk = std::array<uint64_t, kChunk>;
  // Buckets of non-negative values and of negative values' magnitudes;
  // chunk i holds bucket indices [i * kChunk, (i + 1) * kChunk).
  std::vector<std::unique_ptr<Chunk>> positive_, negative_;
  uint64_t count_ = 0;
};

}  // namespace latlab
