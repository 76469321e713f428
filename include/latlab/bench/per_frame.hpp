// The measured frames' series of a latency run, per mode, as columns: what
// the result carries as `per_frame` (with `latlab run --per-frame` or
// `--report`) and the HTML report draws. Exact nanoseconds; a value a frame
// does not have is nullopt, never 0.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "latlab/bench/frame_markers.hpp"
#include "latlab/bench/latency_run.hpp"

namespace latlab {

// One mode's measured frames in run order; every column has one entry per frame.
struct PerFrameMode {
  std::string mode;  // "baseline", "loaded"
  std::vector<uint64_t> frame_id;
  std::vector<uint32_t> block_index;
  std::vector<std::optional<int64_t>> deadline_ns;
  std::array<std::vector<std::optional<int64_t>>, kSeriesCount> series_ns;  // by Series
  bool operator==(const PerFrameMode&) const = default;
};

struct PerFrameSeries {
  std::vector<PerFrameMode> modes;  // in the run's mode order
  // The mode named `name`, or null.
  const PerFrameMode* find(std::string_view name) const;
  bool operator==(const PerFrameSeries&) const = default;
};

// Every measured frame of `run`, per mode (RunResult::per_frame).
PerFrameSeries per_frame_of(const LatencyRun& run);

}  // namespace latlab
