#include "capture/frame_row_queue.hpp"

#include <algorithm>
#include <utility>

namespace latlab::capture {

FrameRowQueue::Source& FrameRowQueue::source_of(uint32_t pid, uint64_t source) {
  const auto it = std::find_if(sources_.begin(), sources_.end(),
                               [&](const Source& s) { return s.pid == pid && s.source == source; });
  if (it != sources_.end()) return *it;
  Source& s = sources_.emplace_back();
  s.pid = pid;
  s.source = source;
  return s;
}

void FrameRowQueue::source_started(uint32_t pid, uint64_t source) { source_of(pid, source); }

void FrameRowQueue::source_ended(uint32_t pid, uint64_t source) {
  source_of(pid, source).ended = true;
}

CaptureFrameRow& FrameRowQueue::add(CaptureFrameRow row) {
  Source& s = source_of(row.pid, row.record.head.source);
  s.newest =
      s.newest == kNoTime ? row.record.present_start : std::max(s.newest, row.record.present_start);
  s.rows.push_back(std::move(row));
  peak_rows_ = std::max(peak_rows_, ++rows_);
  return s.rows.back();
}

namespace {

// After the front of `rows`, in a run of consecutive frames: the first that
// the compositor did not discard (null: the run broke off first), and
// whether it is known yet (false: only discarded frames have come).
struct NextShown {
  const CaptureFrameRow* row = nullptr;
  bool known = false;
};
NextShown next_shown_of(const std::deque<CaptureFrameRow>& rows) {
  for (size_t k = 1; k < rows.size(); ++k) {
    if (rows[k].record.frame != rows[k - 1].record.frame + 1) return {nullptr, true};
    if (displayed(rows[k].record) != std::optional<bool>(false)) return {&rows[k], true};
  }
  return {};
}

}  // namespace

// Whether nothing can change `row` (the front of `head`, the earliest
// present held) nor come before it any more.
bool FrameRowQueue::settled(const Source& head, const CaptureFrameRow& row) const {
  if (row.screen_watched && !row.screen) return false;
  if (head.rows.size() < 2 && !head.ended) return false;
  // A frame shown waits for its source's next one shown (DisplayedTime).
  if (!head.ended && displayed(row.record).value_or(false) && !next_shown_of(head.rows).known)
    return false;
  const int64_t t = row.record.present_start;
  return std::all_of(sources_.begin(), sources_.end(), [&](const Source& s) {
    return &s == &head || s.ended || (s.newest != kNoTime && s.newest >= t);
  });
}

void FrameRowQueue::release_rows(int64_t now, bool all, const Release& fn) {
  for (;;) {
    Source* head = nullptr;
    for (Source& s : sources_) {
      if (!s.rows.empty() && (head == nullptr || s.rows.front().record.present_start <
                                                     head->rows.front().record.present_start))
        head = &s;
    }
    if (head == nullptr) return;
    CaptureFrameRow& row = head->rows.front();
    const bool forced =
        all || rows_ > limits_.max_rows || now - row.record.present_start >= limits_.lag_ns;
    if (!forced && !settled(*head, row)) return;
    const CaptureFrameRow* shown = next_shown_of(head->rows).row;
    const FrameRowView view{
        row, head->prev ? &*head->prev : nullptr, head->rows.size() > 1 ? &head->rows[1] : nullptr,
        shown != nullptr && displayed(shown->record).value_or(false) ? shown : nullptr};
    fn(row, view);
    head->prev = std::move(row);
    head->rows.pop_front();
    --rows_;
  }
}

}  // namespace latlab::capture
