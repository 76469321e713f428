// Screen observers of `latlab capture`: when a captured program's window
// changed on the screen, seen from outside the program (docs/capture.md,
// "The screen observer"). Kept apart from the frame sources' figures: an
// observer sees the window system, not the GPU or the present call.
//
// This header is API-neutral (no X11 types): how the events an observer saw
// are paired with the program's presents, as both come (ScreenMatcher) or
// all at once (match_screen_updates, summarize_screen). The X11 observer
// that produces the events is x11_damage_observer.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "capture/capture_figures.hpp"
#include "capture/capture_stream.hpp"
#include "capture/capture_summary.hpp"
#include "capture/screen_pairing.hpp"
#include "core/streaming_distribution.hpp"
#include "latlab/stats.hpp"

namespace latlab::capture {

// A frame of one window, in present order.
struct PresentSpan {
  int64_t present_start = 0;
  int64_t present_end = 0;
};

// Matches one window's events (in arrival order) to its frames (in present
// order), one event per frame and in order: frame i gets the first event
// at or after its present_start that comes after the event frame i - 1 got.
// Frames presented before `watching_since` (the observer could not see
// their updates) and frames with no such event get nullopt. An event that
// belongs to no present (an expose, another client drawing) or a present
// that changed nothing shifts the pairing of that window's later frames;
// docs/capture.md says so.
std::vector<std::optional<ScreenEvent>> match_screen_updates(std::span<const PresentSpan> frames,
                                                             std::span<const ScreenEvent> events,
                                                             int64_t watching_since);

// A window the observer watched, from `since` (host ns) on.
struct WatchedWindow {
  uint64_t window = 0;
  int64_t since = 0;
};

// The observer's part of the result.
struct ScreenSummary {
  // summarize_screen only: per frame of the summary (aligned with
  // CaptureSummary::frames) the event paired with it.
  std::vector<std::optional<ScreenEvent>> per_frame;
  Distribution until_screen_updated;  // us: screen_updated - present_start
  uint64_t frames_watched = 0;        // frames of a watched window presented after `since`
  uint64_t frames_matched = 0;        // of those, with an event
  uint64_t events = 0;                // events of watched windows
  uint64_t events_unmatched = 0;      // events no frame took
};

// Pairs frames' rows with the events of the windows they show on as both
// come, window by window with match_screen_updates's rule. A row waits
// (screen_watched set, screen not yet) until an event is paired with it or
// the caller gives up on it (forget). Rows are the caller's and must stay
// where they are while they wait.
class ScreenMatcher {
 public:
  // Held events older than this behind the newest time given to
  // drop_old_events() are dropped (no frame presented before can still be
  // waiting: the caller releases rows sooner, capture_pipeline.hpp).
  static constexpr int64_t kEventKeepNs = 10'000'000'000;
  // At most this many events held per window (the oldest go first).
  static constexpr size_t kMaxEventsHeld = 65536;

  void watch(const WatchedWindow& w);
  // Marks `row` watched when its swapchain shows on a watched window and it
  // was presented after watching began (`windows`: the stream's); then it
  // waits for its event.
  void add_frame(CaptureFrameRow& row, std::span<const CapturedWindow> windows);
  // An event of a window; counted when the window is watched.
  void add_event(const ScreenEvent& e);
  // Pairs what can be paired: sets the waiting rows' `screen`.
  void pair();
  // `row` waits no longer (released without an event).
  void forget(CaptureFrameRow& row);
  void drop_old_events(int64_t now);
  uint64_t events() const { return events_; }
  size_t events_held() const;

 private:
  struct Window {
    WatchedWindow watched;
    ScreenPairing<CaptureFrameRow*> pairing;
  };
  Window* find(uint64_t window);
  std::vector<Window> windows_;
  uint64_t events_ = 0;
};

// The figures of the rows as they are released: until_screen_updated,
// frames watched and matched.
class ScreenTally {
 public:
  void add(const CaptureFrameRow& row);
  ScreenSummary summary(uint64_t events) const;

 private:
  StreamingDistribution until_updated_;
  uint64_t watched_ = 0;
  uint64_t matched_ = 0;
};

// Groups `summary`'s frames by window (through the WindowRecords'
// swapchains) and pairs each watched window's events with its frames, all
// at once (ScreenMatcher on every frame in present order).
ScreenSummary summarize_screen(const CaptureSummary& summary,
                               std::span<const CapturedWindow> windows,
                               std::span<const WatchedWindow> watched,
                               std::span<const ScreenEvent> events);

}  // namespace latlab::capture
