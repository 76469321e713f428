#include "capture/screen_observer.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace latlab::capture {

std::vector<std::optional<ScreenEvent>> match_screen_updates(std::span<const PresentSpan> frames,
                                                             std::span<const ScreenEvent> events,
                                                             int64_t watching_since) {
  std::vector<std::optional<ScreenEvent>> out(frames.size());
  size_t next = 0;  // the first event no frame has taken
  for (size_t i = 0; i < frames.size(); ++i) {
    if (frames[i].present_start < watching_since) continue;
    while (next < events.size() && events[next].host_ns < frames[i].present_start) ++next;
    if (next == events.size()) break;
    out[i] = events[next++];
  }
  return out;
}

ScreenSummary summarize_screen(const CaptureSummary& summary,
                               std::span<const CapturedWindow> windows,
                               std::span<const WatchedWindow> watched,
                               std::span<const ScreenEvent> events) {
  ScreenSummary out;
  out.per_frame.resize(summary.frames.size());
  std::vector<double> us;
  uint64_t missing = 0;
  for (const WatchedWindow& w : watched) {
    // This window's frames, in present order.
    std::vector<size_t> rows;
    for (size_t i = 0; i < summary.frames.size(); ++i) {
      const auto& r = summary.frames[i];
      const bool shown = std::any_of(windows.begin(), windows.end(), [&](const CapturedWindow& cw) {
        return cw.window == w.window && cw.pid == r.pid && cw.source == r.record.head.source &&
               cw.swapchain == r.record.swapchain;
      });
      if (shown) rows.push_back(i);
    }
    std::stable_sort(rows.begin(), rows.end(), [&](size_t a, size_t b) {
      return summary.frames[a].record.present_start < summary.frames[b].record.present_start;
    });
    std::vector<PresentSpan> spans;
    for (size_t i : rows)
      spans.push_back(
          {summary.frames[i].record.present_start, summary.frames[i].record.present_end});
    std::vector<ScreenEvent> mine;
    for (const auto& e : events) {
      if (e.window == w.window) mine.push_back(e);
    }
    const auto matched = match_screen_updates(spans, mine, w.since);
    out.events += mine.size();
    uint64_t taken = 0;
    for (size_t k = 0; k < rows.size(); ++k) {
      if (spans[k].present_start < w.since) continue;
      ++out.frames_watched;
      out.per_frame[rows[k]] = matched[k];
      if (matched[k]) {
        ++out.frames_matched;
        ++taken;
        us.push_back(static_cast<double>(matched[k]->host_ns - spans[k].present_start) / 1000.0);
      } else {
        ++missing;
      }
    }
    out.events_unmatched += mine.size() - taken;
  }
  out.until_screen_updated = summarize_in_place(us, missing);
  return out;
}

}  // namespace latlab::capture
