#include "capture/screen_observer.hpp"

#include <algorithm>
#include <numeric>

namespace latlab::capture {

std::vector<std::optional<ScreenEvent>> match_screen_updates(std::span<const PresentSpan> frames,
                                                             std::span<const ScreenEvent> events,
                                                             int64_t watching_since) {
  std::vector<std::optional<ScreenEvent>> out(frames.size());
  ScreenPairing<size_t> pairing;
  for (const ScreenEvent& e : events) pairing.add_event(e);
  for (size_t i = 0; i < frames.size(); ++i) {
    if (frames[i].present_start >= watching_since) pairing.add_frame(i, frames[i].present_start);
  }
  pairing.pair([&](size_t i, const ScreenEvent& e) { out[i] = e; });
  return out;
}

void ScreenMatcher::watch(const WatchedWindow& w) {
  if (find(w.window) == nullptr) windows_.push_back({w, {}});
}

ScreenMatcher::Window* ScreenMatcher::find(uint64_t window) {
  const auto it = std::find_if(windows_.begin(), windows_.end(),
                               [&](const Window& w) { return w.watched.window == window; });
  return it == windows_.end() ? nullptr : &*it;
}

void ScreenMatcher::add_frame(CaptureFrameRow& row, std::span<const CapturedWindow> windows) {
  for (const CapturedWindow& cw : windows) {
    if (cw.pid != row.pid || cw.source != row.record.head.source ||
        cw.swapchain != row.record.swapchain)
      continue;
    Window* w = find(cw.window);
    if (w == nullptr || row.record.present_start < w->watched.since) continue;
    row.screen_watched = true;
    w->pairing.add_frame(&row, row.record.present_start);
    return;
  }
}

void ScreenMatcher::add_event(const ScreenEvent& e) {
  Window* w = find(e.window);
  if (w == nullptr) return;
  ++events_;
  w->pairing.add_event(e);
}

void ScreenMatcher::pair() {
  for (Window& w : windows_)
    w.pairing.pair([](CaptureFrameRow* row, const ScreenEvent& e) { row->screen = e; });
}

void ScreenMatcher::forget(CaptureFrameRow& row) {
  for (Window& w : windows_) w.pairing.forget(&row);
}

void ScreenMatcher::drop_old_events(int64_t now) {
  for (Window& w : windows_) w.pairing.drop_events(now - kEventKeepNs, kMaxEventsHeld);
}

size_t ScreenMatcher::events_held() const {
  size_t n = 0;
  for (const Window& w : windows_) n += w.pairing.events_held();
  return n;
}

void ScreenTally::add(const CaptureFrameRow& row) {
  if (!row.screen_watched) return;
  ++watched_;
  if (!row.screen) {
    until_updated_.add_missing();
    return;
  }
  ++matched_;
  until_updated_.add(row.screen->host_ns - row.record.present_start);
}

ScreenSummary ScreenTally::summary(uint64_t events) const {
  ScreenSummary out;
  out.until_screen_updated = until_updated_.summary();
  out.frames_watched = watched_;
  out.frames_matched = matched_;
  out.events = events;
  out.events_unmatched = events - matched_;
  return out;
}

ScreenSummary summarize_screen(const CaptureSummary& summary,
                               std::span<const CapturedWindow> windows,
                               std::span<const WatchedWindow> watched,
                               std::span<const ScreenEvent> events) {
  ScreenMatcher matcher;
  for (const WatchedWindow& w : watched) matcher.watch(w);
  for (const ScreenEvent& e : events) matcher.add_event(e);
  std::vector<CaptureFrameRow> rows = summary.frames;
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return rows[a].record.present_start < rows[b].record.present_start;
  });
  for (const size_t i : order) matcher.add_frame(rows[i], windows);
  matcher.pair();
  ScreenTally tally;
  for (const CaptureFrameRow& r : rows) tally.add(r);
  ScreenSummary out = tally.summary(matcher.events());
  for (const CaptureFrameRow& r : rows) out.per_frame.push_back(r.screen);
  return out;
}

}  // namespace latlab::capture
