// Everything a capture received, kept for the per-frame writers (the frames
// and submissions CSVs, the PresentMon CSV in src/report): the records, the
// per-frame rows and figures built from them, and the screen observer's
// events matched to the frames.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "capture/capture_stream.hpp"
#include "capture/screen_observer.hpp"

namespace latlab::capture {

struct CaptureRecords {
  CaptureStream stream;
  CaptureSummary summary;  // summarize_capture(stream)
  ScreenSummary screen;    // aligned with summary.frames
  // The name of each process that sent records (/proc/PID/comm, read while
  // it ran); `program_name` (argv[0]'s file name) for one not read.
  std::vector<std::pair<uint32_t, std::string>> process_names;
  std::string program_name;

  const std::string& process_name(uint32_t pid) const {
    for (const auto& [p, name] : process_names) {
      if (p == pid) return name;
    }
    return program_name;
  }
};

}  // namespace latlab::capture
