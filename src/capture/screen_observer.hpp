// Screen observers of `latlab capture`: when a captured program's window
// changed on the screen, seen from outside the program (docs/capture.md,
// "The screen observer"). Kept apart from the frame sources' figures: an
// observer sees the window system, not the GPU or the present call.
//
// This header is API-neutral (no X11 types): the events an observer saw and
// how they are matched to the program's presents. The X11 observer that
// produces them is x11_damage_observer.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "capture/capture_record.hpp"
#include "capture/capture_stream.hpp"
#include "latlab/stats.hpp"

namespace latlab::capture {

// One change of a window's contents as the observer received it.
struct ScreenEvent {
  int64_t host_ns = 0;     // latlab's thread read the event (CLOCK_MONOTONIC)
  uint32_t server_ms = 0;  // the X server's timestamp of the event (ms, 32 bits)
  uint64_t window = 0;
};

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

// The observer's part of the result: per frame of the capture (aligned with
// CaptureSummary::frames) the event matched to it, and the figures.
struct ScreenSummary {
  std::vector<std::optional<ScreenEvent>> per_frame;
  Distribution until_screen_updated;  // us: screen_updated - present_start
  uint64_t frames_watched = 0;        // frames of a watched window presented after `since`
  uint64_t frames_matched = 0;        // of those, with an event
  uint64_t events = 0;                // events of watched windows
  uint64_t events_unmatched = 0;      // events no frame took
};

// Groups `summary`'s frames by window (through the WindowRecords' swapchains)
// and matches each watched window's events to its frames
// (match_screen_updates).
ScreenSummary summarize_screen(const CaptureSummary& summary,
                               std::span<const CapturedWindow> windows,
                               std::span<const WatchedWindow> watched,
                               std::span<const ScreenEvent> events);

}  // namespace latlab::capture
