// The X11 input of `latlab capture --input` (docs/capture.md, "Input"): on
// two connections of its own to the program's X server,
//  - a recorder thread selects XInput2 raw events on the root window (key
//    and button presses, pointer motion, every device) and time-stamps each
//    on the host clock when it reads it, keeping the server's own time
//    beside it; the same thread watches top-level windows being mapped, to
//    find the program's window when no frame source reports one (xterm);
//  - an injector thread sends the plan's event through XTest on the seeded
//    schedule's absolute deadlines (a timerfd armed with TFD_TIMER_ABSTIME,
//    no busy polling, its own timer slack), one marker per event: its
//    deadline, when the timer returned, when the request was about to be
//    written to the server (just before XFlush); published after the flush,
//    so its raw event may be read first.
//
// Built without libXi/libXtst (Debian libxi-dev, libxtst-dev), create()
// says so and the capture goes on without input.
//
// Threads: create, start and stop from one thread; take_*() and
// found_window() from any. Ownership: owns its connections and threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "capture/input_assignment.hpp"
#include "latlab/bench/capture_input.hpp"
#include "latlab/result.hpp"

namespace latlab::capture {

// A window the program mapped, and how it is known to be the program's.
struct FoundWindow {
  uint64_t window = 0;
  std::string found_by;  // "_NET_WM_PID" or "first window mapped"
};

class X11Input {
 public:
  // Connects to `display` ("" = $DISPLAY), checks XInput2 (2.2) and XTest,
  // looks the key up and starts recording. Error, with why: built without
  // the libraries, no display, no extension, a key name X does not know.
  static Result<std::unique_ptr<X11Input>> create(const std::string& display,
                                                  const CaptureInputSpec& spec);
  ~X11Input();
  X11Input(const X11Input&) = delete;
  X11Input& operator=(const X11Input&) = delete;

  // The program (`pid`): its windows are those whose _NET_WM_PID is `pid`,
  // or, where a window says no pid, the first top-level window mapped.
  void set_program(int64_t pid);
  // The program's window, once the recorder saw it mapped; nullopt before.
  std::optional<FoundWindow> found_window() const;

  // Gives `window` the keyboard focus and the pointer, then sends an event
  // at each deadline of `schedule` after `start` (host ns), `count` of them
  // (0: until stop()). Error when the window is gone.
  Result<void> start(uint64_t window, const ScheduleDesc& schedule, int64_t start, uint64_t count,
                     int64_t timer_slack_ns);
  // Stops both threads (the injector at once, the recorder after reading
  // for `grace_ns` more). Later calls do nothing.
  void stop(int64_t grace_ns);

  // What came since the last call, in order.
  std::vector<InputMarker> take_markers();
  std::vector<RawInputEvent> take_raw();
  // Deadlines reached so far (each is sent, or counted late and sent).
  uint64_t sent() const { return sent_.load(); }
  bool injector_done() const { return injector_done_.load(); }
  // The injector thread's timer slack, read back (-1: unknown or not started).
  int64_t timer_slack_ns() const { return slack_.load(); }
  const std::string& display() const { return display_; }

 private:
  X11Input() = default;
  void record_loop();
  void inject_loop(ScheduleDesc schedule, int64_t start, uint64_t count);

  struct Conn;
  std::unique_ptr<Conn> conn_;
  std::string display_;
  CaptureInputSpec spec_;
  // Pipes: a byte on one stops the injector, on the other the recorder.
  int stop_inject_[2] = {-1, -1};
  int stop_record_[2] = {-1, -1};
  std::thread recorder_, injector_;
  std::atomic<int64_t> pid_{-1};
  std::atomic<uint64_t> sent_{0};
  std::atomic<bool> injector_done_{false};
  std::atomic<int64_t> slack_{-1};
  mutable std::mutex mu_;
  std::vector<InputMarker> markers_;  // guarded by mu_
  std::vector<RawInputEvent> raw_;    // guarded by mu_
  std::optional<FoundWindow> found_;  // guarded by mu_
  std::optional<uint64_t> unnamed_;   // guarded by mu_: first mapped window without a pid
};

}  // namespace latlab::capture
