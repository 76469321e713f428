// SimLatencyDevice: a deterministic LatencyDevice for tests and dry runs.
//
// Every frame follows a script: submit_frame takes `submit_cost_ns` of host
// time, the GPU begins `queue_delay_ns` after the submit ends (or when the
// previous frame's work ends, if later), runs `gpu_duration_ns`, and the CPU
// sees the fence `fence_wake_delay_ns` after the GPU ends (plus a workload
// term when gpu_ns_per_work_unit is set). Faults per frame:
// GPU timestamps reported with another status (not_ready, invalid, ...), the
// fence observation dropped, submit or wait failing.
//
// The device clock is scripted too: ticks = tick_origin + (host - epoch) *
// (1 + drift_ppb / 1e9) / tick period, wrapped to valid_bits. ticks_at() and
// host_at() give the ground truth, so tests can map without a clock model.
//
// Time: the device sleeps and reads time through the HostTime it is given
// (RealHostTime by default); give it the engine's VirtualHostTime and every
// marker is exactly what the script says.
//
// Threads: submit_frame/wait_frame from one thread; sample_calibration and
// the ground-truth functions from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "latlab/latency_device.hpp"
#include "latlab/host_time.hpp"

namespace latlab {

struct SimFrameScript {
  int64_t submit_cost_ns = 20'000;           // host time submit_frame takes (default 20 us)
  int64_t queue_delay_ns = 30'000;           // submit end -> GPU begin, GPU idle (default 30 us)
  int64_t gpu_duration_ns = 50'000;          // GPU begin -> end (default 50 us)
  int64_t fence_wake_delay_ns = 10'000;      // GPU end -> CPU sees completion (default 10 us)
  QueryStatus gpu_status = QueryStatus::ok;  // not ok: both GPU timestamps carry this status
  bool drop_fence = false;                   // wait_frame reports the fence observation as missing
  bool fail_submit = false;                  // submit_frame returns an Error
  bool fail_wait = false;                    // wait_frame returns an Error
};

struct SimDeviceDesc {
  std::string name = "latlab simulated device";
  TickFormat ticks;                          // default: 1 ns ticks, 64 valid bits
  uint64_t tick_origin = 1'000'000'000'000;  // device ticks at the epoch
  int64_t drift_ppb = 0;                     // device clock rate error, parts per billion
  int64_t calibration_deviation_ns = 0;      // max_deviation_ns of every calibration pair
  bool can_time = true;                      // false: no GPU timestamps (status missing)
  bool calibration = true;                   // false: sample_calibration fails
  SimFrameScript frame;                      // every frame's script, unless `script` is set
  // GPU cost of the workload on top of the script's gpu_duration_ns:
  // + gpu_ns_per_work_unit * width * height * passes * complexity (rounded to
  // ns). 0 (default): gpu_duration_ns whatever the workload. `latlab run`
  // uses 0.002, SimCostModel's default rate (8.33 ms at 1920x1080, 4 passes,
  // near complexity 1000), so Loaded frames take longer than Baseline ones.
  double gpu_ns_per_work_unit = 0.0;
  std::function<SimFrameScript(uint64_t frame_id)> script;  // per-frame script (optional)
};

class SimLatencyDevice final : public LatencyDevice {
 public:
  // `time` null: the real host clock. The epoch is `time`'s now at creation.
  static std::unique_ptr<SimLatencyDevice> create(SimDeviceDesc desc,
                                                  std::shared_ptr<HostTime> time = nullptr);
  ~SimLatencyDevice() override;
  SimLatencyDevice(const SimLatencyDevice&) = delete;
  SimLatencyDevice& operator=(const SimLatencyDevice&) = delete;

  const DeviceInfo& info() const override { return info_; }
  Result<void> submit_frame(uint64_t frame_id, const FrameWorkload& work) override;
  Result<GpuFrameTiming> wait_frame(uint64_t frame_id) override;
  Result<CalibrationPair> sample_calibration() override;

  // Ground truth: the device ticks at a host time, and back (exact for 1 ns
  // ticks without drift; within one tick otherwise).
  uint64_t ticks_at(int64_t host_ns) const;
  int64_t host_at(uint64_t ticks) const;
  int64_t epoch_ns() const { return epoch_ns_; }
  HostTime& time() { return *time_; }
  uint64_t submitted_frames() const { return submitted_; }
  uint64_t calibration_samples() const { return calibration_samples_.load(); }

 private:
  SimLatencyDevice(SimDeviceDesc desc, std::shared_ptr<HostTime> time);
  SimFrameScript script_for(uint64_t frame_id) const;

  struct Pending {
    SimFrameScript script;
    int64_t gpu_begin_ns = 0;  // host clock
    int64_t gpu_end_ns = 0;
  };

  SimDeviceDesc desc_;
  std::shared_ptr<HostTime> time_;
  DeviceInfo info_;
  int64_t epoch_ns_ = 0;
  int64_t gpu_free_ns_ = 0;  // when the simulated GPU finishes its queued work
  std::unordered_map<uint64_t, Pending> pending_;
  uint64_t submitted_ = 0;
  std::atomic<uint64_t> calibration_samples_{0};
};

}  // namespace latlab
