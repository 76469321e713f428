// `latlab profile --queues all` (profile_queues.cpp), called by profile.cpp
// after it parsed and checked the options: the reference frame spread over
// one queue of every Vulkan queue family that can time.
#pragma once

#include <cstdint>
#include <string>

namespace latlab::cli {

struct QueuesProfileRequest {
  uint32_t frames = 120;    // frames to record
  std::string trace;        // Chrome trace path; empty: none
  std::string device;       // Vulkan device index or name substring; empty = default
  uint32_t complexity = 8;  // iterations per element / pixel of the base pass (1..4096)
  uint32_t width = 128;     // work size of every pass
  uint32_t height = 128;
  uint32_t frames_in_flight = 3;  // frames on the device at once
  bool json = false;
  bool validation = false;  // Khronos validation layer; an error fails the run
  // Open one queue of every family that can time (--queues all); false: the
  // roles share the device's one queue (--device all with --queues one).
  bool all_queues = true;
};

// Whether --device names several devices: "all" or a comma list.
bool profile_names_several_devices(const std::string& device);

// Runs the frame and prints the stat table of every queue used (every zone
// named with its queue), the families left out with the reason, and writes
// the trace (a track per queue); returns the exit code. With a device list
// ("all", "0,1"): one run per device in turn, each with its own clock model,
// one trace with a GPU group per device, JSON {"devices": [...]}; the first
// failing device's exit code, the others still run.
int profile_queues(const QueuesProfileRequest& request);

}  // namespace latlab::cli
