// The result reader: a document of kind "capture" (docs/capture.md, "The
// result"): the program, how the recording stopped, the frame sources, the
// counts and every per-frame (process-wide and per swapchain) and
// per-submission figure.
#include <fmt/format.h>

#include "report/result_fields.hpp"
#include "report/result_sections.hpp"

namespace latlab::reading {
namespace {

using NamedCounts = std::vector<std::pair<std::string, uint64_t>>;

template <class Rec>
std::vector<Rec> records(const Obj& doc, std::string_view key, fields::Table<Rec> table) {
  return fields::read_records<Rec>(doc.at(key), doc.key_path(key), table);
}

// A value the field tables' codec reads (named distributions, counts).
template <class V>
V value(const Obj& o, std::string_view key) {
  return fields::scalar_value<V>(o.at(key), o.key_path(key));
}

// Absent from captures written before per-swapchain figures existed.
std::vector<CaptureSwapchainFigures> read_per_swapchain(const Obj& doc) {
  std::vector<CaptureSwapchainFigures> out;
  if (!doc.has("per_swapchain")) return out;
  const json& a = doc.array("per_swapchain");
  for (size_t i = 0; i < a.size(); ++i) {
    const Obj w(a[i], fmt::format("{}[{}]", doc.key_path("per_swapchain"), i));
    out.push_back({w.i64("pid"), w.u64("source"), w.u64("swapchain"), w.u64("frames"),
                   value<NamedDistributions>(w, "figures")});
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

}  // namespace

void read_capture(const Obj& doc, RunResult& r) {
  CaptureResult& c = r.capture.emplace();
  c.program =
      fields::read_object<CapturedProgram>(doc.obj("program"), fields::kCapturedProgramFields);
  c.stop = fields::read_object<CaptureStop>(doc.obj("capture"), fields::kCaptureStopFields);
  c.sources = records<CaptureSourceInfo>(doc, "sources", fields::kCaptureSourceFields);
  c.frames = doc.u64("frames");
  c.submits = doc.u64("submits");
  doc.opt("submits_without_work", c.submits_without_work);
  doc.opt("gpu_spans_missing", c.gpu_spans_missing);
  doc.opt("frames_with_missing_gpu", c.frames_with_missing_gpu);
  if (doc.has("submit_spans")) c.submit_spans = value<NamedCounts>(doc, "submit_spans");
  if (doc.has("present_complete")) c.present_complete = value<NamedCounts>(doc, "present_complete");
  if (doc.has("display"))
    c.display = fields::read_object<CaptureDisplay>(doc.obj("display"), fields::kDisplayFields);
  c.figures = value<NamedDistributions>(doc, "figures");
  c.frame_times = read_frame_times(doc);
  c.submit_figures = value<NamedDistributions>(doc, "submit_figures");
  c.per_swapchain = read_per_swapchain(doc);
  if (doc.has("overhead")) {
    fields::read_fields(doc.obj("overhead"), fields::kLayerCostFields, c);
    fields::read_fields(doc.obj("overhead"), fields::kOverheadFields, c.overhead);
  }
  if (doc.has("bracketing"))
    c.bracketing = records<CaptureBracketing>(doc, "bracketing", fields::kBracketingFields);
  c.unavailable =
      records<CaptureUnavailable>(doc, "unavailable", fields::kCaptureUnavailableFields);
  // Results written before captures had a screen observer have none.
  if (doc.has("screen_observers")) {
    c.screen_observers =
        records<CaptureScreenObserver>(doc, "screen_observers", fields::kScreenObserverFields);
  }
  if (doc.has("input"))  // with --input only
    c.input = fields::read_object<CaptureInput>(doc.obj("input"), fields::kCaptureInputFields);
}

}  // namespace latlab::reading
