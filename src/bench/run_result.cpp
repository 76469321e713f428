#include "latlab/bench/run_result.hpp"

#include <algorithm>

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

namespace {

CaptureFps fps_of(const NamedDistributions& figures) {
  CaptureFps f;
  const auto bp = std::find_if(figures.begin(), figures.end(),
                               [](const auto& n) { return n.first == "between_presents"; });
  if (bp == figures.end() || bp->second.empty()) return f;
  const Distribution& d = bp->second;
  f.frame_times = d.count;
  auto per_second = [](double us) {
    return us > 0 ? std::optional<double>(1e6 / us) : std::nullopt;
  };
  f.average = per_second(d.mean);
  f.low_1_percent = per_second(d.p99);
  f.low_0_1_percent = per_second(d.p999);
  return f;
}

}  // namespace

CaptureFps CaptureResult::fps() const { return fps_of(figures); }

CaptureFps CaptureSwapchainFigures::fps() const { return fps_of(figures); }

const PerFrameMode* PerFrameSeries::find(std::string_view name) const {
  for (const PerFrameMode& m : modes) {
    if (m.mode == name) return &m;
  }
  return nullptr;
}

}  // namespace latlab
