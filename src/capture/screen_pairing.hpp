// The rule that pairs one window's frames with its screen events
// (match_screen_updates, screen_observer.hpp), fed both as they come:
// frames in present order, events in arrival order, interleaved in any way.
// The frame waiting longest gets the first event at or after its
// present_start; events before it are passed over. `Handle` names a frame
// to the caller (an index, a row).
//
// Not thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>

#include "capture/capture_figures.hpp"

namespace latlab::capture {

template <class Handle>
class ScreenPairing {
 public:
  void add_frame(Handle h, int64_t present_start) { frames_.push_back({h, present_start}); }
  void add_event(const ScreenEvent& e) { events_.push_back(e); }

  // Pairs waiting frames with events: `matched(handle, event)` for each.
  // Afterwards either no frame waits or no event is held.
  template <class Matched>
  void pair(Matched&& matched) {
    while (!frames_.empty()) {
      const Waiting w = frames_.front();
      while (!events_.empty() && events_.front().host_ns < w.present_start) events_.pop_front();
      if (events_.empty()) return;
      matched(w.handle, events_.front());
      events_.pop_front();
      frames_.pop_front();
    }
  }

  // Frame `h` no longer waits (it was given up on).
  void forget(Handle h) {
    const auto it = std::find_if(frames_.begin(), frames_.end(),
                                 [&](const Waiting& w) { return w.handle == h; });
    if (it != frames_.end()) frames_.erase(it);
  }

  // Drops held events that came before `before` (host ns), and the oldest
  // beyond `keep`: no frame still to come takes those (the caller's rule).
  void drop_events(int64_t before, size_t keep) {
    while (!events_.empty() && (events_.front().host_ns < before || events_.size() > keep))
      events_.pop_front();
  }

  size_t frames_waiting() const { return frames_.size(); }
  size_t events_held() const { return events_.size(); }

 private:
  struct Waiting {
    Handle handle;
    int64_t present_start;
  };
  std::deque<Waiting> frames_;
  std::deque<ScreenEvent> events_;
};

}  // namespace latlab::capture
