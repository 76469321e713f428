// The present path's window on a Wayland compositor (private to the Vulkan
// backend), and its screen observer: the compositor's own report of when
// each frame was shown (wp_presentation, presentation-time).
//
// The window is an xdg_toplevel of the present size; everything latlab
// binds (registry, compositor, xdg_wm_base, wp_presentation) lives on an
// event queue of its own, dispatched by the window's thread, so the
// driver's WSI (which reads the same connection on its queues) and latlab
// never take each other's events. Before each present, request_feedback()
// asks wp_presentation.feedback for the surface; the WSI's commit of that
// present carries it, and the compositor answers `presented` (the time the
// frame was shown, on the clock it named in clock_id, with the refresh and
// flags) or `discarded` (replaced before it was shown).
//
// Clock: the compositor's clock is mapped onto the host clock
// (CLOCK_MONOTONIC): the same clock as is, another by its offset to the
// host clock read at bind time (an error of a few microseconds, stated).
//
// Threads: open/start/stop from one thread; request_feedback() from the
// presenting thread, right before the present; shown_ns() and info() after
// stop().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "latlab/core/present_path.hpp"
#include "latlab/result.hpp"

struct wl_display;
struct wl_surface;

namespace latlab {

class WaylandWindow {
 public:
  // Connects to `display` ("" = $WAYLAND_DISPLAY), makes a `width` x
  // `height` toplevel titled "latlab present" and waits for its first
  // configure. Error with why (no compositor, no xdg_wm_base, ...). A
  // compositor without wp_presentation gives a window whose observer is
  // unavailable, with the reason.
  static Result<std::unique_ptr<WaylandWindow>> open(const std::string& display, uint32_t width,
                                                     uint32_t height);
  ~WaylandWindow();
  WaylandWindow(const WaylandWindow&) = delete;
  WaylandWindow& operator=(const WaylandWindow&) = delete;

  wl_display* display() const;
  wl_surface* surface() const;
  const std::string& name() const;  // the display's name, for messages

  // The observer as described before a run (available or why not).
  ScreenObserverInfo describe() const;
  // The window's thread dispatches latlab's queue from start to stop; stop
  // waits up to `grace_ns` for the feedback still asked.
  void start();
  void stop(int64_t grace_ns);
  // Asks when the next commit of the surface (frame `frame_id`'s present)
  // is shown; nothing without wp_presentation.
  void request_feedback(uint64_t frame_id);
  // When frame `frame_id` was shown (host clock); nullopt when it was
  // discarded, not reported, or not asked.
  std::optional<int64_t> shown_ns(uint64_t frame_id) const;
  // The observer after stop(): frames shown, discarded, refresh.
  ScreenObserverInfo info() const;

  struct State;  // the connection, the window and what the compositor reported

 private:
  explicit WaylandWindow(std::unique_ptr<State> state);
  std::unique_ptr<State> s_;
};

}  // namespace latlab
