// ProfileRig: the profile port of the backend seam. What one backend does
// for `latlab profile`'s driver (latlab/bench/profile_run.hpp): opens a
// device for the reference frame, says how its clock is sampled, gives the
// timestamp slots the driver's profiler records into, records the frame's
// passes into a command stream of a ring of frame slots and submits it, and
// describes what only it knows (typed, for the reporters). The driver owns
// the profiler, the zone tree, the frame loop, the clock model and the trace.
// No GPU headers; header-only, as latency_device.hpp.
//
// The reference frame (the driver records these zones around the rig's
// passes; a rig without fragment passes has no `post` zones):
//   frame
//     simulate            compute pass, complexity C
//     lighting
//       lighting.direct   compute pass, 2C
//       lighting.indirect compute pass, C
//     post
//       post.bloom        full-screen fragment pass, C
//       post.tonemap      full-screen fragment pass, C
//
// Threads: a rig is used from the thread that opened it; only its clock
// sampler runs on the calibrator's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "latlab/calibrator.hpp"
#include "latlab/result.hpp"
#include "latlab/tick_format.hpp"
#include "latlab/timestamp_slots.hpp"

namespace latlab {

// What a rig is opened with (checked by the caller).
struct ProfileRigDesc {
  std::string device;    // index or name substring; empty: the backend's default
  uint32_t width = 128;  // work size of every pass
  uint32_t height = 128;
  bool validation = false;        // vulkan: the Khronos layer; gl: a KHR_debug context
  std::string gl_timer = "auto";  // gl: auto, timestamp or elapsed
  bool trace = false;             // a trace is asked for (host-mapped zones needed)
  // Lines describing the opened device; null: not shown.
  std::function<void(const std::string& line)> on_line;
};

// Why a rig could not be opened or built; the caller maps `kind` to its
// exit code.
enum class ProfileFailureKind {
  usage,               // the request does not fit the device
  device_not_opened,   // the device could not be opened (the selector may name none)
  missing_capability,  // the device cannot run or time the frame
  run_failed,          // a driver call failed
};
struct ProfileFailure {
  ProfileFailure() = default;
  ProfileFailure(std::string why, ProfileFailureKind what, std::string device_name = {})
      : message(std::move(why)), kind(what), device(std::move(device_name)) {}

  std::string message;
  ProfileFailureKind kind = ProfileFailureKind::run_failed;
  std::string device;  // the device's name once it was opened; "" before
};

// How the rig's device clock reaches the host clock: a sampler of
// calibration pairs and its tick format, or why there is none.
struct ProfileClock {
  std::function<Result<CalibrationPair>()> sample;  // empty: no device clock
  TickFormat ticks;
  std::string domain;       // what the pairs bracket, for "host mapping: ..."
  std::string unavailable;  // why there is no sampler; empty when there is one
};

// The reference frame's passes (the zone each one is in).
enum class ProfilePass { simulate, lighting_direct, lighting_indirect, bloom, tonemap };

// A wait for a frame slot: whether there was a frame to wait for, the host
// times around the wait, and the profiler frame to retire (its work is done:
// a query never written now never will be); nullopt: nothing to retire.
struct ProfileSlotWait {
  bool waited = false;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  std::optional<uint64_t> retire;
};

// A count that a backend writes, writes as unmeasured (null), or leaves out.
struct ProfileCount {
  bool present = false;
  std::optional<uint64_t> value;  // nullopt with present: not measured
};

// What a rig adds to the output, after the frames.
struct ProfileRigReport {
  bool names_backend = false;        // the output says which backend ran
  std::string device;                // the device's name
  std::optional<std::string> api;    // "api" (gl)
  std::optional<std::string> timer;  // "timer" (gl)
  std::optional<bool> validation;    // settings.validation; nullopt: not an option here
  ProfileCount validation_errors;
  ProfileCount timestamp_write_errors;  // gl: writes the context refused
  ProfileCount stamp_write_errors;      // cuda: stamp launches that failed
  bool failed = false;                  // its own findings (validation) fail the run
  std::vector<std::string> errors;      // those findings, one message each
  std::vector<std::string> notes;       // text lines after the counters line
  std::vector<std::string> footer;      // text lines after the trace line
};

class ProfileRig {
 public:
  virtual ~ProfileRig() = default;

  // The profiler's name: the queue, stream or context it times.
  virtual std::string queue_name() const = 0;
  // False: no fragment passes (no `post` zones).
  virtual bool has_post() const { return true; }
  // True: the CPU side of a frame is one "launch" span (CUDA); false:
  // "record" and "submit" spans.
  virtual bool launch_span() const { return false; }
  // The CPU span name of a slot wait ("fence wait", "event wait").
  virtual const char* wait_name() const { return "fence wait"; }
  // The device clock for the driver's clock model (called once, first).
  virtual ProfileClock clock() = 0;
  // Timestamp slots for the profiler, `count` of them (before build).
  virtual Result<std::shared_ptr<TimestampSlots>> make_slots(uint32_t count) = 0;
  // The reference frame's workloads and a ring of `frames_in_flight` slots.
  virtual Result<void> build(uint32_t frames_in_flight) = 0;

  // Waits for the frame that used `slot`, if any.
  virtual Result<ProfileSlotWait> wait_slot(uint32_t slot) = 0;
  // Starts recording into `slot`; the stream the zones and passes go to.
  virtual Result<GpuCommandStream> begin(uint32_t slot) = 0;
  // Records `pass` at `complexity` into what begin() gave.
  virtual Result<void> record_pass(GpuCommandStream stream, ProfilePass pass,
                                   uint32_t complexity) = 0;
  // Submits what was recorded; `frame_id` is the profiler frame in it.
  virtual Result<void> submit(uint32_t slot, uint64_t frame_id) = 0;
  // Waits for every frame in flight; the frames to retire.
  virtual Result<std::vector<uint64_t>> wait_all() = 0;

  // After the frames: what the rig adds to the output.
  virtual ProfileRigReport report() = 0;
};

// Opens a backend's rig; null, with `failure` set, when it cannot run the
// reference frame.
using OpenProfileRig = std::unique_ptr<ProfileRig> (*)(const ProfileRigDesc& desc,
                                                       ProfileFailure& failure);

}  // namespace latlab
