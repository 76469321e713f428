// `latlab profile --backend cuda` (profile_cuda.cpp), called by profile.cpp
// after it parsed and checked the options.
#pragma once

#include <cstdint>
#include <string>

namespace latlab::cli {

struct CudaProfileRequest {
  uint32_t frames = 120;    // frames to record
  std::string trace;        // Chrome trace path; empty: none
  std::string device;       // CUDA ordinal or name substring; empty = device 0
  uint32_t complexity = 8;  // iterations per element of the base pass (1..4096)
  uint32_t width = 128;     // elements of every pass: width * height
  uint32_t height = 128;
  uint32_t frames_in_flight = 3;  // frames on the device at once
  bool json = false;
};

// Runs the CUDA reference frame and prints what `latlab profile` prints;
// returns the exit code (3 without a usable CUDA device or in a build without
// the CUDA backend).
int profile_cuda(const CudaProfileRequest& request);

}  // namespace latlab::cli
