// The result reader: a document of kind "capture" (docs/capture.md, "The
// result"): the program, how the recording stopped, the frame sources, the
// counts and every per-frame (process-wide and per swapchain) and
// per-submission figure.
#include <fmt/format.h>

#include "report/result_sections.hpp"

namespace latlab::reading {
namespace {

CapturedProgram read_program(const Obj& p) {
  CapturedProgram out;
  const json& argv = p.array("argv");
  for (size_t i = 0; i < argv.size(); ++i)
    out.argv.push_back(str_value(argv[i], fmt::format("{}[{}]", p.key_path("argv"), i)));
  out.pid = p.i64("pid");
  out.exit_code = p.i64_or_null("exit_code");
  out.signal = p.i64_or_null("signal");
  out.running_when_written = p.boolean("running_when_written");
  return out;
}

CaptureStop read_stop(const Obj& c) {
  CaptureStop out;
  out.stopped_by = c.str("stopped_by");
  out.frames_limit = c.u64_or_null("frames_limit");
  out.seconds_limit = c.number_or_null("seconds_limit");
  c.opt("terminate", out.terminate);
  if (c.has("signal_sent")) out.signal_sent = c.i64_or_null("signal_sent");
  c.opt("records_dropped", out.records_dropped);
  c.opt("records_malformed", out.records_malformed);
  c.opt("records_unknown", out.records_unknown);
  return out;
}

std::vector<CaptureSourceInfo> read_sources(const Obj& doc) {
  std::vector<CaptureSourceInfo> out;
  const json& a = doc.array("sources");
  for (size_t i = 0; i < a.size(); ++i) {
    const Obj s(a[i], fmt::format("{}[{}]", doc.key_path("sources"), i));
    out.push_back({s.i64("pid"), s.str("api"), s.str_or_empty("device"),
                   s.str_or_empty("clock_method"), s.str("source"),
                   s.has("present_method") ? s.str_or_empty("present_method") : std::string(),
                   s.boolean("ended")});
  }
  return out;
}

NamedDistributions read_named(const Obj& o) {
  NamedDistributions out;
  for (auto it = o.raw().begin(); it != o.raw().end(); ++it)
    out.emplace_back(it.key(), distribution_value(it.value(), o.key_path(it.key())));
  return out;
}

// Absent from captures written before per-swapchain figures existed.
std::vector<CaptureSwapchainFigures> read_per_swapchain(const Obj& doc) {
  std::vector<CaptureSwapchainFigures> out;
  if (!doc.has("per_swapchain")) return out;
  const json& a = doc.array("per_swapchain");
  for (size_t i = 0; i < a.size(); ++i) {
    const Obj w(a[i], fmt::format("{}[{}]", doc.key_path("per_swapchain"), i));
    out.push_back({w.i64("pid"), w.u64("source"), w.u64("swapchain"), w.u64("frames"),
                   read_named(w.obj("figures"))});
  }
  return out;
}

// Absent from captures written before the series existed (read as none).
CaptureFrameTimes read_frame_times(const Obj& doc) {
  CaptureFrameTimes out;
  if (!doc.has("frame_times")) return out;
  const Obj t = doc.obj("frame_times");
  out.frames_per_bucket = t.u64("frames_per_bucket");
  const json& ts = t.array("t_s");
  const json* cols[] = {&t.array("frames"), &t.array("min_us"), &t.array("mean_us"),
                        &t.array("max_us")};
  for (const json* c : cols) {
    if (c->size() != ts.size()) fail(t.key_path("t_s"), "the columns differ in length");
  }
  for (size_t i = 0; i < ts.size(); ++i) {
    auto at = [&](const char* key) { return fmt::format("{}[{}]", t.key_path(key), i); };
    out.buckets.push_back({number_value(ts[i], at("t_s")), u64_value((*cols[0])[i], at("frames")),
                           number_value((*cols[1])[i], at("min_us")),
                           number_value((*cols[2])[i], at("mean_us")),
                           number_value((*cols[3])[i], at("max_us"))});
  }
  return out;
}

std::vector<CaptureUnavailable> read_unavailable(const Obj& doc) {
  std::vector<CaptureUnavailable> out;
  const json& a = doc.array("unavailable");
  for (size_t i = 0; i < a.size(); ++i) {
    const Obj u(a[i], fmt::format("{}[{}]", doc.key_path("unavailable"), i));
    out.push_back({u.str("name"), u.str("reason"), u.i64("pid")});
  }
  return out;
}

std::vector<std::pair<std::string, uint64_t>> read_counts(const Obj& o) {
  std::vector<std::pair<std::string, uint64_t>> out;
  for (auto it = o.raw().begin(); it != o.raw().end(); ++it)
    out.emplace_back(it.key(), u64_value(it.value(), o.key_path(it.key())));
  return out;
}

// Results written before captures had a screen observer
// have none: the vector stays empty.
std::vector<CaptureScreenObserver> read_screens(const Obj& doc) {
  std::vector<CaptureScreenObserver> out;
  if (!doc.has("screen_observers")) return out;
  const json& a = doc.array("screen_observers");
  for (size_t i = 0; i < a.size(); ++i) {
    const Obj s(a[i], fmt::format("{}[{}]", doc.key_path("screen_observers"), i));
    CaptureScreenObserver o;
    o.name = s.str("name");
    o.observes = s.str("observes");
    o.available = s.boolean("available");
    o.reason = s.str_or_empty("reason");
    o.display = s.str_or_empty("display");
    const json& w = s.array("windows");
    for (size_t k = 0; k < w.size(); ++k)
      o.windows.push_back(u64_value(w[k], fmt::format("{}[{}]", s.key_path("windows"), k)));
    o.frames_watched = s.u64("frames_watched");
    o.frames_matched = s.u64("frames_matched");
    o.events = s.u64("events");
    o.events_unmatched = s.u64("events_unmatched");
    o.figures = read_named(s.obj("figures"));
    out.push_back(std::move(o));
  }
  return out;
}

// `input` (capture_input_report.cpp writes it); absent without --input.
std::optional<CaptureInput> read_input(const Obj& doc) {
  if (!doc.has("input")) return std::nullopt;
  const Obj o = doc.obj("input");
  CaptureInput in;
  in.spec = o.str("spec");
  in.seed = o.u64("seed");
  in.min_interval_ns = o.i64("min_interval_ns");
  in.max_interval_ns = o.i64("max_interval_ns");
  in.reaction = o.boolean("reaction");
  in.region = o.str_or_empty("region");
  in.display = o.str_or_empty("display");
  in.window = o.u64_or_null("window").value_or(0);
  in.window_found_by = o.str_or_empty("window_found_by");
  in.timer_slack_ns = o.i64_or_null("timer_slack_ns").value_or(-1);
  in.scheduled = o.u64("scheduled");
  in.sent = o.u64("sent");
  in.seen = o.u64("seen");
  in.other_events = o.u64("other_events");
  in.assigned = o.u64("assigned");
  in.not_assigned = read_counts(o.obj("not_assigned"));
  in.reactions = o.u64_or_null("reactions").value_or(0);
  in.no_reaction = read_counts(o.obj("no_reaction"));
  in.injector_lateness = o.distribution("injector_lateness");
  in.timer_lateness = o.distribution("timer_lateness");
  in.figures = read_named(o.obj("figures"));
  in.server_offset_min_ms = o.number_or_null("server_offset_min_ms");
  in.server_offset_max_ms = o.number_or_null("server_offset_max_ms");
  return in;
}

}  // namespace

void read_capture(const Obj& doc, RunResult& r) {
  CaptureResult& c = r.capture.emplace();
  c.program = read_program(doc.obj("program"));
  c.stop = read_stop(doc.obj("capture"));
  c.sources = read_sources(doc);
  c.frames = doc.u64("frames");
  c.submits = doc.u64("submits");
  doc.opt("submits_without_work", c.submits_without_work);
  doc.opt("gpu_spans_missing", c.gpu_spans_missing);
  doc.opt("frames_with_missing_gpu", c.frames_with_missing_gpu);
  if (doc.has("submit_spans")) c.submit_spans = read_counts(doc.obj("submit_spans"));
  if (doc.has("present_complete")) c.present_complete = read_counts(doc.obj("present_complete"));
  if (doc.has("display")) {
    const Obj d = doc.obj("display");
    c.display.shown = d.u64("shown");
    c.display.discarded = d.u64("discarded");
    if (d.has("refresh_us")) c.display.refresh_us = d.number_or_null("refresh_us");
    const Obj f = d.obj("flags");
    c.display.vsync = f.u64("vsync");
    c.display.hw_clock = f.u64("hw_clock");
    c.display.hw_completion = f.u64("hw_completion");
    c.display.zero_copy = f.u64("zero_copy");
  }
  c.figures = read_named(doc.obj("figures"));
  c.frame_times = read_frame_times(doc);
  c.submit_figures = read_named(doc.obj("submit_figures"));
  c.per_swapchain = read_per_swapchain(doc);
  if (doc.has("overhead")) {
    const Obj o = doc.obj("overhead");
    c.layer_cpu_per_submit = o.distribution("layer_cpu_per_submit");
    c.layer_cpu_per_present = o.distribution("layer_cpu_per_present");
    CaptureOverhead& ov = c.overhead;
    if (o.has("threads_cpu_per_frame_us"))
      ov.threads_cpu_per_frame_us = o.number_or_null("threads_cpu_per_frame_us");
    if (o.has("layer_cpu_per_frame_us"))
      ov.layer_cpu_per_frame_us = o.number_or_null("layer_cpu_per_frame_us");
    if (o.has("driver_cpu_per_frame_us"))
      ov.driver_cpu_per_frame_us = o.number_or_null("driver_cpu_per_frame_us");
    if (o.has("layer_cpu_us")) ov.layer_cpu_us = o.number_or_null("layer_cpu_us");
    if (o.has("driver_cpu_us")) ov.driver_cpu_us = o.number_or_null("driver_cpu_us");
    o.opt("threads", ov.threads);
    o.opt("bracketed_submits", ov.bracketed_submits);
    o.opt("leaves_out", ov.leaves_out);
  }
  if (doc.has("bracketing")) {
    const json& arr = doc.array("bracketing");
    for (size_t i = 0; i < arr.size(); ++i) {
      const Obj b(arr[i], fmt::format("{}[{}]", doc.key_path("bracketing"), i));
      const Obj before = b.obj("before_us");
      const Obj after = b.obj("after_us");
      c.bracketing.push_back({b.i64("pid"), b.u32("queue_family"), b.u32("queue_index"),
                              b.u32("rounds"), before.number("p50"), before.number("min"),
                              before.number("max"), after.number("p50"), after.number("min"),
                              after.number("max"), b.number("cpu_per_submit_us")});
    }
  }
  c.unavailable = read_unavailable(doc);
  c.screen_observers = read_screens(doc);
  c.input = read_input(doc);
}

}  // namespace latlab::reading
