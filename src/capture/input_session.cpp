#include "capture/input_session.hpp"

#include <utility>

namespace latlab::capture {

InputSession::InputSession(const CaptureInputPlan& plan, std::vector<InputRowSink*> sinks)
    : plan_(plan), sinks_(std::move(sinks)), assigner_(plan.reaction, [this](const InputRow& row) {
        for (InputRowSink* s : sinks_) s->input(row, plan_.reaction);
      }) {
  auto x = X11Input::create("", plan.spec);
  if (x) {
    x11_ = std::move(*x);
  } else {
    why_ = x.error().message;
  }
}

void InputSession::set_program(int64_t pid) {
  if (x11_) x11_->set_program(pid);
}

void InputSession::source_window(uint64_t window) {
  if (window_ == 0 && started_at_ == kNoTime) {
    window_ = window;
    found_by_ = "frame source";
  }
}

void InputSession::take() {
  if (!x11_) return;
  for (const InputMarker& m : x11_->take_markers()) {
    ++sent_;
    last_sent_ = m.sent;
    assigner_.add_input(m);
  }
  for (const RawInputEvent& e : x11_->take_raw()) assigner_.add_raw(e, plan_.spec.kind);
}

std::optional<uint64_t> InputSession::poll(int64_t now) {
  if (!x11_ || stopped_) return std::nullopt;
  take();
  if (started_at_ != kNoTime) return std::nullopt;
  std::optional<uint64_t> watch;
  if (window_ == 0) {
    // A window seen mapped is taken once a frame source had time to report
    // its own (the program makes its surface after mapping the window).
    const auto w = x11_->found_window();
    if (w && mapped_at_ == kNoTime) mapped_at_ = now;
    if (!w || now - mapped_at_ < kSourceWindowWaitNs) return std::nullopt;
    window_ = w->window;
    found_by_ = w->found_by;
    // Its changes are what reaction mode measures; no frame is paired with
    // a window no source reported.
    if (plan_.reaction) watch = window_;
  }
  started_at_ = now + plan_.start_delay_ns;
  if (auto r = x11_->start(window_, plan_.schedule, started_at_, plan_.count, plan_.timer_slack_ns);
      !r) {
    why_ = r.error().message;
    x11_->stop(0);
    stopped_ = true;
  }
  return watch;
}

void InputSession::add_damage(std::span<const ScreenEvent> events) {
  if (!plan_.reaction || window_ == 0) return;
  for (const ScreenEvent& e : events) {
    if (e.window == window_ && (!plan_.region || overlaps(e, *plan_.region)))
      assigner_.add_damage(e);
  }
}

bool InputSession::done(int64_t now) const {
  return plan_.count > 0 && sent_ >= plan_.count && now - last_sent_ >= kAfterLastNs;
}

void InputSession::stop() {
  if (!x11_) return;
  if (!stopped_) x11_->stop(20'000'000);  // the raw events of the last inputs
  stopped_ = true;
  take();
}

void InputSession::finish(bool frames_seen) { assigner_.finish(frames_seen); }

void InputSession::add_to(CaptureResult& r) const {
  CaptureInput in;
  in.spec = to_string(plan_.spec);
  in.seed = plan_.schedule.seed;
  in.min_interval_ns = plan_.schedule.min_interval_ns;
  in.max_interval_ns = plan_.schedule.max_interval_ns;
  in.reaction = plan_.reaction;
  if (plan_.region) in.region = to_string(*plan_.region);
  in.display = x11_ ? x11_->display() : "";
  in.window = window_;
  in.window_found_by = found_by_;
  in.timer_slack_ns = x11_ ? x11_->timer_slack_ns() : -1;
  const InputTotals t = assigner_.totals();
  in.scheduled = sent_;
  in.sent = sent_;
  in.seen = t.seen;
  in.other_events = t.other_events;
  in.assigned = t.assigned;
  in.not_assigned = t.not_assigned;
  in.reactions = t.reactions;
  in.no_reaction = t.no_reaction;
  in.injector_lateness = t.injector_lateness;
  in.timer_lateness = t.timer_lateness;
  in.figures = t.figures;
  if (t.server_offset_min_us)
    in.server_offset_min_ms = static_cast<double>(*t.server_offset_min_us) / 1e3;
  if (t.server_offset_max_us)
    in.server_offset_max_ms = static_cast<double>(*t.server_offset_max_us) / 1e3;
  const auto pid = r.program.pid;
  if (!why_.empty()) {
    r.unavailable.push_back({"input", why_, pid});
  } else if (window_ == 0) {
    r.unavailable.push_back(
        {"input",
         "the program's window was never found (no frame source reported one, and no "
         "top-level window with its _NET_WM_PID or without one was mapped)",
         pid});
  }
  if (sent_ > 0 && r.frames == 0)
    r.unavailable.push_back(
        {"input_to_frame_start",
         "no frame: the program presented nothing latlab's sources saw, so no input could be "
         "assigned to a frame (reaction mode measures such programs: --input-reaction)",
         pid});
  // Figures of the assigned frames that none of them had.
  const std::pair<const char*, const char*> frame_figures[] = {
      {"input_to_gpu_end",
       "no assigned frame has a GPU end (see gpu_spans_missing and the "
       "sources' clock_method)"},
      {"input_to_present_complete",
       "no assigned frame has a present completion (see present_complete: the driver offers "
       "neither present wait nor display timing)"},
      {"input_to_screen_updated",
       "no assigned frame was paired with an update of its window (its source named no X "
       "window for it: a glXCreateWindow drawable, a Wayland surface; or the screen observer is "
       "unavailable: see screen_observers)"}};
  for (const auto& [name, why] : frame_figures) {
    const Distribution* d = in.figure(name);
    if (in.assigned > 0 && d != nullptr && d->empty()) r.unavailable.push_back({name, why, pid});
  }
  r.input = std::move(in);
}

}  // namespace latlab::capture
