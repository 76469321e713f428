// From the record stream to the writers and the distributions as records
// come, in bounded memory: a submission goes to the row sinks and the
// summary at once; a frame becomes a row (its figures from its record and
// its source's previous frame), waits in a FrameRowQueue while something
// may still change it (frame_row_queue.hpp says what, and the lag), is
// paired with the screen observer's event meanwhile (ScreenMatcher), and
// once released goes to every sink and into the distributions, and is
// dropped. What stays is bounded by the queue's limits, the matcher's and
// the distributions' (core/streaming_distribution.hpp), however long the
// capture.
//
// Threads: not thread-safe; the session's thread drives it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "capture/capture_records.hpp"
#include "capture/capture_row_sink.hpp"
#include "capture/capture_summary.hpp"
#include "capture/frame_row_queue.hpp"
#include "capture/screen_observer.hpp"

namespace latlab::capture {

class CapturePipeline {
 public:
  // `context` goes to the sinks with each row (sources, process names);
  // neither it nor the sinks are owned: they outlive the pipeline.
  CapturePipeline(const CaptureRecords& context, std::vector<CaptureRowSink*> sinks,
                  FrameRowQueue::Limits limits = {});

  // Takes what `stream` received since the last call: its new sources,
  // submissions, frames and ended sources.
  void take(CaptureStream& stream);
  void add_submits(std::span<const SubmitRecord> submits);
  // Frames in the order their sources sent them; `windows`: the stream's.
  void add_frames(std::span<const FrameRecord> frames, std::span<const CapturedWindow> windows);
  // The screen observer watches `w`: its frames from w.since on wait for
  // their event.
  void watch(const WatchedWindow& w) { matcher_.watch(w); }
  void add_screen_events(std::span<const ScreenEvent> events);
  // Releases the rows final at host time `now` (and drops screen events no
  // row can take any more).
  void release(int64_t now);
  // Releases every row; the figures of everything released.
  void finish(const CaptureStream& stream, CaptureSummary& summary, ScreenSummary& screen);

  size_t rows_held() const { return queue_.rows(); }
  size_t peak_rows_held() const { return queue_.peak_rows(); }
  size_t peak_events_held() const { return peak_events_; }

 private:
  void on_release(CaptureFrameRow& row, const FrameRowView& view);
  // Each source's latest frame (between_presents) and the display time of
  // its last frame shown (between_displays: frame_row).
  struct LastFrame {
    FrameRecord record;
    int64_t shown = kNoTime;
  };
  LastFrame* last_frame_of(const FrameRecord& f);

  const CaptureRecords& context_;
  std::vector<CaptureRowSink*> sinks_;
  FrameRowQueue queue_;
  ScreenMatcher matcher_;
  CaptureSummarizer summarizer_;
  ScreenTally screen_tally_;
  std::vector<LastFrame> last_frames_;
  size_t sources_seen_ = 0;
  size_t peak_events_ = 0;
};

// Hands `records`' rows (summary.frames, in present order) and submissions
// to `sink` as a session would have: for writers of a capture held whole.
void replay_rows(const CaptureRecords& records, CaptureRowSink& sink);

}  // namespace latlab::capture
