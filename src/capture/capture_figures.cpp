#include "capture/capture_figures.hpp"

namespace latlab::capture {

const char* to_string(FrameFigure f) {
  switch (f) {
    case FrameFigure::between_presents:
      return "between_presents";
    case FrameFigure::in_present_api:
      return "in_present_api";
    case FrameFigure::cpu_busy:
      return "cpu_busy";
    case FrameFigure::acquire_wait:
      return "acquire_wait";
    case FrameFigure::gpu_latency:
      return "gpu_latency";
    case FrameFigure::gpu_time:
      return "gpu_time";
    case FrameFigure::gpu_busy:
      return "gpu_busy";
    case FrameFigure::gpu_wait:
      return "gpu_wait";
    case FrameFigure::until_render_complete:
      return "until_render_complete";
    case FrameFigure::until_displayed:
      return "until_displayed";
    case FrameFigure::between_displays:
      return "between_displays";
    case FrameFigure::layer_present_cpu:
      return "layer_present_cpu";
    case FrameFigure::layer_submit_cpu:
      return "layer_submit_cpu";
    case FrameFigure::count_:
      break;
  }
  return "?";
}

const char* to_string(SubmitFigure f) {
  switch (f) {
    case SubmitFigure::gpu_span:
      return "gpu_span";
    case SubmitFigure::submit_to_gpu:
      return "submit_to_gpu";
    case SubmitFigure::in_submit_api:
      return "in_submit_api";
    case SubmitFigure::layer_cpu:
      return "layer_cpu";
    case SubmitFigure::count_:
      break;
  }
  return "?";
}

std::optional<int64_t> time_diff(int64_t b, int64_t a) {
  if (a == kNoTime || b == kNoTime) return std::nullopt;
  return b - a;
}

const char* to_string(NoComplete why) {
  switch (why) {
    case NoComplete::none:
      return "measured";
    case NoComplete::unavailable:
      return "unavailable";
    case NoComplete::dropped:
      return "dropped";
    case NoComplete::failed:
      return "failed";
    case NoComplete::retired:
      return "retired";
    case NoComplete::late:
      return "late";
    case NoComplete::not_tagged:
      return "not_tagged";
    case NoComplete::discarded:
      return "discarded";
  }
  return "unknown";
}

std::optional<bool> displayed(const FrameRecord& f) {
  if (f.no_complete == NoComplete::discarded) return false;
  const bool display_time = f.complete_method == PresentMethod::display_timing ||
                            f.complete_method == PresentMethod::wp_presentation;
  if (display_time && f.no_complete == NoComplete::none) return true;
  return std::nullopt;
}

int64_t last_shown_after(const FrameRecord& f, const FrameRecord* prev, int64_t last_shown) {
  if (prev == nullptr || prev->frame + 1 != f.frame) last_shown = kNoTime;
  const auto shown = displayed(f);
  if (!shown) return kNoTime;
  return *shown ? f.present_complete : last_shown;  // a discarded frame is passed over
}

CaptureFrameRow frame_row(const FrameRecord& f, const FrameRecord* prev, int64_t last_shown,
                          uint32_t pid) {
  CaptureFrameRow row;
  row.record = f;
  row.pid = pid;
  auto set = [&](FrameFigure x, std::optional<int64_t> v) {
    row.figures[static_cast<size_t>(x)] = v;
  };
  const bool consecutive = prev != nullptr && prev->frame + 1 == f.frame;
  set(FrameFigure::between_presents,
      consecutive ? time_diff(f.present_start, prev->present_start) : std::nullopt);
  set(FrameFigure::in_present_api, time_diff(f.present_end, f.present_start));
  set(FrameFigure::cpu_busy, time_diff(f.present_start, f.frame_start));
  set(FrameFigure::acquire_wait, f.frame_start != kNoTime && f.acquire_wait_ns != kNoTime
                                     ? std::optional<int64_t>(f.acquire_wait_ns)
                                     : std::nullopt);
  set(FrameFigure::gpu_latency, time_diff(f.gpu_begin, f.frame_start));
  const auto gpu_time = time_diff(f.gpu_end, f.gpu_begin);
  set(FrameFigure::gpu_time, gpu_time);
  set(FrameFigure::gpu_busy,
      f.gpu_busy_ns != kNoTime ? std::optional<int64_t>(f.gpu_busy_ns) : std::nullopt);
  set(FrameFigure::gpu_wait, gpu_time && f.gpu_busy_ns != kNoTime
                                 ? std::optional<int64_t>(*gpu_time - f.gpu_busy_ns)
                                 : std::nullopt);
  set(FrameFigure::until_render_complete, time_diff(f.gpu_end, f.present_start));
  set(FrameFigure::until_displayed, time_diff(f.present_complete, f.present_start));
  set(FrameFigure::between_displays, consecutive && displayed(f).value_or(false)
                                         ? time_diff(f.present_complete, last_shown)
                                         : std::nullopt);
  set(FrameFigure::layer_present_cpu, f.source_present_ns);
  set(FrameFigure::layer_submit_cpu, f.source_submit_ns);
  return row;
}

SubmitFigures submit_figures(const SubmitRecord& s) {
  SubmitFigures out;
  auto put = [&](SubmitFigure x, std::optional<int64_t> v) {
    const auto i = static_cast<size_t>(x);
    out.values[i] = v;
    out.counted[i] = true;
  };
  if (s.no_span != NoSpan::no_work) {
    put(SubmitFigure::gpu_span, time_diff(s.gpu_end, s.gpu_begin));
    put(SubmitFigure::submit_to_gpu, time_diff(s.gpu_begin, s.cpu_start));
  }
  put(SubmitFigure::in_submit_api, time_diff(s.cpu_end, s.cpu_start));
  put(SubmitFigure::layer_cpu, s.source_cpu_ns);
  return out;
}

}  // namespace latlab::capture
