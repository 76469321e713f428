#include "capture/capture_overhead.hpp"

#include <algorithm>

#include "capture/span_budget.hpp"

namespace latlab::capture {
namespace {

double total_us(const Distribution& d) {
  return d.empty() ? 0.0 : d.mean * static_cast<double>(d.count);
}

// The middle value (the upper one of an even count); `v` not empty.
double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

std::vector<CaptureBracketing> bracketing_of(const std::vector<CapturedBracket>& brackets) {
  std::vector<CaptureBracketing> out;
  auto us = [](int64_t ns) { return static_cast<double>(ns) / 1000.0; };
  for (const CapturedBracket& b : brackets) {
    const BracketRecord& r = b.record;
    out.push_back({b.pid, r.queue_family, r.queue_index, r.rounds, us(r.before_p50_ns),
                   us(r.before_min_ns), us(r.before_max_ns), us(r.after_p50_ns), us(r.after_min_ns),
                   us(r.after_max_ns), us(r.cpu_bracketed_p50_ns - r.cpu_plain_p50_ns)});
  }
  return out;
}

CaptureOverhead overhead_of(const CaptureSummary& s, const std::vector<CapturedBracket>& brackets) {
  CaptureOverhead o;
  o.threads = s.latlab_threads;
  o.bracketed_submits = s.bracketed;
  o.leaves_out = kOverheadLeavesOut;
  if (s.span_price_ns > 0) {
    o.gpu_span_price_us = static_cast<double>(s.span_price_ns) / 1000.0;
    o.gpu_span_price_from = to_string(static_cast<SpanPriceFrom>(s.span_price_from));
  }
  if (s.setup_ns) o.setup_ms = static_cast<double>(*s.setup_ns) / 1e6;
  if (!s.has_cost) return o;
  const double threads_us = static_cast<double>(s.latlab_threads_cpu_ns) / 1000.0;
  // Every submission's and present's own time, the ones outside frames too.
  const double calls_us =
      total_us(s.submit_figures[static_cast<size_t>(SubmitFigure::layer_cpu)]) +
      total_us(s.frame_figures[static_cast<size_t>(FrameFigure::layer_present_cpu)]);
  o.layer_cpu_us = calls_us + threads_us;
  std::vector<double> cpu_per_submit, gpu_per_submit;
  for (const CaptureBracketing& b : bracketing_of(brackets)) {
    cpu_per_submit.push_back(b.cpu_per_submit_us);
    gpu_per_submit.push_back(b.before_p50_us + b.after_p50_us);
  }
  if (!cpu_per_submit.empty()) {
    const auto bracketed = static_cast<double>(s.bracketed);
    o.driver_cpu_us = std::max(0.0, median_of(cpu_per_submit)) * bracketed;
    o.gpu_us = std::max(0.0, median_of(gpu_per_submit)) * bracketed;
  }
  const auto frames = static_cast<double>(s.frame_count);
  if (frames == 0) return o;
  o.threads_cpu_per_frame_us = threads_us / frames;
  o.layer_cpu_per_frame_us = *o.layer_cpu_us / frames;
  if (o.driver_cpu_us) o.driver_cpu_per_frame_us = *o.driver_cpu_us / frames;
  if (o.gpu_us) o.gpu_per_frame_us = *o.gpu_us / frames;
  return o;
}

}  // namespace latlab::capture
