// The per-row writers of a capture (docs/capture.md, "The result"): the
// frames CSV (--frames-csv), the submissions CSV (--submits-csv) and the
// PresentMon CSV (--presentmon-csv). Each is a row sink of the session
// (capture/capture_row_sink.hpp): it writes its header at once and each row
// as the session releases it, so that no row stays in memory; the file is
// a temporary one beside the target until commit() renames it over it
// (core/output_file.hpp), so a capture that stopped before writes nothing
// half-way. Without open() the text stays in memory (text()), for a
// capture held whole.
//
// Threads: one thread (the session's, then the reporter's).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capture/capture_row_sink.hpp"
#include "core/output_file.hpp"
#include "latlab/result.hpp"

namespace latlab {

// A swapchain's (or drawable's) raw handle as the CSVs write it:
// "0x" and 16 hex digits, PresentMon's SwapChainAddress.
std::string swapchain_handle(uint64_t handle);

class CaptureCsvWriter : public capture::CaptureRowSink {
 public:
  CaptureCsvWriter(const CaptureCsvWriter&) = delete;
  CaptureCsvWriter& operator=(const CaptureCsvWriter&) = delete;

  // Writes to `path` from now on (what was written so far first).
  Result<void> open(const std::string& path);
  // Renames the file over its target; the first error of any write, if one
  // failed (the target is then untouched).
  Result<void> commit();
  // Without open(): everything written.
  const std::string& text() const { return text_; }

 protected:
  explicit CaptureCsvWriter(std::string_view header) : text_(header) {}
  void write(std::string_view line);

 private:
  OutputFile file_;
  bool open_ = false;
  std::string text_;  // before open(): everything; after: nothing
  Result<void> status_;
};

// One row per frame: times in ns on CLOCK_MONOTONIC, an empty cell where a
// value was not measured. `source` is the source's index in the result's
// `sources`, `swapchain` the source's swapchains numbered from 0 in order
// of first frame (as `per_swapchain`), `swapchain_handle` the raw handle.
class FramesCsvWriter final : public CaptureCsvWriter {
 public:
  FramesCsvWriter();
  void frame(const capture::FrameRowView& v, const capture::CaptureRecords& context) override;
  void submit(const capture::SubmitRecord&, const capture::CaptureRecords&) override {}

 private:
  uint64_t swapchain_number(uint64_t source_index, uint64_t handle);
  std::vector<std::pair<uint64_t, uint64_t>>
      swapchains_;  // {source index, handle}, first-seen order
};

// One row per submission.
class SubmitsCsvWriter final : public CaptureCsvWriter {
 public:
  SubmitsCsvWriter();
  void frame(const capture::FrameRowView&, const capture::CaptureRecords&) override {}
  void submit(const capture::SubmitRecord& s, const capture::CaptureRecords& context) override;
};

// PresentMon 2.x's column names and units (ms; TimeInSeconds and
// CPUStartTime in s from the capture's first present; "NA" where latlab
// has no value); docs/capture.md maps each column.
class PresentmonCsvWriter final : public CaptureCsvWriter {
 public:
  PresentmonCsvWriter();
  void frame(const capture::FrameRowView& v, const capture::CaptureRecords& context) override;
  void submit(const capture::SubmitRecord&, const capture::CaptureRecords&) override {}

 private:
  int64_t epoch_ = capture::kNoTime;  // the first present: time 0
};

}  // namespace latlab
