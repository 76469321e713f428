// `latlab profile`'s profiling rig: what one backend does for the one driver
// (profile.cpp). A rig opens a device for the reference frame, says how its
// clock is sampled, creates the typed profiler and the frame's workloads,
// records and submits one frame at a time into a ring of frame slots, and
// adds what only it knows to the output. The driver owns everything else:
// options, the frame loop, Ctrl-C and the partial trace, the clock model, the
// stat table and --json.
//
// The reference frame (every rig records these zones; CUDA has no fragment
// passes, so no `post` zones):
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
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "latlab/calibrator.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_trace.hpp"
#include "latlab/result.hpp"
#include "latlab/tick_format.hpp"

namespace latlab::cli {

// The options of `latlab profile` a rig needs, checked by the driver.
struct ProfileRequest {
  uint32_t frames = 120;    // frames to record
  std::string trace;        // Chrome trace path; empty: none
  std::string device;       // index or name substring; empty = the backend's default
  uint32_t complexity = 8;  // iterations per element / pixel of the base pass (1..4096)
  uint32_t width = 128;     // work size of every pass
  uint32_t height = 128;
  uint32_t frames_in_flight = 3;  // frames on the device at once (1..8)
  bool json = false;
  bool validation = false;        // vulkan: the Khronos layer; gl: a KHR_debug context
  std::string gl_timer = "auto";  // gl: auto, timestamp or elapsed
};

// Why a rig could not be opened or built, with the exit code (command.hpp).
struct ProfileFailure {
  std::string message;
  int exit_code = 0;
};

// How the rig's device clock reaches the host clock: a sampler of
// calibration pairs and its tick format, or why there is none.
struct ProfileClock {
  std::function<Result<CalibrationPair>()> sample;  // empty: no device clock
  TickFormat ticks;
  std::string domain;       // what the pairs bracket, for "host mapping: ..."
  std::string unavailable;  // why there is no sampler; empty when there is one
};

class ProfileRig {
 public:
  virtual ~ProfileRig() = default;

  // The profiler's name: the queue, stream or context it times.
  virtual std::string queue_name() const = 0;
  // Zones one reference frame records (the expected count of a full run).
  virtual uint32_t zones_per_frame() const = 0;
  // True: the CPU side of a frame is one "launch" span (CUDA); false:
  // "record" and "submit" spans.
  virtual bool launch_span() const { return false; }
  // The device clock for the driver's clock model (called once, before build).
  virtual ProfileClock clock() = 0;
  // Creates the profiler with `desc` and the reference frame's workloads.
  virtual std::optional<ProfileFailure> build(const GpuProfilerDesc& desc) = 0;
  // The profiler build() created.
  virtual GpuProfiler& profiler() = 0;

  // Waits for the frame that used `slot` (if any) and retires it where the
  // backend must; its wait span goes to `trace` when that is not null.
  virtual Result<void> wait_slot(uint32_t slot, ChromeTraceWriter* trace) = 0;
  // Records the zones of one reference frame into `slot`.
  virtual Result<void> record(uint32_t slot, uint32_t complexity) = 0;
  // Submits what record() recorded; `frame_id` is the profiler frame in it.
  virtual Result<void> submit(uint32_t slot, uint64_t frame_id) = 0;
  // Waits for every frame in flight.
  virtual Result<void> wait_all() = 0;

  // After the frames: the backend's own findings (validation messages on
  // stderr); returns the exit code, given the driver's `code`.
  virtual int check(int code) { return code; }
  // Adds the backend's keys to the JSON output (and to its "settings").
  virtual void add_json(nlohmann::json& out) const = 0;
  // Text lines after the counters line, and after the trace line.
  virtual void print_notes() const {}
  virtual void print_footer() const {}
};

// Opens the rig on the device `request` names, printing its line unless
// --json; a ProfileFailure when it cannot run the reference frame.
using OpenProfileRig =
    std::function<std::unique_ptr<ProfileRig>(const ProfileRequest&, ProfileFailure&)>;

std::unique_ptr<ProfileRig> open_vulkan_profile_rig(const ProfileRequest& request,
                                                    ProfileFailure& failure);
std::unique_ptr<ProfileRig> open_cuda_profile_rig(const ProfileRequest& request,
                                                  ProfileFailure& failure);
std::unique_ptr<ProfileRig> open_gl_profile_rig(const ProfileRequest& request,
                                                ProfileFailure& failure);

}  // namespace latlab::cli
