// Scripted GPU cost model and SimLoadDevice: a LatencyDevice on a virtual
// clock for testing load calibration and Performance mode deterministically.
//
//   gpu_ns = (fixed_ns + ns_per_unit * pixels * passes * complexity^exponent * form factor)
//            * (1 + wobble) * (1 + noise)   [* outlier_factor on outlier frames]
//
// No sleeping: submit/wait advance a virtual host clock, and the device's
// begin/end ticks are computed from the model, so a test that runs thousands
// of frames takes microseconds and gives the same numbers every time.
//
// (The latency engine's general SimLatencyDevice is a separate class; this
// one only models GPU cost per workload.)
//
// Thread safety: SimCostModel is not thread-safe. SimLoadDevice follows the
// LatencyDevice contract: one driving thread, sample_calibration() from any.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>

#include "latlab/latency_device.hpp"

namespace latlab {

struct SimCostModelDesc {
  double fixed_ns = 20'000.0;  // per-frame cost independent of complexity (barriers, launch), ns
  double ns_per_unit = 0.002;  // ns per pixel per pass per complexity unit (default: 8.33 ms at
                               // 1920x1080, 4 passes near complexity 500)
  double complexity_exponent = 1.0;  // cost grows with complexity^exponent; 1 = affine model
  double fragment_factor = 1.1;      // per-unit cost multiplier of the fragment form
  double wobble_fraction = 0.0;  // non-monotonic term: *(1 + w*sin(2*pi*complexity/wobble_period))
  double wobble_period = 16.0;   // in complexity units
  double noise_fraction = 0.0;   // relative stddev of per-frame Gaussian noise (0 = none)
  uint32_t outlier_every = 0;    // every Nth sampled frame is an outlier (0 = never)
  double outlier_factor = 3.0;   // outlier frames cost this many times more
  uint64_t seed = 1;             // noise seed: same seed, same sequence
};

class SimCostModel {
 public:
  explicit SimCostModel(SimCostModelDesc desc = {});

  // Noise-free modelled GPU time of `work`, ns (wobble included: it is a
  // property of the workload, not of the frame).
  double expected_ns(const FrameWorkload& work) const;
  // One frame's GPU time: expected_ns with noise/outliers; advances the
  // noise sequence. Never below 1 ns.
  double sample_ns(const FrameWorkload& work);

  const SimCostModelDesc& desc() const { return desc_; }

 private:
  double next_gaussian();

  SimCostModelDesc desc_;
  uint64_t rng_state_;
  uint64_t samples_ = 0;
};

struct SimLoadDeviceDesc {
  SimCostModelDesc cost;
  std::string name = "sim-load";  // DeviceInfo::name
  TickFormat ticks{};             // device tick format (default: 1 ns, 64 valid bits)
  uint64_t tick_at_start =
      0;  // device ticks at the virtual start (set near 2^valid_bits to test wrap)
  int64_t start_host_ns = 1'000'000'000;  // virtual host clock at construction, ns
  int64_t submit_cpu_ns = 20'000;         // virtual host time one submit_frame takes, ns
  int64_t queue_delay_ns = 30'000;        // submit end -> GPU begin when the queue is idle, ns
  int64_t wake_delay_ns = 10'000;         // GPU end -> CPU sees completion, ns
  uint32_t max_in_flight = 4;             // submits beyond this many unwaited frames fail
  bool can_time = true;                   // false: a device without GPU timestamps
  uint32_t fail_every =
      0;  // every Nth submitted frame (1-based) gets fail_status (0 = never, 1 = all)
  QueryStatus fail_status = QueryStatus::invalid;
};

class SimLoadDevice final : public LatencyDevice {
 public:
  explicit SimLoadDevice(SimLoadDeviceDesc desc = {});

  const DeviceInfo& info() const override { return info_; }
  // Queues the frame: the GPU starts it when the queue is free and runs for
  // the model's sample_ns. Error for a duplicate id or too many in flight.
  Result<void> submit_frame(uint64_t frame_id, const FrameWorkload& work) override;
  // Advances the virtual host clock to the frame's completion (+ wake delay).
  Result<GpuFrameTiming> wait_frame(uint64_t frame_id) override;
  // An exact pair (deviation 0) at the current virtual time.
  Result<CalibrationPair> sample_calibration() override;

  // Test probes (driving thread).
  uint64_t frames_submitted() const { return frames_submitted_; }
  int64_t virtual_now_ns() const;
  const SimCostModel& cost_model() const { return model_; }

 private:
  struct Pending {
    uint64_t frame_id;
    int64_t gpu_begin_ns;  // virtual host ns
    int64_t gpu_end_ns;
    QueryStatus status;
  };
  uint64_t host_to_ticks(int64_t host_ns) const;

  SimLoadDeviceDesc desc_;
  DeviceInfo info_;
  SimCostModel model_;
  mutable std::mutex clock_mutex_;  // guards now_ns_ (sample_calibration may run on another thread)
  int64_t now_ns_;
  int64_t queue_free_ns_;  // when the GPU finishes the last queued frame
  std::deque<Pending> pending_;
  uint64_t frames_submitted_ = 0;
};

}  // namespace latlab
