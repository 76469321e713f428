// QueuesProfileRig: the port of `latlab profile --queues all` in the backend
// seam (beside profile_rig.hpp). The reference frame spread over one queue
// of every queue family that can time, as command buffers of roles:
//   upload         upload.fill, upload.copy: fill a staging region and copy
//                  it to the frame's upload region (dedicated transfer family)
//   async compute  async.consume, async.simulate: copy the upload into its
//                  buffer and run a compute pass on it (dedicated compute
//                  family); waits for the upload through a semaphore
//   graphics       the single-queue frame's passes on the context's queue
//   marker         a family that can time but has no role: its command
//                  buffer's timestamps only
// The rig picks the families, owns the queues' rings, buffers and
// semaphores, and records a role's steps; the driver
// (latlab/bench/profile_queues_run.hpp) owns a profiler per queue and the
// zones around the steps. No GPU headers; header-only.
//
// Threads: used from the thread that opened it; only its clock sampler runs
// on the calibrator's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "latlab/core/capability.hpp"
#include "latlab/core/profile_rig.hpp"
#include "latlab/result.hpp"
#include "latlab/tick_format.hpp"
#include "latlab/timestamp_slots.hpp"

namespace latlab {

enum class QueueRole { upload, async_compute, graphics, marker };

// One command buffer of the frame: what it does and on which family.
struct QueueRoleInfo {
  QueueRole role = QueueRole::graphics;
  std::string label;  // "upload", "async compute", "graphics", "marker"
  std::string note;   // why it runs where it runs; empty when on its own family
  uint32_t family = 0;
  size_t queue = 0;  // index into QueuesProfileRig::queues()
};

// One opened queue the frame uses (each gets its own profiler and track).
struct ProfileQueueInfo {
  uint32_t family = 0;
  std::string flags_text;          // the family's flags, "GRAPHICS|COMPUTE|..."
  TickFormat ticks;                // its timestamps' format (valid bits per family)
  std::string track;               // "vulkan queue family N (flags)", with the track prefix
  std::vector<std::string> roles;  // labels of what runs on it
};

// The steps of the upload and async compute roles (each in its own zone).
enum class QueueStep { upload_fill, upload_copy, async_consume, async_simulate };

class QueuesProfileRig {
 public:
  virtual ~QueuesProfileRig() = default;

  // The device's name and the line of the text output's device header.
  virtual std::string device_name() const = 0;
  // The device clock, one model for every queue (called once, first).
  virtual ProfileClock clock() = 0;
  // Picks the families of the roles and opens a ring of `frames_in_flight`
  // per role; `track_prefix` goes before every queue's track name.
  virtual Result<void> plan(uint32_t frames_in_flight, const std::string& track_prefix) = 0;
  // After plan(): the queues used, the roles, and the families left out.
  virtual const std::vector<ProfileQueueInfo>& queues() const = 0;
  virtual const std::vector<QueueRoleInfo>& roles() const = 0;
  virtual std::vector<MissingCapability> unavailable() const = 0;
  // Timestamp slots on queue `queue`, `count` of them.
  virtual Result<std::shared_ptr<TimestampSlots>> make_slots(size_t queue, uint32_t count) = 0;
  // The buffers, workloads and semaphores of the roles.
  virtual Result<void> build(uint32_t frames_in_flight) = 0;

  // Waits for every role's frame in `slot`; true when one was in flight.
  virtual Result<bool> wait_slot(uint32_t slot) = 0;
  // Starts recording role `role`'s command buffer of `slot`.
  virtual Result<GpuCommandStream> begin(size_t role, uint32_t slot) = 0;
  // Records `step` of frame `frame` (its data) into `stream`.
  virtual Result<void> record_step(GpuCommandStream stream, QueueStep step, uint32_t slot,
                                   uint64_t frame, uint32_t complexity) = 0;
  // Records a pass of the reference frame (the graphics role).
  virtual Result<void> record_pass(GpuCommandStream stream, ProfilePass pass,
                                   uint32_t complexity) = 0;
  // Submits role `role`'s command buffer of `slot` with its semaphores.
  virtual Result<void> submit(size_t role, uint32_t slot) = 0;
  // Waits for every frame in flight.
  virtual Result<void> wait_all() = 0;

  // After the frames: validation findings and footer (device, errors).
  virtual ProfileRigReport report() = 0;
};

// Opens a device's rig (`desc.device` names one device); null, with
// `failure` set, when it cannot run. `all_queues` false: the roles share
// the device's one queue.
using OpenQueuesProfileRig = std::unique_ptr<QueuesProfileRig> (*)(const ProfileRigDesc& desc,
                                                                   bool all_queues,
                                                                   ProfileFailure& failure);

}  // namespace latlab
