// `latlab profile --queues all` and device lists: the reference frame spread
// over a device's queues (latlab/core/profile_queues_rig.hpp), each queue its
// own profiler (its own timestamp slots and valid bits) and its own track,
// all on the host clock through the device's one clock model; one device
// after another, one trace with a GPU group per device. It prints nothing:
// lines and each device's result go through QueuesHooks.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "latlab/clock_model.hpp"
#include "latlab/core/profile_queues_rig.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_trace.hpp"

namespace latlab {

// A checked --queues profile.
struct QueuesProfilePlan {
  uint32_t frames = 120;          // frames to record per device (>= 1)
  uint32_t complexity = 8;        // iterations per element / pixel of the base pass (1..4096)
  uint32_t frames_in_flight = 3;  // frames on the device at once (1..8)
  std::string trace;              // Chrome trace path; empty: none
  // One queue of every family that can time; false: the roles share the
  // device's one queue (--device all with --queues one).
  bool all_queues = true;
};

// A device to run: its selector, and its GPU group in the trace ("" none).
struct QueuesDevice {
  std::string selector;
  std::string trace_group;
  std::string track_prefix;  // before its queues' names ("[0] "); "" for one device
};

// One queue's profile: its stat table and counters.
struct QueueProfile {
  ProfileQueueInfo info;
  std::vector<ZoneStat> stats;
  ProfilerCounters counters;
};

// How long one role's command buffer overlapped another's on the host
// clock, over the frames where both were mapped.
struct QueuesOverlap {
  std::string role;
  std::string with;
  bool same_queue = false;
  uint64_t frames = 0;
  uint64_t frames_overlapping = 0;
  std::optional<double> avg_overlap_ms;  // nullopt without frames
};

// The semaphore on the host clock: frames where async compute began before
// the upload ended by more than `tolerance_ns` (twice the clock model's bound).
struct QueuesSemaphoreOrder {
  uint64_t frames = 0;
  uint64_t async_began_before_upload_ended = 0;
  int64_t tolerance_ns = 0;
};

// One device's run: a failure, or its queues, roles and figures.
struct QueuesDeviceResult {
  std::string selector;
  std::optional<ProfileFailure> failure;  // the device did not run (failure.device: its name)
  bool planned = false;                   // queues, roles and unavailable are filled in
  std::string device;
  std::string mapping;
  std::shared_ptr<const ClockFit> fit;
  std::vector<QueueProfile> queues;
  std::vector<QueueRoleInfo> roles;
  std::vector<MissingCapability> unavailable;  // families not opened or left without a role
  std::vector<QueuesOverlap> overlap;          // upload and async compute with graphics
  QueuesSemaphoreOrder semaphore_order;
  ProfilerCounters counters;  // every queue's, summed
  uint64_t zones_expected = 0;
  ProfileRigReport rig;
};

struct QueuesProfileResult {
  std::vector<QueuesDeviceResult> devices;
  std::string trace_not_opened;              // why the trace could not be opened; "" otherwise
  std::unique_ptr<ChromeTraceWriter> trace;  // null without a trace; closed after the run
  bool trace_written = false;
  std::string trace_error;  // why it could not be written; "" otherwise
  std::string partial;      // "interrupted" when stopped early; "" otherwise
};

// What a run tells whoever shows it; each member may be empty.
struct QueuesHooks {
  std::function<void(const QueuesDevice&)> device_start;
  std::function<void(const std::string& line)> on_line;  // the opened device's lines
  std::function<void(const QueuesDeviceResult&)> device_done;
  const std::atomic<bool>* interrupt = nullptr;  // stops after the frame in progress
};

// Runs `plan` on each of `devices` in turn, opening each with `open` and
// `rig` (its device replaced by the selector).
QueuesProfileResult run_profile_queues(const QueuesProfilePlan& plan, const ProfileRigDesc& rig,
                                       const std::vector<QueuesDevice>& devices,
                                       OpenQueuesProfileRig open, const QueuesHooks& hooks);

}  // namespace latlab
