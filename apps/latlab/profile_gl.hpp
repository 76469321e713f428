// `latlab profile --backend gl` (profile_gl.cpp), called by profile.cpp
// after it parsed and checked the options.
#pragma once

#include <cstdint>
#include <string>

namespace latlab::cli {

struct GlProfileRequest {
  uint32_t frames = 120;    // frames to record
  std::string trace;        // Chrome trace path; empty: none
  std::string device;       // EGL device index or name substring; empty = first with timestamps
  uint32_t complexity = 8;  // iterations per element / pixel of the base pass (1..4096)
  uint32_t width = 128;     // work size of every pass
  uint32_t height = 128;
  uint32_t frames_in_flight = 3;  // frames on the device at once
  bool json = false;
  bool debug =
      false;  // --validation: KHR_debug on; a GL error or high-severity message fails the run
  // --gl-timer: "auto" (GL_TIMESTAMP where it has bits, else GL_TIME_ELAPSED),
  // "timestamp" or "elapsed" (durations only: outermost zones timed, no trace)
  std::string timer = "auto";
};

// Runs the reference frame on a GL context and prints what `latlab profile`
// prints; returns the exit code (3 without a GL context with timer queries,
// with --trace where only GL_TIME_ELAPSED times, or in a build without the
// GL backend).
int profile_gl(const GlProfileRequest& request);

}  // namespace latlab::cli
