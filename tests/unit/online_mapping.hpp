// What the online mapping gave a frame: the ClockModel fit of the pairs taken
// before the frame completed (its fence wake), extrapolated past its newest
// pair by ClockFit::map. The final mapping replaces it once the run is over;
// the final-mapping tests compare against it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <vector>

#include "latlab/bench/frame_markers.hpp"
#include "latlab/bench/latency_run.hpp"
#include "latlab/bench/sim.hpp"
#include "latlab/clock_model.hpp"

namespace latlab::test {

struct MappingErrors {
  std::vector<double> bound_ns;  // per frame
  std::vector<double> error_ns;  // |mapped - truth| per frame
};

// The online mapping of each frame with GPU timestamps, from the run's pairs
// (in the order taken) and the sim device's truth.
inline MappingErrors online_errors(const LatencyRun& run, std::span<const FrameRecord> frames,
                                   const SimDevice& dev) {
  MappingErrors out;
  const std::vector<CalibrationPair>& pairs = run.clock_model.pairs;
  for (const FrameRecord& f : frames) {
    if (!f.has(Marker::gpu_end) || !f.has(Marker::fence_wake)) continue;
    ClockModel model(run.device.ticks);
    for (const CalibrationPair& p : pairs) {
      if (p.host_ns < f.fence_wake_ns) model.add_pair(p);
    }
    if (!model.ready()) continue;
    const MappedTime m = model.fit()->map(f.gpu_end_ticks);
    out.bound_ns.push_back(static_cast<double>(m.error_ns));
    out.error_ns.push_back(
        static_cast<double>(std::llabs(m.host_ns - dev.host_at(f.gpu_end_ticks))));
  }
  return out;
}

// The mapping the frames carry (gpu_end_host_ns, map_error_ns) against the truth.
inline MappingErrors carried_errors(std::span<const FrameRecord> frames, const SimDevice& dev) {
  MappingErrors out;
  for (const FrameRecord& f : frames) {
    if (!f.has(Marker::gpu_end_host)) continue;
    out.bound_ns.push_back(static_cast<double>(f.map_error_ns));
    out.error_ns.push_back(
        static_cast<double>(std::llabs(f.gpu_end_host_ns - dev.host_at(f.gpu_end_ticks))));
  }
  return out;
}

// Nearest-rank quantile (q in 0..1) of a copy of v; 0 when empty.
inline double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

}  // namespace latlab::test
