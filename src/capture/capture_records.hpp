// What a capture keeps of what it received, for the result and the
// per-frame writers (the frames and submissions CSVs, the PresentMon CSV in
// src/report): the sources' own records, the figures as distributions and
// the names of the processes. A session keeps no frame's row: each goes to
// the writers once final (capture_pipeline.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capture/capture_stream.hpp"
#include "capture/capture_summary.hpp"
#include "capture/screen_observer.hpp"

namespace latlab::capture {

struct CaptureRecords {
  CaptureStream stream;
  CaptureSummary summary;
  ScreenSummary screen;
  // The most frame rows and screen events held at once while they waited
  // for release: bounded by FrameRowQueue::Limits and ScreenMatcher.
  size_t peak_rows_held = 0;
  size_t peak_events_held = 0;
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
  // The index of source (pid, source) in the stream's sources, which is
  // the result's `sources` (and the CSVs' `source`); nullopt before its hello.
  std::optional<size_t> source_index(uint32_t pid, uint64_t source) const {
    const auto& all = stream.sources();
    for (size_t i = 0; i < all.size(); ++i) {
      if (all[i].pid == pid && all[i].source == source) return i;
    }
    return std::nullopt;
  }
};

}  // namespace latlab::capture
