// Host-side internals of the CUDA backend that need no GPU, so unit tests
// run them on any machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "latlab/result.hpp"
#include "latlab/core/latency_device.hpp"

namespace latlab::cuda_detail {

// Generation reported for a slot whose tag matches no single write (two uses
// interleaved): nonzero and never handed out by the pool in practice.
inline constexpr uint64_t kUnknownGeneration = ~0ull;

// One stamp slot as decoded: written or not, its value, and the generation
// of the use that wrote it.
struct DecodedStamp {
  bool available = false;
  uint64_t ticks = 0;
  uint64_t generation = 0;
};

// Interprets one stamp slot read from mapped memory (see StampSlot):
// tag 0 -> not available; consistent with `expected` -> available with that
// generation; consistent with another generation -> available with it (a late
// write); consistent with none -> available with kUnknownGeneration.
DecodedStamp decode_stamp(uint64_t tag, uint64_t ticks, uint64_t expected_generation);

// Picks a device from `selector`: "" -> 0; all digits -> that ordinal; else
// the first name containing it (case-insensitive). Error lists the devices.
Result<int> select_device_index(const std::string& selector, const std::vector<std::string>& names);

// Checks a workload the CUDA backend can run; the message names the field.
Result<void> validate_workload(const FrameWorkload& work);

}  // namespace latlab::cuda_detail
