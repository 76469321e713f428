// The input part of a capture session (docs/capture.md, "Input"): the X11
// recorder and injector (x11_input.hpp), the program's window, and the
// assignment of each input to its frame and reaction (input_assignment.hpp),
// driven by the session's poll loop. It is one of the pipeline's row sinks:
// each frame row, once final, comes here too.
//
// Threads: the session's thread only (the X11 threads are x11_input's).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "capture/capture_row_sink.hpp"
#include "capture/input_assignment.hpp"
#include "capture/x11_input.hpp"
#include "latlab/bench/capture_input.hpp"
#include "latlab/bench/capture_result.hpp"

namespace latlab::capture {

class InputSession final : public CaptureRowSink {
 public:
  // After the last input, frames and reactions have this long to come
  // before `count` stops the recording (ns).
  static constexpr int64_t kAfterLastNs = 500'000'000;
  // A window seen mapped is the program's only if no frame source reported
  // one within this long (ns).
  static constexpr int64_t kSourceWindowWaitNs = 300'000'000;

  // Connects to $DISPLAY and starts recording (before the program starts,
  // so that its window is seen mapped). A failure is kept for the result.
  InputSession(const CaptureInputPlan& plan, std::vector<InputRowSink*> sinks);

  void set_program(int64_t pid);
  // A window a frame source reported (preferred to one seen mapped).
  void source_window(uint64_t window);
  // Takes what the X11 threads produced; starts the injector once the
  // program's window is known. Returns that window once, when it was found
  // by being mapped in reaction mode (the session watches it for changes),
  // else nullopt.
  std::optional<uint64_t> poll(int64_t now);
  // The screen observer's events (of any watched window).
  void add_damage(std::span<const ScreenEvent> events);
  // Gives up on waits past the limits.
  void release(int64_t now) { assigner_.release(now); }
  // `count` inputs were sent and kAfterLastNs passed since the last.
  bool done(int64_t now) const;
  // When the first deadline was set (kNoTime: not yet).
  int64_t started_at() const { return started_at_; }
  // Stops the X11 threads and takes what they still had.
  void stop();
  // Every frame row was released: the rest of the inputs are.
  void finish(bool frames_seen);
  // The result's input section, and what could not be observed.
  void add_to(CaptureResult& result) const;

  void frame(const FrameRowView& view, const CaptureRecords& context) override {
    assigner_.add_frame(view.row, context.source_index(view.row.pid, view.row.record.head.source));
  }
  void submit(const SubmitRecord&, const CaptureRecords&) override {}

 private:
  void take();

  CaptureInputPlan plan_;
  std::vector<InputRowSink*> sinks_;
  std::unique_ptr<X11Input> x11_;
  std::string why_;  // why there is no input ("" when there is)
  InputAssigner assigner_;
  uint64_t window_ = 0;
  std::string found_by_;
  int64_t mapped_at_ = kNoTime;  // when a window was first seen mapped
  int64_t started_at_ = kNoTime;
  int64_t last_sent_ = kNoTime;
  uint64_t sent_ = 0;
  bool stopped_ = false;
};

}  // namespace latlab::capture
