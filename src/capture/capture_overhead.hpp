// What capture cost the program, from the record stream's summary: the
// result's `overhead` beyond the distributions of the layer's calls, and the
// bracketing probes (docs/capture.md, "Cost").
#pragma once

#include <string>
#include <vector>

#include "capture/capture_stream.hpp"
#include "capture/capture_summary.hpp"
#include "latlab/bench/capture_result.hpp"

namespace latlab::capture {

// What the per-frame figures of CaptureOverhead leave out.
inline constexpr const char* kOverheadLeavesOut =
    "driver_cpu_per_frame_us and gpu_per_frame_us are estimates from the bracketing probe, not "
    "measurements in the program; how much of the device time a program loses depends on whether "
    "it "
    "waits for its submissions; bench/dev/capture_overhead.sh measures the program's whole "
    "slowdown";

// `brackets`: the stream's probes (driver_cpu_per_frame_us and
// gpu_per_frame_us come from them).
CaptureOverhead overhead_of(const CaptureSummary& s, const std::vector<CapturedBracket>& brackets);

// The probes as the result holds them.
std::vector<CaptureBracketing> bracketing_of(const std::vector<CapturedBracket>& brackets);

}  // namespace latlab::capture
