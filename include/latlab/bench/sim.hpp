// The simulated backend: one LatencyDevice, SimDevice, whose clock, frame
// timing, faults and GPU cost are scripted. Tests use it to check logic
// exactly; `--backend sim` runs commands without a GPU.
//
// One SimDesc describes a device:
//  * clock        - SimClock: device ticks as a straight line against the host
//                   clock (offset, drift, tick period, wrap), and the
//                   calibration pairs it hands out (deviation, error, bad pairs,
//                   failures). GPU ticks and pairs come from this one clock.
//  * frame/script - each frame's host delays and faults.
//  * cost         - optional SimCostModel: GPU time per workload, noise, outliers.
//  * time         - the HostTime the device runs on: real, scaled or virtual.
//
// A frame on the host clock: submit_frame takes submit_cost_ns; the GPU begins
// queue_delay_ns after the submit ends (or when earlier work ends, if later)
// and runs gpu_duration_ns plus the cost model's time for the workload; the
// CPU sees the fence fence_wake_delay_ns after the GPU ends.
//
// SimClock and SimCostModel are usable alone (a calibration source for clock
// tests, the cost formula load calibration is checked against).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "latlab/calibrator.hpp"
#include "latlab/clock_model.hpp"
#include "latlab/core/latency_device.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/host_time.hpp"
#include "latlab/result.hpp"
#include "latlab/tick_format.hpp"

namespace latlab {

// ---- clock ------------------------------------------------------------------
//
// The device clock is a straight line against the host clock:
//   true host ns of unwrapped tick u = offset_ns + ns(u) * (1 + drift_ppm * 1e-6)
// where ns(u) = u * tick period (exact). Raw ticks are u masked to valid_bits.
// A pair read at host time h reports host h, a deviation dev, and the device
// ticks at true host time h + err, err uniform in
// [-error_fraction * dev, +error_fraction * dev] (seeded).
struct SimClockDesc {
  TickFormat ticks{};     // device tick period and valid bits; default 1 ns, 64 bits
  int64_t offset_ns = 0;  // true host ns at unwrapped device tick 0
  // Set: the unwrapped device ticks at construction (the host clock's now
  // then), replacing offset_ns; ticks * period must stay below 2^62 ns.
  std::optional<uint64_t> start_ticks{};
  // Host ns per device ns minus one, in ppm, as ClockFit::drift_ppm() reports
  // it (+: the device runs slow); real clocks: within +-100.
  double drift_ppm = 0.0;
  int64_t deviation_ns = 1'000;  // smallest deviation a good pair reports, ns
  // A good pair's deviation: deviation_ns + uniform [0, deviation_spread_ns].
  int64_t deviation_spread_ns = 1'000;
  // Actual host error within +-fraction * deviation (0: exact pairs; > 1: a
  // device that understates its deviation).
  double error_fraction = 1.0;
  uint32_t bad_every = 0;                // every n-th pair is bad (0: none)
  int64_t bad_deviation_ns = 1'000'000;  // a bad pair's deviation (its error is as large)
  uint32_t fail_every = 0;               // every n-th sample() call fails with an Error (0: never)
  bool estimated = false;                // mark pairs as bracketed estimates
  uint64_t seed = 1;                     // jitter and deviation randomness
  // Host time source; null = host_now_ns(). A SimDevice sets it to its time.
  std::function<int64_t()> host_clock{};
};

// Pairs and the truth of a SimClockDesc: the exact host time of any device
// tick, so tests can check a mapping's error against its bound.
//
// Thread safety: sample() and source() may be called from any thread (one
// mutex); the truth functions are const and lock-free. The host clock
// function must itself be thread-safe if sample() runs on another thread.
class SimClock {
 public:
  explicit SimClock(SimClockDesc desc = {});
  SimClock(const SimClock&) = delete;
  SimClock& operator=(const SimClock&) = delete;

  // One pair now (host time from the desc's host clock). Error on scripted
  // failures (fail_every, set_failing).
  Result<CalibrationPair> sample();
  // sample() as a Calibrator source; this SimClock must outlive it.
  Calibrator::Source source();
  // Every later sample() fails (true) or behaves as scripted (false).
  void set_failing(bool failing);
  uint64_t calls() const;  // sample() calls so far

  // --- truth -------------------------------------------------------------
  // Unwrapped device ticks at true host time `host_ns` (floored to the tick).
  uint64_t device_ticks_unwrapped_at(int64_t host_ns) const;
  // Raw (masked) device ticks at true host time `host_ns`.
  uint64_t device_ticks_at(int64_t host_ns) const {
    return device_ticks_unwrapped_at(host_ns) & desc_.ticks.mask();
  }
  // True host ns (rounded) of an unwrapped device tick.
  int64_t true_host_ns_unwrapped(uint64_t unwrapped_ticks) const;
  // True host ns of a raw tick, taking the wrap occurrence nearest `near_host_ns`.
  int64_t true_host_ns(uint64_t raw_ticks, int64_t near_host_ns) const;

