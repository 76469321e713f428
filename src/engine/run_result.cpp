#include "latlab/bench/run_result.hpp"

namespace latlab {

bool DeviceSectionResult::operator==(const DeviceSectionResult& o) const {
  return head == o.head && status == o.status && failure == o.failure &&
         device_name == o.device_name && result == o.result;
}

const RunResult& RunResult::top_level() const {
  return sections.empty() ? *this : sections.at(top_section.value()).result.at(0);
}

std::string_view RunResult::kind() const {
  if (!sections.empty()) return top_level().kind();
  if (capture) return "capture";
  return latency ? "latency_run" : "performance_run";
}

bool RunResult::partial() const {
  return !partial_reason().empty() || (latency && latency->partial);
}

std::string RunResult::partial_reason() const {
  if (!sections.empty()) return top_level().partial_reason();
  if (capture) return capture->partial_reason;
  if (latency) return latency->partial ? latency->partial_reason : performance.interrupted;
  if (performance.report) return performance.report->partial_reason;
  return "";
}

}  // namespace latlab

namespace latlab {

const Distribution* CaptureResult::figure(std::string_view name) const {
  for (const auto& [n, d] : figures) {
    if (n == name) return &d;
  }
  return nullptr;
}

CaptureFps CaptureResult::fps() const {
  CaptureFps f;
  const Distribution* d = figure("between_presents");
  if (d == nullptr || d->empty()) return f;
  f.frame_times = d->count;
  auto per_second = [](double us) {
    return us > 0 ? std::optional<double>(1e6 / us) : std::nullopt;
  };
  f.average = per_second(d->mean);
  f.low_1_percent = per_second(d->p99);
  f.low_0_1_percent = per_second(d->p999);
  return f;
}

const PerFrameMode* PerFrameSeries::find(std::string_view name) const {
  for (const PerFrameMode& m : modes) {
    if (m.mode == name) return &m;
  }
  return nullptr;
}

}  // namespace latlab
