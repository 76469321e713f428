// The JSON reporter of a capture result (kind "capture", docs/capture.md,
// "The result"): the head every result has, then the capture section.
#include "latlab/bench/capture_result.hpp"
#include "report/capture_input_report.hpp"
#include "report/json_parts.hpp"
#include "report/result_fields.hpp"
#include "report/result_json.hpp"

namespace latlab {

using json = nlohmann::ordered_json;

namespace {

template <class T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

// Derived figures: the reader recomputes them (CaptureResult::fps).
json fps_to_json(const CaptureFps& fps) {
  return {{"frame_time", "between_presents"},
          {"frame_times", fps.frame_times},
          {"average", opt(fps.average)},
          {"low_1_percent", opt(fps.low_1_percent)},
          {"low_0_1_percent", opt(fps.low_0_1_percent)}};
}

// Columns of equal length, one entry per bucket (capture_result.hpp).
json frame_times_to_json(const CaptureFrameTimes& t) {
  json cols[5] = {json::array(), json::array(), json::array(), json::array(), json::array()};
  for (const CaptureFrameTimeBucket& b : t.buckets) {
    cols[0].push_back(b.t_s);
    cols[1].push_back(b.frames);
    cols[2].push_back(b.min_us);
    cols[3].push_back(b.mean_us);
    cols[4].push_back(b.max_us);
  }
  return {{"frame_time", "between_presents"},
          {"frames_per_bucket", t.frames_per_bucket},
          {"t_s", cols[0]},
          {"frames", cols[1]},
          {"min_us", cols[2]},
          {"mean_us", cols[3]},
          {"max_us", cols[4]}};
}

json per_swapchain_to_json(const std::vector<CaptureSwapchainFigures>& all) {
  json out = json::array();
  for (const CaptureSwapchainFigures& w : all) {
    out.push_back({{"pid", w.pid},
                   {"source", w.source},
                   {"swapchain", w.swapchain},
                   {"frames", w.frames},
                   {"fps", fps_to_json(w.fps())},
                   {"figures", fields::value_json(w.figures)}});
  }
  return out;
}

}  // namespace

json capture_to_json(const RunResult& r) {
  const CaptureResult& c = *r.capture;
  json j = result_header_to_json("capture", r.meta, !c.partial_reason.empty(), c.partial_reason);
  j["units"] = {{"distributions", "us"}, {"times", "ns"}};
  j["machine"] = machine_to_json(r.meta.machine);
  j["program"] = fields::write_object(c.program, fields::kCapturedProgramFields);
  j["capture"] = fields::write_object(c.stop, fields::kCaptureStopFields);
  j["sources"] = fields::write_records(c.sources, fields::kCaptureSourceFields);
  j["frames"] = c.frames;
  j["submits"] = c.submits;
  j["submits_without_work"] = c.submits_without_work;
  j["gpu_spans_missing"] = c.gpu_spans_missing;
  j["frames_with_missing_gpu"] = c.frames_with_missing_gpu;
  j["submit_spans"] = fields::value_json(c.submit_spans);
  j["present_complete"] = fields::value_json(c.present_complete);
  j["display"] = fields::write_object(c.display, fields::kDisplayFields);
  j["fps"] = fps_to_json(c.fps());
  j["frame_times"] = frame_times_to_json(c.frame_times);
  j["figures"] = fields::value_json(c.figures);
  j["submit_figures"] = fields::value_json(c.submit_figures);
  j["per_swapchain"] = per_swapchain_to_json(c.per_swapchain);
  j["overhead"] = fields::write_object(c, fields::kLayerCostFields);
  fields::append_fields(j["overhead"], c.overhead, fields::kOverheadFields);
  j["bracketing"] = fields::write_records(c.bracketing, fields::kBracketingFields);
  j["unavailable"] = fields::write_records(c.unavailable, fields::kCaptureUnavailableFields);
  j["screen_observers"] = fields::write_records(c.screen_observers, fields::kScreenObserverFields);
  if (c.input) j["input"] = capture_input_to_json(*c.input);
  return j;
}

}  // namespace latlab
