// The HTML report of a capture (kind "capture", docs/capture.md): the
// FPS and its lows, the program and how the recording stopped, the frame sources, the counts, the
// per-frame and per-submission figures as distributions, a chart of the
// per-frame figures at their percentiles and one of the frame time over the
// capture.
#include <fmt/format.h>

#include <algorithm>

#include "latlab/host_clock.hpp"
#include "report/html/report_charts.hpp"
#include "report/html/report_parts.hpp"

namespace latlab::html {
namespace {

std::string optional_int(const std::optional<int64_t>& v) { return v ? integer(*v) : na(); }

std::string run_table(const RunResult& r) {
  const CaptureResult& c = *r.capture;
  std::string argv;
  for (const std::string& a : c.program.argv) argv += (argv.empty() ? "" : " ") + a;
  std::string t = "<table class=\"kv\">\n";
  row(t, "program", "<code>" + text(argv) + "</code>");
  row(t, "pid", integer(c.program.pid));
  row(t, "exit code", optional_int(c.program.exit_code));
  row(t, "signal", optional_int(c.program.signal));
  row(t, "running when written", yes_no(c.program.running_when_written));
  row(t, "stopped by", text(c.stop.stopped_by));
  row(t, "frames limit", c.stop.frames_limit ? count(*c.stop.frames_limit) : na());
  row(t, "seconds limit", number(c.stop.seconds_limit, 3));
  row(t, "signal latlab sent", optional_int(c.stop.signal_sent));
  row(t, "records dropped, malformed, unknown",
      fmt::format("{}, {}, {}", c.stop.records_dropped, c.stop.records_malformed,
                  c.stop.records_unknown));
  row(t, "frames", count(c.frames));
  row(t, "submits (without work)", fmt::format("{} ({})", c.submits, c.submits_without_work));
  row(t, "GPU span budget",
      c.overhead.gpu_span_budget_percent
          ? fmt::format("{:g} % of the program's time", *c.overhead.gpu_span_budget_percent)
          : std::string("every submission timed"));
  if (c.overhead.gpu_span_price_us)
    row(t, "GPU span priced at",
        fmt::format("{:.1f} us (from the {})", *c.overhead.gpu_span_price_us,
                    c.overhead.gpu_span_price_from == "probe"
                        ? std::string("bracketing probe")
                        : "program's " + c.overhead.gpu_span_price_from));
  row(t, "added to vkCreateDevice, ms", number(c.overhead.setup_ms, 1));
  row(t, "GPU spans missing", count(c.gpu_spans_missing));
  row(t, "frames with a GPU span missing", count(c.frames_with_missing_gpu));
  for (const auto& [name, n] : c.submit_spans) row(t, "submissions: " + name, count(n));
  return t + "</table>\n";
}

// Average FPS and the lows (docs/capture.md, "FPS"); n/a where there is
// no frame time.
std::string fps_table(const CaptureResult& c) {
  const CaptureFps f = c.fps();
  std::string t = "<table class=\"kv\">\n";
  row(t, "average FPS", number(f.average, 1));
  row(t, "1% low FPS (p99 frame time)", number(f.low_1_percent, 1));
  row(t, "0.1% low FPS (p99.9 frame time)", number(f.low_0_1_percent, 1));
  row(t, "frame times (between presents)", count(f.frame_times));
  return t + "</table>\n";
}

// Each swapchain of each source apart (the figures above pool them).
std::string swapchains_table(const CaptureResult& c) {
  if (c.per_swapchain.empty()) return "<p class=\"na\">No swapchain presented.</p>\n";
  std::string t =
      "<table class=\"pct\"><tr><th>pid</th><th>api</th><th>source</th><th>swapchain</th>"
      "<th>frames</th><th>average FPS</th><th>1% low FPS</th><th>between presents p50, us</th>"
      "<th>p99</th><th>GPU busy p50, us</th></tr>\n";
  for (const CaptureSwapchainFigures& w : c.per_swapchain) {
    const CaptureFps f = w.fps();
    const std::string api = w.source < c.sources.size() ? c.sources[w.source].api : "";
    auto p = [&](const char* figure, bool p99) {
      const Distribution* d = figure_of(w.figures, figure);
      return d && !d->empty() ? number(p99 ? d->p99 : d->p50) : na();
    };
    t += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td></tr>\n",
        w.pid, text_or_na(api), w.source, w.swapchain, w.frames, number(f.average, 1),
        number(f.low_1_percent, 1), p("between_presents", false), p("between_presents", true),
        p("gpu_busy", false));
  }
  return t + "</table>\n";
}

// What capture cost the program per frame, and what a span includes
// (docs/capture.md, "Cost" and "What a span includes").
std::string cost_table(const CaptureResult& c) {
  const CaptureOverhead& o = c.overhead;
  std::string t = "<table class=\"kv\">\n";
  row(t, "latlab's CPU per frame, us (calls and threads)", number(o.layer_cpu_per_frame_us, 1));
  row(t, "of it in latlab's threads, us", number(o.threads_cpu_per_frame_us, 1));
  row(t, "latlab threads", count(o.threads));
  row(t, "driver CPU per frame for the layer's command buffers, us (estimate)",
      number(o.driver_cpu_per_frame_us, 1));
  row(t, "device time per frame the layer's command buffers add, us (estimate)",
      number(o.gpu_per_frame_us, 1));
  row(t, "not included", text(o.leaves_out));
  for (const CaptureBracketing& b : c.bracketing) {
    row(t,
        fmt::format("span offset, pid {} queue {}.{}: before / after p50, us", b.pid,
                    b.queue_family, b.queue_index),
        fmt::format("{:.1f} / {:.1f} (min {:.1f} / {:.1f}, max {:.1f} / {:.1f})", b.before_p50_us,
                    b.after_p50_us, b.before_min_us, b.after_min_us, b.before_max_us,
                    b.after_max_us));
  }
  return t + "</table>\n";
}

std::string sources_table(const CaptureResult& c) {
  if (c.sources.empty())
    return "<p class=\"warn\">No frame source reported: the program made no Vulkan device or GL "
           "context latlab could attach to.</p>\n";
  std::string t =
      "<table><tr><th>pid</th><th>api</th><th>device</th><th>clock method</th><th>source</th>"
      "<th>ended</th></tr>\n";
  for (const CaptureSourceInfo& s : c.sources) {
    t +=
        fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                    s.pid, text(s.api), text_or_na(s.device), text_or_na(s.clock_method),
                    text(s.source), yes_no(s.ended));
  }
  return t + "</table>\n";
}

