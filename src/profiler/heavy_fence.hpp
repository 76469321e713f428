// The heavy side of an asymmetric fence. membarrier(2) makes every running
// thread of this process pass a full memory barrier, so the light side needs
// none: a thread's own loads and stores with a compiler barrier between them.
// The profiler's collector uses it to hold recording threads out of their
// lanes, so that a zone takes its record without a locked add
// (ZoneRecorder::take_pair).
#pragma once

namespace latlab::profiler_detail {

// True when heavy_fence() works in this process (Linux with
// MEMBARRIER_CMD_PRIVATE_EXPEDITED, registered here once); false on other
// systems or where a sandbox refuses the call: callers then never take the
// light side's shortcut.
bool heavy_fence_available();
// Returns once every other thread of the process has passed a full memory
// barrier (or was not running). Only after heavy_fence_available() was true.
void heavy_fence();

}  // namespace latlab::profiler_detail
