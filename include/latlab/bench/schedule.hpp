// The signal schedule: deterministic intervals drawn from a seeded generator.
//
// The generator is specified here, not borrowed from the standard library
// (std::uniform_int_distribution's output is implementation-defined), so the
// same seed gives the same deadlines on every compiler and machine:
//
//   splitmix64 (Steele, Lea, Flood 2014; Vigna's reference code):
//     state += 0x9E3779B97F4A7C15
//     z = state
//     z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
//     z = (z ^ (z >> 27)) * 0x94D049BB133111EB
//     return z ^ (z >> 31)
//   the generator starts with state = seed.
//
//   an integer interval uniform in [min_ns, max_ns] (inclusive) is drawn with
//   Lemire's multiply-and-reject method (exact, unbiased; range = max - min + 1):
//     m = x * range (128-bit); if low64(m) < (2^64 - range) % range, draw x again;
//     interval = min_ns + high64(m)
//
// Interval k (k = 0, 1, ...) is the k-th value of this stream. Deadlines are
// absolute host-clock ns: deadline_k = start + interval_0 + ... + interval_k.
//
// Not thread-safe (one Schedule per thread); cheap to copy.
#pragma once

#include <cstdint>

namespace latlab {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next();
  // Uniform integer in [0, range) (range >= 1), Lemire's method, exact.
  uint64_t below(uint64_t range);

 private:
  uint64_t state_;
};

struct ScheduleDesc {
  uint64_t seed = 1;                     // generator seed; same seed -> same intervals
  int64_t min_interval_ns = 8'000'000;   // shortest interval, ns (default 8 ms); > 0
  int64_t max_interval_ns = 12'000'000;  // longest interval, ns (default 12 ms); >= min
  bool operator==(const ScheduleDesc&) const = default;
};

class Schedule {
 public:
  explicit Schedule(const ScheduleDesc& desc);
  // The next interval of the stream, in [min_interval_ns, max_interval_ns].
  int64_t next_interval_ns();
  // Skips `count` intervals (to start a stream at interval `count`).
  void skip(uint64_t count);
  const ScheduleDesc& desc() const { return desc_; }

 private:
  ScheduleDesc desc_;
  SplitMix64 rng_;
};

}  // namespace latlab
