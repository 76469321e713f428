// The latency run's final mapping: once the run is over, every frame's GPU
// ticks (kept in its FrameRecord) are placed on the host clock with the
// mapper's final model (TickMapper::map_final: for the calibrator,
// interpolated between the run's pairs on both sides of the frame). Every
// stage that uses a mapped GPU time is computed from these values.
#pragma once

#include "latlab/bench/latency_run.hpp"
#include "latlab/bench/tick_mapper.hpp"

namespace latlab {

// Maps the GPU begin/end of every frame of `run` (frames and bare_frames)
// whose GPU timestamps are ok, after mapper.stop(); a frame it cannot map
// has no gpu_begin_host/gpu_end_host (counted as gpu_unmapped). Adds the
// counts to run.clock_model (so call it after report()).
void map_frames_final(LatencyRun& run, const TickMapper& mapper);

}  // namespace latlab
