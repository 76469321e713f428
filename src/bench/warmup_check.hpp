// The re-check of a mode's GPU time under the run's own conditions (not
// public): the load calibration measures frames back to back on an otherwise
// quiet device, the run paces them with its generator and consumer threads
// beside them, and on a CPU device (lavapipe) the two may differ by more than
// the tolerance. See LatencyModeDesc::warmup_adjust_ms_per_complexity.
#pragma once

#include <span>

#include "latlab/bench/frame_markers.hpp"
#include "latlab/bench/latency_run.hpp"

namespace latlab {

// Checks `warmup` (the mode's warm-up frames, in order; the later half is
// used) against mode.gpu_target and, when they missed it by more than half
// the tolerance, moves mode.workload.complexity along the slope (within
// kMinComplexity..kMaxComplexity). `mode` must have gpu_target and
// warmup_adjust_ms_per_complexity. `ticks` converts the GPU spans.
WarmupCheck recheck_in_warmup(LatencyModeDesc& mode, std::span<const FrameRecord> warmup,
                              const TickFormat& ticks);

}  // namespace latlab