  // The desc as used: sanitised, offset_ns resolved from start_ticks.
  const SimClockDesc& desc() const { return desc_; }
  const TickFormat& ticks() const { return desc_.ticks; }
  int64_t now() const;  // the desc's host clock

 private:
  double next_unit();  // uniform [0, 1), under mu_

  SimClockDesc desc_;
  mutable std::mutex mu_;
  uint64_t rng_state_ = 0;
  uint64_t calls_ = 0;
  bool failing_ = false;
};

// ---- GPU cost model -----------------------------------------------------------
//
//   gpu_ns = (fixed_ns + ns_per_unit * pixels * passes * complexity^exponent * form factor)
//            * (1 + wobble) * (1 + noise)   [* outlier_factor on outlier frames]
struct SimCostModelDesc {
  double fixed_ns = 20'000.0;  // per-frame cost independent of complexity (barriers, launch), ns
  // ns per pixel per pass per complexity unit (default: 8.33 ms at 1920x1080,
  // 4 passes near complexity 500).
  double ns_per_unit = 0.002;
  double complexity_exponent = 1.0;  // cost grows with complexity^exponent; 1 = affine model
  double fragment_factor = 1.1;      // per-unit cost multiplier of the fragment form
  double wobble_fraction = 0.0;  // non-monotonic term: *(1 + w*sin(2*pi*complexity/wobble_period))
  double wobble_period = 16.0;   // in complexity units
  double noise_fraction = 0.0;   // relative stddev of per-frame Gaussian noise (0 = none)
  uint32_t outlier_every = 0;    // every Nth sampled frame is an outlier (0 = never)
  double outlier_factor = 3.0;   // outlier frames cost this many times more
  uint64_t seed = 1;             // noise seed: same seed, same sequence
};

// Not thread-safe.
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

// ---- the device ---------------------------------------------------------------

// One frame's host delays and faults.
struct SimFrameScript {
  int64_t submit_cost_ns = 20'000;           // host time submit_frame takes (default 20 us)
  int64_t queue_delay_ns = 30'000;           // submit end -> GPU begin, GPU idle (default 30 us)
  int64_t gpu_duration_ns = 50'000;          // GPU begin -> end before the cost model (50 us)
  int64_t fence_wake_delay_ns = 10'000;      // GPU end -> CPU sees completion (default 10 us)
  int64_t poll_delay_ns = 1'000;             // GPU end -> a polling CPU sees it (default 1 us)
  QueryStatus gpu_status = QueryStatus::ok;  // not ok: both GPU timestamps carry this status
  bool drop_fence = false;                   // wait_frame reports the fence observation as missing
  bool fail_submit = false;                  // submit_frame returns an Error
  bool fail_wait = false;                    // wait_frame returns an Error
};

// The host time a SimDevice runs on.
enum class SimTime : uint8_t {
  real,          // the host clock (RealHostTime): sleeps take wall time
  scaled,        // the host clock running SimDesc::time_scale times faster
  virtual_time,  // moves only when someone sleeps: frames take no wall time, exactly
};

struct SimDesc {
  std::string name = "latlab simulated device";  // DeviceInfo::name
  std::string driver = "latlab sim 1";           // DeviceInfo::driver
  // Device ticks and calibration pairs (default: SimClockDesc's; host_clock
  // is replaced by the device's time).
  SimClockDesc clock{};
  // The host domain pairs are reported in; "": no calibration (sample_calibration
  // fails; reported missing).
  std::string calibration_domain = kHostClockName;
  bool can_time = true;     // false: no GPU timestamps (status missing; reported missing)
  bool runs_frames = true;  // false: a clock-only device (submit/wait fail; can_time false)
  SimFrameScript frame{};   // every frame's script, unless `script` is set
  std::function<SimFrameScript(uint64_t frame_id)> script{};  // per-frame script (optional)
  // GPU time per workload, added to the script's gpu_duration_ns (default:
  // none, every workload costs the same).
  std::optional<SimCostModelDesc> cost{};
  uint32_t max_in_flight = 0;  // submits beyond this many unwaited frames fail (0: no limit)
  // Every Nth submitted frame (1-based) gets fail_status on its GPU
  // timestamps (0 = never, 1 = all).
  uint32_t fail_every = 0;
  QueryStatus fail_status = QueryStatus::invalid;
  // The first frame call (submit, wait, the reference path's, prepare_thread)
  // on a thread that never made one to this device takes this much more host
  // time, as NVIDIA's first eglMakeCurrent on a new thread (about 27 ms).
  // 0: no such cost.
  int64_t first_call_on_thread_ns = 0;
  // prepare_thread() returns an Error (and charges nothing).
  bool fail_prepare_thread = false;
  SimTime time = SimTime::real;
  int64_t time_scale = 100;                  // SimTime::scaled: x faster (>= 1; default 100)
  int64_t virtual_start_ns = 1'000'000'000;  // SimTime::virtual_time: now at creation
};

// Presets: the sim backend's named devices (device_factory), and tests' start.
// "load": the default cost model on virtual time, 0 ticks at the start, exact
// pairs in domain "virtual", no GPU time besides the model, 4 frames in flight.
SimDesc sim_load_desc();
// What `latlab run --backend sim` runs on: exact pairs, 10^12 ticks at the
// start, and GPU time growing with the workload (0.002 ns per pixel, pass and
// complexity unit on top of the script's 50 us; no fragment factor), so
// Loaded frames take longer than Baseline ones and load calibration converges.
SimDesc sim_latency_desc();
// "clock": calibration pairs from `clock` on the real host clock; no frames.
// Named after its drift.
SimDesc sim_clock_desc(SimClockDesc clock = {});

// Thread safety: submit_frame/wait_frame and the probes from one thread;
// sample_calibration, the truth functions and time() from any thread.
class SimDevice final : public LatencyDevice {
 public:
  // `shared_time`: run on this HostTime (e.g. the one a latency run already
  // uses) instead of the one desc.time describes; null: the device makes its
  // own. The epoch is the time's now at construction.
  explicit SimDevice(SimDesc desc = {}, std::shared_ptr<HostTime> shared_time = nullptr);
  ~SimDevice() override;
  SimDevice(const SimDevice&) = delete;
  SimDevice& operator=(const SimDevice&) = delete;

