#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "latlab/bench/sim.hpp"

namespace latlab {

namespace {

// Time moves only when someone sleeps: sleep_until(t) sets now to max(now, t).
// Exact and instantaneous; safe from any thread.
class VirtualHostTime final : public HostTime {
 public:
  explicit VirtualHostTime(int64_t start_ns) : now_(start_ns) {}
  int64_t now_ns() override { return now_.load(std::memory_order_acquire); }
  void sleep_until(int64_t deadline_ns) override {
    int64_t cur = now_.load(std::memory_order_acquire);
    while (cur < deadline_ns &&
           !now_.compare_exchange_weak(cur, deadline_ns, std::memory_order_acq_rel)) {
    }
  }
  const char* name() const override { return "virtual"; }

 private:
  std::atomic<int64_t> now_;
};

std::shared_ptr<HostTime> make_time(const SimDesc& desc) {
  switch (desc.time) {
    case SimTime::scaled:
      return std::make_shared<ScaledHostTime>(desc.time_scale);
    case SimTime::virtual_time:
      return std::make_shared<VirtualHostTime>(desc.virtual_start_ns);
    case SimTime::real:
      break;
  }
  return std::make_shared<RealHostTime>();
}

SimClockDesc clock_on(SimClockDesc clock, HostTime* time) {
  clock.host_clock = [time] { return time->now_ns(); };
  return clock;
}

DeviceInfo make_info(const SimDesc& desc, const SimClock& clock) {
  DeviceInfo info;
  info.backend = "sim";
  info.name = desc.name;
  info.driver = desc.driver;
  info.ticks = clock.ticks();
  info.can_time = desc.runs_frames && desc.can_time;
  info.calibration_domain = desc.calibration_domain;
  info.calibration_estimated = clock.desc().estimated;
  if (!desc.runs_frames) {
    info.missing.push_back({"frames", "the clock-only sim device runs no frames"});
  } else if (!desc.can_time) {
    info.missing.push_back(
        {"timestamps", "the simulated device was configured without GPU timestamps"});
  }
  if (desc.calibration_domain.empty()) {
    info.missing.push_back(
        {"calibrated_timestamps", "the simulated device was configured without clock calibration"});
  }
  return info;
}

Error no_frames() { return make_error("the clock-only sim device runs no frames"); }

}  // namespace

SimDesc sim_load_desc() {
  SimDesc d;
  d.name = "sim-load";
  d.driver = "latlab sim cost model";
  d.clock.start_ticks = 0;
  d.clock.deviation_ns = 0;
  d.clock.deviation_spread_ns = 0;
  d.calibration_domain = "virtual";
  d.frame.gpu_duration_ns = 0;  // the cost model's fixed_ns is the per-frame cost
  d.cost = SimCostModelDesc{};
  d.max_in_flight = 4;
  d.time = SimTime::virtual_time;
  return d;
}

SimDesc sim_latency_desc() {
  SimDesc d;
  d.clock.start_ticks = 1'000'000'000'000;
  d.clock.deviation_ns = 0;
  d.clock.deviation_spread_ns = 0;
  d.clock.error_fraction = 0.0;
  d.cost = SimCostModelDesc{.fixed_ns = 0.0, .ns_per_unit = 0.002, .fragment_factor = 1.0};
  return d;
}

SimDesc sim_clock_desc(SimClockDesc clock) {
  SimDesc d;
  char name[96];
  std::snprintf(name, sizeof name, "sim clock (drift %+.3f ppm)", clock.drift_ppm);
  d.name = name;
  d.driver = "latlab sim";
  d.clock = std::move(clock);
  d.runs_frames = false;
  return d;
}

SimDevice::SimDevice(SimDesc desc, std::shared_ptr<HostTime> shared_time)
    : desc_(std::move(desc)),
      time_(shared_time ? std::move(shared_time) : make_time(desc_)),
      epoch_ns_(time_->now_ns()),
      clock_(clock_on(desc_.clock, time_.get())),
      info_(make_info(desc_, clock_)) {
  if (desc_.cost) cost_.emplace(*desc_.cost);
  static std::atomic<uint64_t> next_serial{1};
  serial_ = next_serial.fetch_add(1, std::memory_order_relaxed);
}

void SimDevice::charge_new_thread() {
  if (desc_.first_call_on_thread_ns <= 0) return;
  // thread_local, not thread ids: a new thread may get an ended one's id,
  // and a driver's per-thread state ends with its thread.
  thread_local std::vector<uint64_t> called;
  if (std::find(called.begin(), called.end(), serial_) != called.end()) return;
  called.push_back(serial_);
  time_->sleep_until(time_->now_ns() + desc_.first_call_on_thread_ns);
}

Result<void> SimDevice::prepare_thread() {
  if (desc_.fail_prepare_thread) return make_error("simulated failure preparing a thread");
  charge_new_thread();
  return {};
}

SimDevice::~SimDevice() = default;

Result<void> SimDevice::submit_frame(uint64_t frame_id, const FrameWorkload& work) {
  return submit_work(frame_id, &work);
}

Result<void> SimDevice::submit_work(uint64_t frame_id, const FrameWorkload* work) {
  if (!desc_.runs_frames) return no_frames();
  charge_new_thread();
  for (const Pending& p : pending_) {
    if (p.frame_id == frame_id) {
      return make_error("sim: frame " + std::to_string(frame_id) + " was submitted twice");
    }
  }
  if (desc_.max_in_flight != 0 && pending_.size() >= desc_.max_in_flight) {
    return make_error("sim: " + std::to_string(pending_.size()) +
                      " frames already in flight (max_in_flight); wait for one first");
  }
  const SimFrameScript s = desc_.script ? desc_.script(frame_id) : desc_.frame;
  const int64_t start = time_->now_ns();
  time_->sleep_until(start + s.submit_cost_ns);
  // The submit ends when the sleep does: on a real clock that may be later
  // than scripted, and the GPU cannot begin before the submit that feeds it.
  const int64_t end = time_->now_ns();
  if (s.fail_submit) {
    return make_error("simulated submit failure (frame " + std::to_string(frame_id) + ")");
  }
  ++frames_submitted_;
  Pending p;
  p.frame_id = frame_id;
  p.script = s;
  p.gpu_begin_ns = std::max(end + s.queue_delay_ns, gpu_free_ns_);
  const int64_t model_ns = cost_ && work != nullptr ? std::llround(cost_->sample_ns(*work)) : 0;
  p.gpu_end_ns = p.gpu_begin_ns + s.gpu_duration_ns + model_ns;
  gpu_free_ns_ = p.gpu_end_ns;
  p.gpu_status = desc_.can_time ? s.gpu_status : QueryStatus::missing;
  if (desc_.fail_every != 0 && frames_submitted_ % desc_.fail_every == 0) {
    p.gpu_status = desc_.fail_status;
  }
  pending_.push_back(p);
  return {};
}

Result<GpuFrameTiming> SimDevice::wait_frame(uint64_t frame_id) {
  if (!desc_.runs_frames) return no_frames();
  charge_new_thread();
  const auto it = std::find_if(pending_.begin(), pending_.end(),
                               [&](const Pending& p) { return p.frame_id == frame_id; });
  if (it == pending_.end()) {
    return make_error("sim: frame " + std::to_string(frame_id) +
                      " is not in flight (never submitted or already waited)");
  }
  const Pending p = *it;
  pending_.erase(it);
  time_->sleep_until(p.gpu_end_ns + p.script.fence_wake_delay_ns);
  const int64_t wake = time_->now_ns();
  if (p.script.fail_wait) {
    return make_error("simulated device loss while waiting (frame " + std::to_string(frame_id) +
                      ")");
  }
  GpuFrameTiming t;
  t.gpu_status = p.gpu_status;
  if (t.gpu_status == QueryStatus::ok) {
    t.gpu_begin_ticks = ticks_at(p.gpu_begin_ns);
    t.gpu_end_ticks = ticks_at(p.gpu_end_ns);
  }
  if (p.script.drop_fence) {
    t.fence_status = QueryStatus::missing;
  } else {
    t.fence_status = QueryStatus::ok;
    t.fence_wake_ns = wake;
  }
  return t;
}

class SimReferencePath final : public ReferencePath {
 public:
  explicit SimReferencePath(SimDevice& dev) : dev_(dev) {}
  const char* what() const override {
    return "sim: the device script of each frame without the cost model's work";
  }
  Result<void> submit(uint64_t frame_id) override { return dev_.submit_work(frame_id, nullptr); }
  Result<GpuFrameTiming> wait(uint64_t frame_id) override { return dev_.wait_frame(frame_id); }
  std::optional<PollTarget> poll_target(uint64_t frame_id) override {
    return dev_.poll_target(frame_id);
  }

