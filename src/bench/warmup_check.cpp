#include "bench/warmup_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "latlab/stats.hpp"

namespace latlab {
namespace {

std::string fixed(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// The largest miss, in tolerances, the re-check corrects.
constexpr double kMaxDriftTolerances = 3.0;

// The GPU times (ms) of the warm-up's later half, sorted: the first frames
// of a block still carry the switch from the previous mode (caches, a CPU
// device's worker threads waking up).
std::vector<double> later_half_gpu_ms(std::span<const FrameRecord> warmup,
                                      const TickFormat& ticks) {
  std::vector<double> ms;
  for (const FrameRecord& f : warmup.subspan(warmup.size() / 2)) {
    if (f.gpu_status != QueryStatus::ok) continue;
    ms.push_back(static_cast<double>(ticks.span_ns(f.gpu_begin_ticks, f.gpu_end_ticks)) / 1e6);
  }
  std::sort(ms.begin(), ms.end());
  return ms;
}

// Why a miss (a fraction of the target) is not acted on; "" when it is.
std::string why_miss_kept(double miss, double uncertainty, double tolerance, double slope) {
  if (std::fabs(miss) <= tolerance / 2.0) return "within half the tolerance";
  // A miss the warm-up's own noise explains is not acted on.
  if (std::fabs(miss) <= uncertainty) {
    return "within the warm-up's own uncertainty (+/-" + fixed("%.2f", uncertainty * 100.0) + "%)";
  }
  // Drift between calibration and run is a few percent; a larger miss says
  // the device's load changed under the warm-up (another process on a CPU
  // device), and moving along the slope for it would leave the measured
  // blocks far off target once it is gone.
  if (std::fabs(miss) > kMaxDriftTolerances * tolerance) {
    return "more than " + fixed("%.0f", kMaxDriftTolerances) +
           " times the tolerance, not drift (the device's load changed under the warm-up)";
  }
  if (!(slope > 0.0) || !std::isfinite(slope)) return "no usable slope to move along";
  return "";
}

}  // namespace

WarmupCheck recheck_in_warmup(LatencyModeDesc& mode, std::span<const FrameRecord> warmup,
                              const TickFormat& ticks) {
  const GpuTimeTarget& target = *mode.gpu_target;
  const double slope = *mode.warmup_adjust_ms_per_complexity;
  WarmupCheck w;
  w.complexity_before = mode.workload.complexity;
  w.complexity_after = mode.workload.complexity;
  const std::vector<double> ms = later_half_gpu_ms(warmup, ticks);
  w.frames_used = ms.size();
  if (ms.empty()) {
    w.outcome = "no frame of the warm-up's later half had a GPU time: not re-checked";
    return w;
  }
  w.median_ms = percentile_sorted(ms, 0.5);
  const double miss = (*w.median_ms - target.target_ms) / target.target_ms;
  const std::string seen = "warm-up median " + fixed("%.4f", *w.median_ms) + " ms (" +
                           fixed("%+.2f", miss * 100.0) + "% of the target) over " +
                           std::to_string(ms.size()) + " frames";
  // Twice the median's standard error, relative to the target.
  const double uncertainty =
      2.0 * median_standard_error(ms, *w.median_ms).value_or(0.0) / target.target_ms;
  if (const std::string why = why_miss_kept(miss, uncertainty, target.tolerance, slope);
      !why.empty()) {
    w.outcome = seen + ": " + why + ", complexity kept";
    return w;
  }
  const double wanted =
      static_cast<double>(w.complexity_before) + (target.target_ms - *w.median_ms) / slope;
  const double clamped = std::clamp(std::round(wanted), static_cast<double>(kMinComplexity),
                                    static_cast<double>(kMaxComplexity));
  const auto next = static_cast<uint32_t>(clamped);
  if (next == w.complexity_before) {
    w.outcome =
        seen + ": one complexity step (" + fixed("%.4g", slope) + " ms) is coarser than the miss" +
        (wanted < kMinComplexity || wanted > kMaxComplexity ? " or the range ends here" : "") +
        ", complexity kept";
    return w;
  }
  mode.workload.complexity = next;
  w.complexity_after = next;
  w.outcome = seen + ": complexity moved from " + std::to_string(w.complexity_before) + " to " +
              std::to_string(next) + " along the calibration's slope (" + fixed("%.4g", slope) +
              " ms per step) before the measured blocks";
  return w;
}

}  // namespace latlab
