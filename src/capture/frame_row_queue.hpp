// The rows of frames between their record's arrival and their release to
// the writers and the distributions. A frame's record already holds its GPU
// spans and present_complete (its source sends it once they are known,
// capture_record.hpp); what may still change a row, or where it goes in
// present order, is:
//   - the screen observer's event (the row waits while screen_watched and
//     no event is paired with it),
//   - its source's next frame (the PresentMon CSV's DisplayedTime; for a
//     frame displayed, its source's next frame not discarded),
//   - a frame of another source presented before it and not yet arrived.
// A row is released, in present order over every source, once its source
// sent its next frame or ended, no screen event is awaited, and every other
// source that started and has not ended sent a frame presented at or after
// it; at the latest `lag_ns` after its present_start on the host clock, or
// at once when more than `max_rows` rows are held (the oldest first).
//
// Threads: not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>

#include "capture/capture_row_sink.hpp"

namespace latlab::capture {

class FrameRowQueue {
 public:
  struct Limits {
    // Host ns after its present_start by which a row is released, whatever
    // it waits for (a source's record comes at most about 1 s after its
    // present: the present_complete timeout).
    int64_t lag_ns = 3'000'000'000;
    // Rows held at most (about 400 bytes each).
    size_t max_rows = 8192;
  };
  // Each released row with its neighbours; the row may be changed (it is
  // dropped after the call).
  using Release = std::function<void(CaptureFrameRow& row, const FrameRowView& view)>;

  FrameRowQueue() = default;
  explicit FrameRowQueue(Limits limits) : limits_(limits) {}

  // A source that may send frames: rows wait for its frames until it ends.
  void source_started(uint32_t pid, uint64_t source);
  void source_ended(uint32_t pid, uint64_t source);
  // Holds `row` (its source in row.pid, row.record.head.source); the row
  // stays at the returned place until released.
  CaptureFrameRow& add(CaptureFrameRow row);
  // Releases the rows that are final at host time `now`.
  void release(int64_t now, const Release& fn) { release_rows(now, false, fn); }
  // Releases every row (the capture ended).
  void release_all(const Release& fn) { release_rows(0, true, fn); }

  size_t rows() const { return rows_; }
  size_t peak_rows() const { return peak_rows_; }

 private:
  struct Source {
    uint32_t pid = 0;
    uint64_t source = 0;
    std::deque<CaptureFrameRow> rows;  // in arrival (present) order
    std::optional<CaptureFrameRow> prev;
    int64_t newest = kNoTime;  // the latest present_start that came
    bool ended = false;
  };
  Source& source_of(uint32_t pid, uint64_t source);
  bool settled(const Source& head, const CaptureFrameRow& row) const;
  void release_rows(int64_t now, bool all, const Release& fn);

  Limits limits_;
  std::deque<Source> sources_;  // a deque: rows keep their place as sources come
  size_t rows_ = 0;
  size_t peak_rows_ = 0;
};

}  // namespace latlab::capture
