// The X11 screen observer of `latlab capture` (docs/capture.md, "The screen
// observer"): on a connection of its own to the program's X server it asks
// the DAMAGE extension to report every change of the program's window
// (XDamageReportRawRectangles: one DamageNotify per rectangle drawn, none
// coalesced, nothing to acknowledge) and time-stamps each DamageNotify on
// the host clock when its thread reads it. That is when the X server had
// the new contents in the window (it sends the event once it executed the
// drawing: a PutImage, a CopyArea, a Present flip), plus the server's send
// and latlab's wake-up; not when a display showed them (no scan-out, no
// panel: Xvfb has neither). Each event also keeps the server's own
// timestamp field (ms; Xorg and Xvfb on Linux take it from CLOCK_MONOTONIC,
// cut to 32 bits).
//
// Built without libxcb-damage (Debian libxcb-damage0-dev), create() says
// so and nothing else changes.
//
// Threads: create, watch and stop from one thread; take_events() from any.
// Ownership: the observer owns its connection and its reading thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "capture/screen_observer.hpp"
#include "latlab/result.hpp"

namespace latlab::capture {

class X11DamageObserver {
 public:
  // Connects to `display` ("" = $DISPLAY) and checks DAMAGE. Error, with
  // why: built without libxcb-damage, no X display, no DAMAGE extension.
  static Result<std::unique_ptr<X11DamageObserver>> create(const std::string& display);
  ~X11DamageObserver();
  X11DamageObserver(const X11DamageObserver&) = delete;
  X11DamageObserver& operator=(const X11DamageObserver&) = delete;

  // Reports `window`'s changes from now on. Returns the host time from
  // which every change is seen (after a round trip confirmed the Damage
  // object); error when the window does not exist (any more).
  Result<int64_t> watch(uint64_t window);
  // Reads for `grace_ns` more (updates of the last presents), then stops
  // the thread. Later calls do nothing.
  void stop(int64_t grace_ns);
  // The events since the last call, in arrival order (the caller keeps
  // what it needs: the observer holds only what came since).
  std::vector<ScreenEvent> take_events();
  const std::string& display() const { return display_; }

 private:
  X11DamageObserver() = default;
  void loop();
  void poke(char what);  // a byte to the thread: 0 look at xcb's queue, 1 stop

  struct Conn;
  std::unique_ptr<Conn> conn_;
  std::string display_;
  int wake_[2] = {-1, -1};  // a pipe: a byte on it stops the thread
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<ScreenEvent> events_;  // guarded by mu_
};

}  // namespace latlab::capture
