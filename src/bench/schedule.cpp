#include "latlab/bench/schedule.hpp"

#include <cassert>

#include "core/int128.hpp"
#include "core/splitmix64.hpp"

namespace latlab {

uint64_t SplitMix64::next() { return splitmix64_next(state_); }

uint64_t SplitMix64::below(uint64_t range) {
  assert(range >= 1);
  uint128_t m = static_cast<uint128_t>(next()) * range;
  auto low = static_cast<uint64_t>(m);
  if (low < range) {
    const uint64_t threshold = (0 - range) % range;  // 2^64 mod range
    while (low < threshold) {
      m = static_cast<uint128_t>(next()) * range;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

Schedule::Schedule(const ScheduleDesc& desc) : desc_(desc), rng_(desc.seed) {
  assert(desc.min_interval_ns > 0 && desc.max_interval_ns >= desc.min_interval_ns);
}

int64_t Schedule::next_interval_ns() {
  const auto range = static_cast<uint64_t>(desc_.max_interval_ns - desc_.min_interval_ns) + 1;
  return desc_.min_interval_ns + static_cast<int64_t>(rng_.below(range));
}

void Schedule::skip(uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) (void)next_interval_ns();
}

}  // namespace latlab
