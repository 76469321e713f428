// Where a capture's rows go once final: the per-frame and per-submission
// writers (the CSVs of src/report) implement CaptureRowSink, and the
// session hands every row to each as the capture runs (capture_pipeline.hpp),
// so that no row stays in memory longer than its lag.
#pragma once

#include "capture/capture_figures.hpp"
#include "capture/capture_records.hpp"

namespace latlab::capture {

// A frame's row as released, with its source's neighbours.
struct FrameRowView {
  const CaptureFrameRow& row;
  const CaptureFrameRow* prev = nullptr;  // its source's row released just before, or null
  const CaptureFrameRow* next = nullptr;  // its source's next row when it had come, or null
  // Its source's next frame displayed (capture::displayed), passing over
  // frames the compositor discarded; null where none is known to be.
  const CaptureFrameRow* next_shown = nullptr;
};

// Threads: called from the session's thread only, between run_capture()'s
// start and its report.
class CaptureRowSink {
 public:
  virtual ~CaptureRowSink() = default;
  // Each frame once final (capture_pipeline.hpp says when), in present
  // order over every source; `context` names its source and process.
  virtual void frame(const FrameRowView& view, const CaptureRecords& context) = 0;
  // Each submission as it comes (each source's in submission order).
  virtual void submit(const SubmitRecord& s, const CaptureRecords& context) = 0;
};

}  // namespace latlab::capture
