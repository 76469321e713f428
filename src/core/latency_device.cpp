#include "latlab/engine/latency_device.hpp"

namespace latlab {

std::optional<std::string> frame_workload_error(const FrameWorkload& work) {
  if (work.passes >= 1 && work.complexity >= kMinComplexity && work.complexity <= kMaxComplexity &&
      work.width >= 1 && work.height >= 1) {
    return std::nullopt;
  }
  return "FrameWorkload out of range: passes >= 1, complexity " + std::to_string(kMinComplexity) +
         ".." + std::to_string(kMaxComplexity) + ", size >= 1x1 (got passes " +
         std::to_string(work.passes) + ", complexity " + std::to_string(work.complexity) + ", " +
         std::to_string(work.width) + "x" + std::to_string(work.height) + ")";
}

Result<void> LatencyDevice::prepare_thread() { return {}; }

Result<std::unique_ptr<PresentPath>> LatencyDevice::open_present(const PresentDesc& /*desc*/) {
  return make_error("the " + info().backend + " backend has no present path (present needs --backend vulkan)");
}

Result<std::unique_ptr<ReferencePath>> LatencyDevice::open_reference() {
  return make_error("the " + info().backend + " backend has no reference path (not available)");
}

std::optional<PollTarget> LatencyDevice::poll_target(uint64_t /*frame_id*/) { return std::nullopt; }

Result<std::unique_ptr<CompletionPoller>> LatencyDevice::open_poller() {
  return make_error("the " + info().backend + " backend cannot poll a frame's completion");
}

std::optional<PollTarget> ReferencePath::poll_target(uint64_t /*frame_id*/) { return std::nullopt; }

}  // namespace latlab