// Which figures' percentiles came from a histogram (a long capture), and
// how close they are; "" when every one is exact.
std::string approximate_note(const NamedDistributions& figures) {
  std::string names;
  double resolution = 0;
  for (const auto& [name, d] : figures) {
    if (!d.percentile_resolution) continue;
    names += (names.empty() ? "" : ", ") + name;
    resolution = std::max(resolution, *d.percentile_resolution);
  }
  if (names.empty()) return "";
  return fmt::format(
      "<p class=\"na\">Approximate percentiles ({}): from a histogram, each within {:.3g} % of "
      "its exact value (more samples than are kept exactly); count, mean, min and max are "
      "exact.</p>\n",
      escape(names), resolution * 100);
}

std::string figures_table(const char* title, const NamedDistributions& figures) {
  std::string t =
      fmt::format("<table class=\"pct\"><tr><th>{}, us</th>{}</tr>\n", title, kDistributionThs);
  for (const auto& [name, d] : figures) {
    t += "<tr><th>" + escape(name) + "</th>" + distribution_tds(d) + "</tr>\n";
  }
  return t + "</table>\n" + approximate_note(figures);
}

std::string unavailable_items(const RunResult& r) {
  std::string out;
  if (r.partial())
    out += "<p class=\"warn\">Partial capture: " + text(r.partial_reason()) + "</p>\n";
  const std::vector<CaptureUnavailable>& u = r.capture->unavailable;
  if (u.empty()) return out + "<p>Unavailable: nothing (every source gave every value).</p>\n";
  out += "<ul class=\"warn\">\n";
  for (const CaptureUnavailable& c : u)
    out += fmt::format("<li><b>{}</b> (pid {}): {}</li>\n", text(c.name), c.pid, text(c.reason));
  return out + "</ul>\n";
}

