#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "latlab/host_clock.hpp"
#include "latlab/int128.hpp"
#include "latlab/sim_device.hpp"

namespace latlab {

namespace {
constexpr int64_t kBillion = 1'000'000'000;
}

std::unique_ptr<SimLatencyDevice> SimLatencyDevice::create(SimDeviceDesc desc,
                                                           std::shared_ptr<HostTime> time) {
  if (!time) time = std::make_shared<RealHostTime>();
  return std::unique_ptr<SimLatencyDevice>(new SimLatencyDevice(std::move(desc), std::move(time)));
}

SimLatencyDevice::SimLatencyDevice(SimDeviceDesc desc, std::shared_ptr<HostTime> time)
    : desc_(std::move(desc)), time_(std::move(time)) {
  epoch_ns_ = time_->now_ns();
  info_.backend = "sim";
  info_.name = desc_.name;
  info_.driver = "latlab sim 1";
  info_.ticks = desc_.ticks;
  info_.can_time = desc_.can_time;
  info_.calibration_domain = desc_.calibration ? kHostClockName : "";
  info_.calibration_estimated = false;
  if (!desc_.can_time) {
    info_.missing.push_back(
        {"timestamps", "the simulated device was configured without GPU timestamps"});
  }
  if (!desc_.calibration) {
    info_.missing.push_back(
        {"calibrated_timestamps", "the simulated device was configured without clock calibration"});
  }
}

SimLatencyDevice::~SimLatencyDevice() = default;

SimFrameScript SimLatencyDevice::script_for(uint64_t frame_id) const {
  return desc_.script ? desc_.script(frame_id) : desc_.frame;
}

uint64_t SimLatencyDevice::ticks_at(int64_t host_ns) const {
  const int128_t host_span = static_cast<int128_t>(host_ns) - epoch_ns_;
  const int128_t device_ns = host_span + host_span * desc_.drift_ppb / kBillion;
  const int128_t ticks = device_ns * static_cast<int128_t>(desc_.ticks.period_den) /
                         static_cast<int128_t>(desc_.ticks.period_num);
  return (desc_.tick_origin + static_cast<uint64_t>(ticks)) & desc_.ticks.mask();
}

int64_t SimLatencyDevice::host_at(uint64_t ticks) const {
  // Signed tick distance from the origin, wrap-aware (half the range each way).
  const uint64_t mask = desc_.ticks.mask();
  uint64_t d = (ticks - desc_.tick_origin) & mask;
  int128_t signed_ticks = d;
  if (desc_.ticks.valid_bits < 64 && d > (mask >> 1))
    signed_ticks -= static_cast<int128_t>(mask) + 1;
  if (desc_.ticks.valid_bits >= 64) signed_ticks = static_cast<int64_t>(d);
  const int128_t device_ns = signed_ticks * static_cast<int128_t>(desc_.ticks.period_num) /
                             static_cast<int128_t>(desc_.ticks.period_den);
  const int128_t host_span = device_ns * kBillion / (kBillion + desc_.drift_ppb);
  return epoch_ns_ + static_cast<int64_t>(host_span);
}

Result<void> SimLatencyDevice::submit_frame(uint64_t frame_id, const FrameWorkload& work) {
  const SimFrameScript s = script_for(frame_id);
  const int64_t start = time_->now_ns();
  time_->sleep_until(start + s.submit_cost_ns);
  // The submit ends when the sleep does: on a real clock that may be later
  // than scripted, and the GPU cannot begin before the submit that feeds it.
  const int64_t end = time_->now_ns();
  if (s.fail_submit) {
    return make_error("simulated submit failure (frame " + std::to_string(frame_id) + ")");
  }
  Pending p;
  p.script = s;
  p.gpu_begin_ns = std::max(end + s.queue_delay_ns, gpu_free_ns_);
  const double units = static_cast<double>(work.width) * static_cast<double>(work.height) *
                       static_cast<double>(work.passes) * static_cast<double>(work.complexity);
  p.gpu_end_ns =
      p.gpu_begin_ns + s.gpu_duration_ns + std::llround(desc_.gpu_ns_per_work_unit * units);
  gpu_free_ns_ = p.gpu_end_ns;
  pending_[frame_id] = p;
  ++submitted_;
  return {};
}

Result<GpuFrameTiming> SimLatencyDevice::wait_frame(uint64_t frame_id) {
  const auto it = pending_.find(frame_id);
  if (it == pending_.end()) {
    return make_error("frame " + std::to_string(frame_id) +
                      " was never submitted to the sim device");
  }
  const Pending p = it->second;
  pending_.erase(it);
  time_->sleep_until(p.gpu_end_ns + p.script.fence_wake_delay_ns);
  const int64_t wake = time_->now_ns();
  if (p.script.fail_wait) {
    return make_error("simulated device loss while waiting (frame " + std::to_string(frame_id) +
                      ")");
  }
  GpuFrameTiming t;
  if (!desc_.can_time) {
    t.gpu_status = QueryStatus::missing;
  } else {
    t.gpu_status = p.script.gpu_status;
    if (t.gpu_status == QueryStatus::ok) {
      t.gpu_begin_ticks = ticks_at(p.gpu_begin_ns);
      t.gpu_end_ticks = ticks_at(p.gpu_end_ns);
    }
  }
  if (p.script.drop_fence) {
    t.fence_status = QueryStatus::missing;
  } else {
    t.fence_status = QueryStatus::ok;
    t.fence_wake_ns = wake;
  }
  return t;
}

Result<CalibrationPair> SimLatencyDevice::sample_calibration() {
  if (!desc_.calibration) {
    return make_error("the simulated device was configured without clock calibration");
  }
  calibration_samples_.fetch_add(1);
  const int64_t now = time_->now_ns();
  CalibrationPair pair;
  pair.device_ticks = ticks_at(now);
  pair.host_ns = now;
  pair.max_deviation_ns = desc_.calibration_deviation_ns;
  return pair;
}

}  // namespace latlab
