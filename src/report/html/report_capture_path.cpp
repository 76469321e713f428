// "Where the time goes" of a capture: a frame's path from its start to the
// screen as the medians (and p99) of the per-frame figures in path order,
// and what the display path said (docs/capture.md, "Present completion").
#include <fmt/format.h>

#include <string>

#include "report/html/report_parts.hpp"

namespace latlab::html {
namespace {

struct Step {
  const char* figure;
  const char* span;
};

// The frame's path in order; each step one per-frame figure.
constexpr Step kPath[] = {
    {"cpu_busy", "frame start (the last present returned) \u2192 present called"},
    {"gpu_time", "the frame's GPU work, first to last command"},
    {"in_present_api", "present called \u2192 returned"},
    {"until_render_complete", "present called \u2192 GPU done"},
    {"until_displayed", "present called \u2192 present complete (below: what it is)"},
    {"between_displays", "one display time \u2192 the next (frames discarded between passed over)"},
};

// A step's frames, p50 and p99 cells; n/a where `d` has no value.
std::string step_tds(const Distribution* d) {
  if (d == nullptr || d->empty()) return fmt::format("<td>{0}</td><td>{0}</td><td>{0}</td>", na());
  return fmt::format("<td>{}</td><td>{}</td><td>{}</td>", d->count, number(d->p50), number(d->p99));
}

// What present_complete is, by the methods the sources used.
std::string completion_meaning(const CaptureResult& c) {
  std::string methods;
  for (const CaptureSourceInfo& s : c.sources) {
    if (!s.present_method.empty() && methods.find(s.present_method) == std::string::npos)
      methods += (methods.empty() ? "" : ", ") + s.present_method;
  }
  if (methods.empty())
    return "present_complete was not measured (the unavailable list says why): the path ends at "
           "the present call and the GPU.";
  return "present_complete by " + methods +
         ": wp_presentation is the compositor's time of the frame's display (on a real output "
         "with hw_clock the page flip; weston headless has no scan-out: its repaint timer), "
         "VK_GOOGLE_display_timing the driver's actual present time, VK_KHR_present_wait the "
         "host time the wait returned (after the display, not on it).";
}

// The screen observers' step: present called -> the observer saw the
// window's new contents; one that could not run says why.
std::string screen_rows(const CaptureResult& c) {
  std::string s;
  for (const CaptureScreenObserver& o : c.screen_observers) {
    const std::string span =
        o.available
            ? "present called \u2192 the screen observer " + o.name +
                  " saw the window's new contents (" +
                  fmt::format("{} of {} watched frames", o.frames_matched, o.frames_watched) + ")"
            : "screen observer " + o.name + " unavailable: " + o.reason;
    s += fmt::format(
        "<tr data-figure=\"until_screen_updated\" data-observer=\"{}\"><th>"
        "until_screen_updated</th><td>{}</td>{}</tr>\n",
        escape(o.name), escape(span),
        step_tds(o.available ? figure_of(o.figures, "until_screen_updated") : nullptr));
  }
  return s;
}

std::string display_table(const CaptureDisplay& d) {
  std::string t = "<table class=\"kv\">\n";
  row(t, "frames shown (a display time)", count(d.shown));
  row(t, "frames discarded by the compositor (dropped)", count(d.discarded));
  row(t, "refresh period reported, us (median)", number(d.refresh_us, 1));
  row(t, "shown frames flagged vsync / hw_clock / hw_completion / zero_copy",
      fmt::format("{} / {} / {} / {}", d.vsync, d.hw_clock, d.hw_completion, d.zero_copy));
  return t + "</table>\n";
}

}  // namespace

const Distribution* figure_of(const NamedDistributions& figures, std::string_view name) {
  for (const auto& [n, d] : figures) {
    if (n == name) return &d;
  }
  return nullptr;
}

std::string capture_time_path(const CaptureResult& c, const std::string& prefix) {
  std::string s = "<h3>Where the time goes</h3>\n";
  s += "<p>A frame's path from its start to the screen, one per-frame figure per step, in "
       "order; steps overlap (the GPU works while the CPU presents). Statistic: each figure's "
       "<b>median</b> and p99 over every frame that has it; a step no frame had is n/a, "
       "never 0. " +
       text(completion_meaning(c)) + "</p>\n";
  s += fmt::format(
      "<table class=\"pct\" id=\"{}capture-path\"><tr><th>step</th><th>span</th><th>frames</th>"
      "<th>p50, us</th><th>p99, us</th></tr>\n",
      prefix);
  for (const Step& step : kPath) {
    s += fmt::format("<tr data-figure=\"{0}\"><th>{0}</th><td>{1}</td>{2}</tr>\n", step.figure,
                     escape(step.span), step_tds(figure_of(c.figures, step.figure)));
  }
  s += screen_rows(c);
  s += "</table>\n";
  if (c.display.shown + c.display.discarded > 0) s += display_table(c.display);
  return s;
}

}  // namespace latlab::html
