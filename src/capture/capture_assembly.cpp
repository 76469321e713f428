#include "capture/capture_assembly.hpp"

#include <signal.h>

#include <algorithm>
#include <iterator>

#include "capture/capture_overhead.hpp"

namespace latlab::capture {
namespace {

const char* api_name(SourceApi a) {
  return a == SourceApi::vulkan ? "vulkan" : a == SourceApi::opengl ? "opengl" : "unknown";
}

// The observer's entry of the result: what it saw, or why it saw nothing.
CaptureScreenObserver screen_of(const SessionFacts& f, const ScreenSummary& sc) {
  std::string why = f.screen_why;
  if (why.empty() && f.watched.empty())
    why =
        "no window known: the program's sources reported no X11 window (a Vulkan surface other "
        "than xcb/xlib, GL on EGL's default display, or the program presented nothing)";
  CaptureScreenObserver o;
  o.name = "x11_damage";
  o.observes =
      "DamageNotify (raw rectangles) for the program's window on its X server: when the "
      "server had executed the drawing of the new contents (host time latlab read the "
      "event); not scan-out, not light";
  o.available = why.empty();
  o.reason = why;
  o.display = f.screen_display;
  for (const auto& w : f.watched) o.windows.push_back(w.window);
  o.frames_watched = sc.frames_watched;
  o.frames_matched = sc.frames_matched;
  o.events = sc.events;
  o.events_unmatched = sc.events_unmatched;
  o.figures = {{"until_screen_updated", sc.until_screen_updated}};
  return o;
}

NamedDistributions frame_figures_of(const CaptureSummary& s) {
  NamedDistributions f;
  for (size_t i = 0; i < kFrameFigureCount; ++i)
    f.emplace_back(to_string(static_cast<FrameFigure>(i)), s.frame_figures[i]);
  return f;
}

NamedDistributions submit_figures_of(const CaptureSummary& s) {
  NamedDistributions f;
  for (size_t i = 0; i < kSubmitFigureCount; ++i)
    f.emplace_back(to_string(static_cast<SubmitFigure>(i)), s.submit_figures[i]);
  return f;
}

// Each swapchain's figures, its source as an index in `sources` and the
// swapchain as the source's ordinal (the raw handles are in the frames CSV).
std::vector<CaptureSwapchainFigures> per_swapchain_of(const CaptureSummary& s,
                                                      const CaptureStream& st) {
  std::vector<CaptureSwapchainFigures> out;
  std::vector<std::pair<uint64_t, uint64_t>> seen;  // {source index, swapchains so far}
  for (const SwapchainSummary& w : s.per_swapchain) {
    const auto& src = st.sources();
    const auto it = std::find_if(src.begin(), src.end(), [&](const CapturedSource& c) {
      return c.pid == w.pid && c.source == w.source;
    });
    CaptureSwapchainFigures f;
    f.pid = w.pid;
    f.source = static_cast<uint64_t>(it - src.begin());
    auto n =
        std::find_if(seen.begin(), seen.end(), [&](const auto& p) { return p.first == f.source; });
    if (n == seen.end()) n = seen.insert(seen.end(), {f.source, 0});
    f.swapchain = n->second++;
    f.frames = w.frames;
    for (size_t i = 0; i < kFrameFigureCount; ++i)
      f.figures.emplace_back(to_string(static_cast<FrameFigure>(i)), w.frame_figures[i]);
    out.push_back(std::move(f));
  }
  return out;
}

CaptureStop stop_of(const SessionFacts& f, const CaptureStream& st) {
  CaptureStop c;
  c.stopped_by = f.stopped_by;
  if (f.plan->frames > 0) c.frames_limit = f.plan->frames;
  if (f.plan->seconds > 0) c.seconds_limit = f.plan->seconds;
  c.terminate = f.plan->terminate;
  if (f.signal_sent) c.signal_sent = *f.signal_sent;
  c.records_dropped = st.dropped();
  c.records_malformed = st.malformed();
  c.records_unknown = st.unknown();
  return c;
}

// How the source learnt present_complete: the methods its frames used, in
// PresentMethod order, else the device's plan from its hello.
std::string present_method_of(const CapturedSource& src, const CaptureSummary& s) {
  const auto it =
      std::find_if(s.present_methods.begin(), s.present_methods.end(),
                   [&](const auto& m) { return m.pid == src.pid && m.source == src.source; });
  std::string out;
  for (uint32_t m = 1; it != s.present_methods.end() && m < 32; ++m) {
    const char* name = present_method_name(static_cast<PresentMethod>(m));
    if ((it->methods & (1U << m)) != 0 && *name != '\0')
      out += (out.empty() ? "" : ", ") + std::string(name);
  }
  return out.empty() ? src.present_method : out;
}

// Why a capture holds no frame: an empty result says so, never only "0".
std::string no_frames_reason(const CaptureResult& c) {
  if (c.sources.empty()) {
    return "no frame: the program made no Vulkan device and no GL context that latlab's layer or "
           "interposer saw (it drew nothing, or loaded the API in a way latlab does not see)";
  }
  return "no frame: " + std::to_string(c.sources.size()) + " source" +
         (c.sources.size() == 1 ? "" : "s") + " attached but presented nothing (" +
         std::to_string(c.submits) + " submits seen: offscreen work has no frames)";
}

}  // namespace

const char* signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

std::string partial_reason(const SessionFacts& f, const CaptureStream& st) {
  std::vector<std::string> why;
  if (f.end.not_started) why.push_back("the program could not be started");
  if (f.end.signal != 0 && !(f.signal_sent && f.end.signal == *f.signal_sent))
    why.push_back("the program was ended by signal " + std::to_string(f.end.signal));
  if (f.stopped_by == "signal")
    why.push_back(std::string("latlab capture was interrupted (") + signal_name(f.interrupt) + ")");
  if (f.signal_sent == SIGKILL) why.push_back("latlab killed the program at a second interrupt");
  if (st.dropped() > 0)
    why.push_back(std::to_string(st.dropped()) + " records were dropped (the socket was full)");
  if (f.recording) {
    for (const auto& s : st.sources()) {
      if (!s.ended)
        why.push_back("a " + std::string(api_name(s.api)) + " source of pid " +
                      std::to_string(s.pid) +
                      " sent no end record (the program did not destroy its device, or died): "
                      "frames still being collected were lost");
    }
  }
  std::string out;
  for (const auto& w : why) out += (out.empty() ? "" : "; ") + w;
  return out;
}

CaptureResult assemble_capture(const SessionFacts& f, const CaptureStream& st,
                               const CaptureSummary& s, const ScreenSummary& sc) {
  CaptureResult c;
  c.partial_reason = partial_reason(f, st);
  c.program = {
      f.plan->program, f.pid, f.end.exited ? std::optional<int64_t>(f.end.exit_code) : std::nullopt,
      f.end.signal != 0 ? std::optional<int64_t>(f.end.signal) : std::nullopt, !f.end.exited};
  c.stop = stop_of(f, st);
  for (const auto& src : st.sources())
    c.sources.push_back({src.pid, api_name(src.api), src.device_name, src.clock_method,
                         src.source_name, present_method_of(src, s), src.ended});
  c.frames = s.frame_count;
  c.submits = s.submits;
  c.submits_without_work = s.submits_without_work;
  c.gpu_spans_missing = s.gpu_spans_missing;
  c.frames_with_missing_gpu = s.frames_with_missing_gpu;
  for (size_t i = 0; i < std::size(s.no_span_counts); ++i)
    c.submit_spans.emplace_back(to_string(static_cast<NoSpan>(i)), s.no_span_counts[i]);
  for (size_t i = 0; i < std::size(s.no_complete_counts); ++i)
    c.present_complete.emplace_back(to_string(static_cast<NoComplete>(i)), s.no_complete_counts[i]);
  c.display = s.display;
  c.figures = frame_figures_of(s);
  c.frame_times = s.frame_times;
  c.submit_figures = submit_figures_of(s);
  c.per_swapchain = per_swapchain_of(s, st);
  c.layer_cpu_per_submit = s.submit_figures[static_cast<size_t>(SubmitFigure::layer_cpu)];
  c.layer_cpu_per_present = s.frame_figures[static_cast<size_t>(FrameFigure::layer_present_cpu)];
  c.overhead = overhead_of(s, st.brackets());
  c.overhead.gpu_span_budget_percent = f.plan->gpu_span_budget_percent;
  c.bracketing = bracketing_of(st.brackets());
  for (const auto& [name, why] : f.not_attached) c.unavailable.push_back({name, why, f.pid});
  for (const auto& u : st.unavailable()) c.unavailable.push_back({u.name, u.reason, u.pid});
  if (c.frames == 0) c.unavailable.push_back({"frames", no_frames_reason(c), f.pid});
  c.screen_observers.push_back(screen_of(f, sc));
  return c;
}

}  // namespace latlab::capture
