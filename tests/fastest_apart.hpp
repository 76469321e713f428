// "More work takes longer" on a device that runs on the CPU (lavapipe,
// llvmpipe): there, other load on the machine only ever adds time, so the
// fastest of N frames is the closest to the work's own cost. A fixed N is not
// enough on a loaded 2-core machine (a burst of load can slow every light
// frame of a short series many times over and no heavy one), so
// light and heavy frames alternate, both seeing the same machine, until the
// fastest of each are `factor` apart or `max_pairs` pairs have run. A device
// whose heavy work is not heavier never gets there: the test still fails.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

namespace latlab::test {

struct FastestPair {
  int64_t light_ns = std::numeric_limits<int64_t>::max();
  int64_t heavy_ns = std::numeric_limits<int64_t>::max();
  int pairs = 0;
  bool complete() const {
    return light_ns != std::numeric_limits<int64_t>::max() &&
           heavy_ns != std::numeric_limits<int64_t>::max();
  }
  bool apart(double factor) const {
    return complete() && static_cast<double>(heavy_ns) > factor * static_cast<double>(light_ns);
  }
};

// `measure(heavy)` runs one frame and returns its GPU time in ns, or nothing
// when the frame gave no time (the caller's test decides whether that fails).
template <class Measure>
FastestPair fastest_until_apart(Measure measure, double factor, int min_pairs, int max_pairs) {
  FastestPair f;
  while (f.pairs < max_pairs && (f.pairs < min_pairs || !f.apart(factor))) {
    if (const std::optional<int64_t> l = measure(false)) f.light_ns = std::min(f.light_ns, *l);
    if (const std::optional<int64_t> h = measure(true)) f.heavy_ns = std::min(f.heavy_ns, *h);
    ++f.pairs;
  }
  return f;
}

}  // namespace latlab::test
