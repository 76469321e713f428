// The X server framebuffer observer (private to the Vulkan backend): a thread
// that reads the frame-id pattern (frame_pattern.hpp) out of the X server's
// framebuffer, where a window shows it, and time-stamps when each frame's
// pattern is first there. It sees what the X server holds (what a scan-out
// or a screen grab would take), not light from a panel: on Xvfb there is no
// panel at all.
//
// Reads: MIT-SHM XShmGetImage of the root window over the pattern's
// rectangle (xcb-shm), or a plain GetImage where the server has no MIT-SHM;
// on its own X connection, every `poll_period_ns` on absolute deadlines
// (clock_nanosleep, no spinning). A frame's screen time is the host time
// the read that first held its pattern returned; the pattern reached the
// framebuffer between the previous read's request and that reply, so the
// time is late by 0 .. (period + one read), never early: each frame's own
// window (that reply - the previous request) is kept, and the largest is
// the observer's stated error bound.
//
// Threads: create/start/stop from one thread; note_presented() from the
// presenting thread; first_seen() and info() after stop().
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "latlab/result.hpp"
#include "latlab/core/present_path.hpp"

namespace latlab {

class X11FramebufferObserver {
 public:
  // Opens its own connection to `display` and finds where `window`'s
  // top-left corner is on the root window. Error with why it cannot observe
  // (no connection, a pixel format other than 32 bits per pixel, ...).
  static Result<std::unique_ptr<X11FramebufferObserver>> create(const std::string& display,
                                                                uint32_t window,
                                                                int64_t poll_period_ns);
  ~X11FramebufferObserver();
  X11FramebufferObserver(const X11FramebufferObserver&) = delete;
  X11FramebufferObserver& operator=(const X11FramebufferObserver&) = delete;

  void start();
  // Keeps polling for `grace_ns` (late frames), then joins the thread.
  void stop(int64_t grace_ns);
  // The id of the frame last handed to the present call: the pattern holds
  // 32 bits, widened to 64 around it.
  void note_presented(uint64_t frame_id) {
    last_presented_.store(frame_id, std::memory_order_relaxed);
  }
  std::optional<int64_t> first_seen(uint64_t frame_id) const;
  ScreenObserverInfo info() const;
  static ScreenObserverInfo describe(int64_t poll_period_ns);  // name, observes, error

 private:
  X11FramebufferObserver() = default;
  bool read_pattern(uint32_t* pixels);  // kWidth x kHeight, row-major
  void loop();

  struct Conn;
  std::unique_ptr<Conn> conn_;
  int64_t period_ns_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> last_presented_{0};
  std::thread thread_;
  // Written by the thread, read after join.
  std::vector<std::pair<uint64_t, int64_t>> seen_;  // (frame id, host ns), ids rising
  std::vector<int64_t> read_ns_;
  std::vector<int64_t> windows_;  // per frame seen: its reply - the previous request
  uint64_t polls_ = 0;
  uint64_t unreadable_ = 0;
  int64_t cpu_ns_ = 0;
  int64_t wall_ns_ = 0;
  bool shm_ = false;
};

}  // namespace latlab