// --input (docs/capture.md, "Input to photon"): settings and counts.
std::string input_table(const CaptureInput& in) {
  auto counts = [](const std::vector<std::pair<std::string, uint64_t>>& c) {
    std::string out;
    for (const auto& [why, n] : c) out += (out.empty() ? "" : ", ") + fmt::format("{} {}", n, why);
    return out.empty() ? std::string("none") : escape(out);
  };
  std::string t = "<table class=\"kv\">\n";
  row(t, "input", text(in.spec));
  row(t, "schedule",
      fmt::format("seed {}, {}-{} us apart", in.seed,
                  number(static_cast<double>(in.min_interval_ns) / 1e3),
                  number(static_cast<double>(in.max_interval_ns) / 1e3)));
  row(t, "window",
      in.window == 0 ? na() : fmt::format("{} ({})", in.window, text(in.window_found_by)));
  row(t, "sent / seen by XInput2", fmt::format("{} / {}", in.sent, in.seen));
  row(t, "assigned to a frame", fmt::format("{}", in.assigned));
  row(t, "not assigned", counts(in.not_assigned));
  if (in.reaction) {
    row(t, "reaction region", in.region.empty() ? "the whole window" : text(in.region));
    row(t, "reactions", fmt::format("{}", in.reactions));
    row(t, "no reaction", counts(in.no_reaction));
  }
  return t + "</table>\n";
}

std::string machine_table(const RunResult& r) {
  std::string t = "<table class=\"kv\">\n";
  meta_rows(t, r);
  row(t, "machine.hostname", text(r.meta.machine.hostname));
  row(t, "machine.os", text_or_na(r.meta.machine.os));
  row(t, "machine.kernel", text(r.meta.machine.kernel));
  row(t, "machine.cpu_model", text_or_na(r.meta.machine.cpu_model));
  row(t, "host clock", kHostClockName);
  return t + "</table>\n";
}

}  // namespace

std::string capture_section(const RunResult& r, const std::string& prefix, json& charts) {
  const CaptureResult& c = *r.capture;
  std::string s = "<h3>Unavailable and missing</h3>\n" + unavailable_items(r);
  s += "<h3>FPS</h3>\n" + fps_table(c);
  s += capture_time_path(c, prefix);
  s += "<h3>Program and recording</h3>\n" + run_table(r);
  s += "<h3>Frame sources</h3>\n" + sources_table(c);
  s += "<h3>Per frame (present to present; PresentMon's columns, docs/capture.md)</h3>\n" +
       figures_table("per frame", c.figures);
  s += capture_charts(c, prefix, charts);
  s += "<h3>Per swapchain (each source's swapchain apart)</h3>\n" + swapchains_table(c);
  s += "<h3>Per submission</h3>\n" + figures_table("per submission", c.submit_figures);
  s += "<h3>The layer's own cost</h3>\n" +
       figures_table("layer CPU", {{"per submit", c.layer_cpu_per_submit},
                                   {"per present", c.layer_cpu_per_present}}) +
       cost_table(c);
  if (c.input) {
    NamedDistributions figures = c.input->figures;
    figures.emplace_back("injector_lateness", c.input->injector_lateness);
    figures.emplace_back("timer_lateness", c.input->timer_lateness);
    s += "<h3>Input to photon (injected input, docs/capture.md)</h3>\n" + input_table(*c.input) +
         figures_table("per input", figures);
  }
  s += "<h3>Machine</h3>\n" + machine_table(r);
  return s;
}

}  // namespace latlab::html
