#include "latlab/sim_cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <utility>

#include "latlab/int128.hpp"

namespace latlab {

namespace {

// splitmix64: tiny, seedable, and the same on every standard library (unlike
// std::normal_distribution), so sim results are reproducible everywhere.
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double unit_open(uint64_t& state) {  // (0, 1)
  return (static_cast<double>(splitmix64(state) >> 11) + 0.5) * 0x1.0p-53;
}

}  // namespace

SimCostModel::SimCostModel(SimCostModelDesc desc) : desc_(desc), rng_state_(desc.seed) {}

double SimCostModel::expected_ns(const FrameWorkload& work) const {
  const double pixels = static_cast<double>(work.width) * static_cast<double>(work.height);
  const double units = std::pow(static_cast<double>(std::max<uint32_t>(work.complexity, 1)),
                                desc_.complexity_exponent);
  const double form = work.form == WorkloadForm::fragment ? desc_.fragment_factor : 1.0;
  double ns =
      desc_.fixed_ns + desc_.ns_per_unit * pixels * static_cast<double>(work.passes) * units * form;
  if (desc_.wobble_fraction != 0.0 && desc_.wobble_period > 0.0) {
    ns *= 1.0 + desc_.wobble_fraction *
                    std::sin(2.0 * std::numbers::pi * static_cast<double>(work.complexity) /
                             desc_.wobble_period);
  }
  return std::max(ns, 1.0);
}

double SimCostModel::next_gaussian() {  // Box-Muller
  const double u1 = unit_open(rng_state_);
  const double u2 = unit_open(rng_state_);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double SimCostModel::sample_ns(const FrameWorkload& work) {
  ++samples_;
  double ns = expected_ns(work);
  if (desc_.noise_fraction > 0.0) ns *= 1.0 + desc_.noise_fraction * next_gaussian();
  if (desc_.outlier_every != 0 && samples_ % desc_.outlier_every == 0) ns *= desc_.outlier_factor;
  return std::max(ns, 1.0);
}

SimLoadDevice::SimLoadDevice(SimLoadDeviceDesc desc)
    : desc_(std::move(desc)),
      model_(desc_.cost),
      now_ns_(desc_.start_host_ns),
      queue_free_ns_(desc_.start_host_ns) {
  info_.backend = "sim";
  info_.name = desc_.name;
  info_.driver = "latlab sim cost model";
  info_.ticks = desc_.ticks;
  info_.can_time = desc_.can_time;
  info_.calibration_domain = "virtual";
  if (!desc_.can_time) {
    info_.missing.push_back(
        {"timestamps", "the simulated device was configured without GPU timestamps"});
  }
}

int64_t SimLoadDevice::virtual_now_ns() const {
  std::lock_guard lock(clock_mutex_);
  return now_ns_;
}

uint64_t SimLoadDevice::host_to_ticks(int64_t host_ns) const {
  // ticks = tick_at_start + elapsed_ns / period, exact in 128 bits, then masked
  // to the valid bits so a counter near its top wraps like a real one.
  const auto elapsed = static_cast<uint128_t>(std::max<int64_t>(host_ns - desc_.start_host_ns, 0));
  const uint128_t ticks = elapsed * desc_.ticks.period_den / desc_.ticks.period_num;
  return (desc_.tick_at_start + static_cast<uint64_t>(ticks)) & desc_.ticks.mask();
}

Result<void> SimLoadDevice::submit_frame(uint64_t frame_id, const FrameWorkload& work) {
  for (const Pending& p : pending_) {
    if (p.frame_id == frame_id) {
      return make_error("sim: frame " + std::to_string(frame_id) + " was submitted twice");
    }
  }
  if (pending_.size() >= desc_.max_in_flight) {
    return make_error("sim: " + std::to_string(pending_.size()) +
                      " frames already in flight (max_in_flight); wait for one first");
  }
  ++frames_submitted_;
  int64_t submit_end = 0;
  {
    std::lock_guard lock(clock_mutex_);
    now_ns_ += desc_.submit_cpu_ns;
    submit_end = now_ns_;
  }
  const int64_t begin = std::max(submit_end + desc_.queue_delay_ns, queue_free_ns_);
  const auto gpu_ns = static_cast<int64_t>(std::llround(model_.sample_ns(work)));
  const int64_t end = begin + gpu_ns;
  queue_free_ns_ = end;
  QueryStatus status = desc_.can_time ? QueryStatus::ok : QueryStatus::missing;
  if (desc_.fail_every != 0 && frames_submitted_ % desc_.fail_every == 0)
    status = desc_.fail_status;
  pending_.push_back({frame_id, begin, end, status});
  return {};
}

Result<GpuFrameTiming> SimLoadDevice::wait_frame(uint64_t frame_id) {
  const auto it = std::find_if(pending_.begin(), pending_.end(),
                               [&](const Pending& p) { return p.frame_id == frame_id; });
  if (it == pending_.end()) {
    return make_error("sim: frame " + std::to_string(frame_id) +
                      " is not in flight (never submitted or already waited)");
  }
  const Pending p = *it;
  pending_.erase(it);
  GpuFrameTiming t;
  t.gpu_status = p.status;
  if (p.status == QueryStatus::ok) {
    t.gpu_begin_ticks = host_to_ticks(p.gpu_begin_ns);
    t.gpu_end_ticks = host_to_ticks(p.gpu_end_ns);
  }
  {
    std::lock_guard lock(clock_mutex_);
    now_ns_ = std::max(now_ns_, p.gpu_end_ns + desc_.wake_delay_ns);
    t.fence_wake_ns = now_ns_;
  }
  t.fence_status = QueryStatus::ok;
  return t;
}

Result<CalibrationPair> SimLoadDevice::sample_calibration() {
  if (!desc_.can_time) return make_error("sim: device has no timestamps to calibrate");
  std::lock_guard lock(clock_mutex_);
  return CalibrationPair{host_to_ticks(now_ns_), now_ns_, 0, false};
}

}  // namespace latlab