 private:
  SimDevice& dev_;
};

// The poll target is a plain host time, so polling reads only the device's
// time (thread-safe) and never the pending list the frame calls change.
class SimPoller final : public CompletionPoller {
 public:
  explicit SimPoller(HostTime& time) : time_(time) {}
  PollStatus poll(const PollTarget& target) override {
    return time_.now_ns() >= target.value ? PollStatus::complete : PollStatus::pending;
  }

 private:
  HostTime& time_;
};

std::optional<PollTarget> SimDevice::poll_target(uint64_t frame_id) {
  for (const Pending& p : pending_) {
    if (p.frame_id == frame_id) return PollTarget{0, p.gpu_end_ns + p.script.poll_delay_ns};
  }
  return std::nullopt;
}

Result<std::unique_ptr<CompletionPoller>> SimDevice::open_poller() {
  if (!desc_.runs_frames) return no_frames();
  return std::unique_ptr<CompletionPoller>(new SimPoller(*time_));
}

Result<std::unique_ptr<ReferencePath>> SimDevice::open_reference() {
  if (!desc_.runs_frames) return no_frames();
  return std::unique_ptr<ReferencePath>(new SimReferencePath(*this));
}

Result<CalibrationPair> SimDevice::sample_calibration() {
  if (desc_.calibration_domain.empty()) {
    return make_error("the simulated device was configured without clock calibration");
  }
  return clock_.sample();
}

}  // namespace latlab