  const DeviceInfo& info() const override { return info_; }
  // Error: a scripted submit failure, a frame id already in flight, or
  // max_in_flight frames unwaited.
  Result<void> submit_frame(uint64_t frame_id, const FrameWorkload& work) override;
  // Sleeps (on the device's time) until the CPU sees the frame complete.
  Result<GpuFrameTiming> wait_frame(uint64_t frame_id) override;
  Result<CalibrationPair> sample_calibration() override;
  // Charges desc.first_call_on_thread_ns on a new thread; an Error when
  // desc.fail_prepare_thread.
  Result<void> prepare_thread() override;
  // The reference path: frames scripted as submit_frame's (desc.script or
  // desc.frame) without the cost model's work, under their own frame ids.
  Result<std::unique_ptr<ReferencePath>> open_reference() override;
  // Poll target: the host time the frame's poll sees completion (GPU end +
  // poll_delay_ns); the poller compares it with the device's time.
  std::optional<PollTarget> poll_target(uint64_t frame_id) override;
  Result<std::unique_ptr<CompletionPoller>> open_poller() override;

  // The host time the device runs on; a latency run on it must use the same.
  HostTime& time() const { return *time_; }
  // Ground truth: the device ticks at a host time, and back (the wrap nearest
  // the epoch; exact for 1 ns ticks without drift, within a tick otherwise).
  uint64_t ticks_at(int64_t host_ns) const { return clock_.device_ticks_at(host_ns); }
  int64_t host_at(uint64_t ticks) const { return clock_.true_host_ns(ticks, epoch_ns_); }
  int64_t epoch_ns() const { return epoch_ns_; }
  const SimClock& clock() const { return clock_; }
  const SimCostModel* cost_model() const { return cost_ ? &*cost_ : nullptr; }  // null: none
  uint64_t frames_submitted() const { return frames_submitted_; }

 private:
  friend class SimReferencePath;
  // submit_frame's body; `work` null: no cost-model work (the reference path).
  Result<void> submit_work(uint64_t frame_id, const FrameWorkload* work);
  // Sleeps desc.first_call_on_thread_ns the first time the calling thread
  // calls this device (per thread and device, never per reused thread id).
  void charge_new_thread();

  struct Pending {
    uint64_t frame_id = 0;
    SimFrameScript script;
    int64_t gpu_begin_ns = 0;  // host clock
    int64_t gpu_end_ns = 0;
    QueryStatus gpu_status = QueryStatus::ok;
  };

  SimDesc desc_;
  std::shared_ptr<HostTime> time_;
  int64_t epoch_ns_ = 0;
  SimClock clock_;
  std::optional<SimCostModel> cost_;
  DeviceInfo info_;
  int64_t gpu_free_ns_ = 0;  // when the simulated GPU finishes its queued work
  std::vector<Pending> pending_;
  uint64_t frames_submitted_ = 0;
  uint64_t serial_ = 0;  // unique per SimDevice in the process (charge_new_thread)
};

}  // namespace latlab
