#include "core/log_linear_histogram.hpp"

#include <bit>

namespace latlab {
namespace {

constexpr uint64_t kExactBelow = 2048;  // 2^(kSubBits + 1)
constexpr int kSubBits = 10;            // 1024 buckets per power of two

uint64_t bucket_of(uint64_t magnitude) {
  if (magnitude < kExactBelow) return magnitude;
  const int e = 63 - std::countl_zero(magnitude);  // >= 11
  const int shift = e - kSubBits;
  const uint64_t sub = (magnitude >> shift) - (uint64_t{1} << kSubBits);
  return kExactBelow + static_cast<uint64_t>(e - kSubBits - 1) * (uint64_t{1} << kSubBits) + sub;
}

// The middle of bucket `b`'s magnitudes: the integers lo .. lo + width - 1.
double middle_of(uint64_t b) {
  if (b < kExactBelow) return static_cast<double>(b);
  const uint64_t above = b - kExactBelow;
  const int e = static_cast<int>(above >> kSubBits) + kSubBits + 1;
  const int shift = e - kSubBits;
  const uint64_t sub = above & ((uint64_t{1} << kSubBits) - 1);
  const uint64_t lo = ((uint64_t{1} << kSubBits) + sub) << shift;
  const uint64_t width = uint64_t{1} << shift;
  return static_cast<double>(lo) + static_cast<double>(width - 1) / 2.0;
}

}  // namespace

void LogLinearHistogram::add(int64_t value) {
  // The magnitude in unsigned arithmetic: INT64_MIN's is 2^63.
  const bool neg = value < 0;
  const uint64_t magnitude =
      neg ? uint64_t{0} - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  const uint64_t b = bucket_of(magnitude);
  auto& chunks = neg ? negative_ : positive_;
  const size_t c = b / kChunk;
  if (chunks.size() <= c) chunks.resize(c + 1);
  if (!chunks[c]) chunks[c] = std::make_unique<Chunk>(Chunk{});
  ++(*chunks[c])[b % kChunk];
  ++count_;
}

double LogLinearHistogram::value_at(uint64_t k) const {
  // Negative values first, the largest magnitude (the smallest value) first.
  for (size_t c = negative_.size(); c-- > 0;) {
    if (!negative_[c]) continue;
    for (size_t i = kChunk; i-- > 0;) {
      const uint64_t n = (*negative_[c])[i];
      if (k < n) return -middle_of(c * kChunk + i);
      k -= n;
    }
  }
  for (size_t c = 0; c < positive_.size(); ++c) {
    if (!positive_[c]) continue;
    for (size_t i = 0; i < kChunk; ++i) {
      const uint64_t n = (*positive_[c])[i];
      if (k < n) return middle_of(c * kChunk + i);
      k -= n;
    }
  }
  return 0.0;  // k >= count(): the caller's mistake; no bucket holds it
}

size_t LogLinearHistogram::bytes() const {
  size_t n = 0;
  for (const auto* side : {&positive_, &negative_}) {
    for (const auto& c : *side) n += c ? sizeof(Chunk) : 0;
  }
  return n;
}

}  // namespace latlab
