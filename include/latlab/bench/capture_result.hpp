// The capture section of the typed result (RunResult::capture): what `latlab
// capture -- PROGRAM` measured of a program nobody changed, as the result of
// kind "capture" holds it (docs/capture.md, "The result"). Distributions are
// in microseconds; a value the sources could not measure is left out of
// them (counted missing), never 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "latlab/stats.hpp"

namespace latlab {

// The program latlab ran.
struct CapturedProgram {
  std::vector<std::string> argv;
  int64_t pid = -1;
  std::optional<int64_t> exit_code;  // nullopt: still running when the result was written
  std::optional<int64_t> signal;     // the signal that ended it
  bool running_when_written = false;
  bool operator==(const CapturedProgram&) const = default;
};

// How the recording went and stopped (`capture` of the result).
struct CaptureStop {
  std::string stopped_by;                // "program_exit", "frames", "seconds", "signal"
  std::optional<uint64_t> frames_limit;  // --frames
  std::optional<double> seconds_limit;   // --seconds
  bool terminate = false;                // --terminate
  uint64_t records_dropped = 0, records_malformed = 0, records_unknown = 0;
  bool operator==(const CaptureStop&) const = default;
};

// One frame source in the program (a VkDevice, a GL context).
struct CaptureSourceInfo {
  int64_t pid = 0;
  std::string api;           // "vulkan", "opengl", "unknown"
  std::string device;        // "" unknown
  std::string clock_method;  // "": GPU times cannot be placed on the host clock
  std::string source;
  bool ended = false;  // it shut down cleanly
  bool operator==(const CaptureSourceInfo&) const = default;
};

// A value a source could not give, and why.
struct CaptureUnavailable {
  std::string name, reason;
  int64_t pid = 0;
  bool operator==(const CaptureUnavailable&) const = default;
};

using NamedDistributions = std::vector<std::pair<std::string, Distribution>>;

struct CaptureResult {
  std::string partial_reason;  // "" unless what was captured is partial
  CapturedProgram program;
  CaptureStop stop;
  std::vector<CaptureSourceInfo> sources;
  uint64_t frames = 0, submits = 0, submits_without_work = 0;
  uint64_t gpu_spans_missing = 0, frames_with_missing_gpu = 0;
  std::vector<std::pair<std::string, uint64_t>> submit_spans;  // submissions by span outcome
  NamedDistributions figures;         // per frame, PresentMon's columns (docs/capture.md)
  NamedDistributions submit_figures;  // per submission
  Distribution layer_cpu_per_submit, layer_cpu_per_present;  // the layer's own cost
  std::vector<CaptureUnavailable> unavailable;
  // The per-frame figure named `name`, or null.
  const Distribution* figure(std::string_view name) const;
  bool operator==(const CaptureResult&) const = default;
};

}  // namespace latlab
