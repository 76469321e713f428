// `latlab profile`'s driver: the reference frame (latlab/core/profile_rig.hpp)
// recorded frame after frame on one backend's rig, timed by the scoped GPU
// profiler (nested zones, frames in flight), its device ticks mapped to the
// host clock by a clock model refreshed on its own thread, CPU and GPU spans
// streamed to a Chrome trace. It prints nothing; the result goes to the
// reporters (src/report/profile_report.hpp). One run at a time per rig, on
// the thread that opened the rig.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "latlab/clock_model.hpp"
#include "latlab/core/profile_rig.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_trace.hpp"

namespace latlab {

// A checked profile: what the driver runs.
struct ProfilePlan {
  uint32_t frames = 120;          // frames to record (>= 1)
  uint32_t complexity = 8;        // iterations per element / pixel of the base pass (1..4096)
  uint32_t frames_in_flight = 3;  // frames on the device at once (1..8)
  std::string trace;              // Chrome trace path; empty: none
};

// Why a profile stopped without a result.
enum class ProfileStop {
  none,              // a result (possibly partial: interrupted)
  build_failed,      // the profiler or the rig's workloads could not be made (`failure`)
  trace_not_opened,  // the trace file could not be opened (`failure.message`)
  frames_failed,     // a driver call failed in the frame loop (`failure.message`)
};

// What a profile produced. The profiler's slots belong to the rig's device:
// destroy the result before the rig.
struct ProfileResult {
  ProfileStop stop = ProfileStop::none;
  ProfileFailure failure;                    // with stop
  std::string queue_name;                    // the profiler's name
  std::string mapping;                       // how device ticks map to the host clock
  std::shared_ptr<const ClockFit> fit;       // null: no device clock or no fit
  std::unique_ptr<ChromeTraceWriter> trace;  // null without a trace; closed after the run
  std::unique_ptr<GpuProfiler> profiler;     // zones, stats and counters
  bool trace_written = false;                // the trace file is whole (or partial) on disk
  std::string trace_error;                   // why it could not be written; "" otherwise
  std::string partial;                       // why the run stopped early; "" when it did not
  uint64_t frames_run = 0;                   // frames recorded
  uint64_t zones_expected = 0;               // zones a full record of those frames holds
  ProfileRigReport rig;                      // what the rig adds, after the frames
};

// Runs `plan` on `rig`: its clock model, the profiler, the trace, the
// frames. `interrupt` (may be null) stops the frames after the one in
// progress; the trace is then closed as partial.
ProfileResult run_profile(const ProfilePlan& plan, ProfileRig& rig,
                          const std::atomic<bool>* interrupt);

// The partial reason of a run that `interrupt` stopped after `run` of
// `frames` frames; "" when it was not stopped.
std::string profile_interrupted(const std::atomic<bool>* interrupt, uint64_t run, uint64_t frames);

}  // namespace latlab
