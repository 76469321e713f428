// The CUDA benchmark rig: the LatencyDevice on a CUDA stream, the frame
// workload and spin kernels, fused stamps, stream gates and the %globaltimer
// probes the tests and benchmarks use. Built on the timing library's
// CudaTimestampSlots and calibration (latlab/cuda.hpp) and compiled with it
// into latlab_cuda (latlab::cuda): one library.
//
// This header needs no CUDA header: streams are CudaStream (cudaStream_t).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "latlab/core/latency_device.hpp"
#include "latlab/core/profile_rig.hpp"
#include "latlab/cuda.hpp"
#include "latlab/result.hpp"

namespace latlab {

// ---------------------------------------------------------------------------
// Latency device
// ---------------------------------------------------------------------------

struct CudaLatencyDeviceDesc {
  std::string device;  // ordinal ("0") or name substring (case-insensitive); "" = device 0
  uint32_t frames_in_flight = 4;    // frames submitted and not yet waited (>= 1)
  CudaCalibrationDesc calibration;  // its `device` is replaced by the selected one
};

// A LatencyDevice on a CUDA stream, timed by one CudaTimestampSlots of
// 2 * frames_in_flight slots (frame slot i: slots 2i and 2i+1, reset at
// submit). submit_frame launches: begin stamp, the workload
// (FrameWorkload::passes kernels over width*height elements, each element
// running `complexity` iterations of a fixed hash + FMA loop; compute form
// only), end stamp, then records a cudaEventBlockingSync event. wait_frame
// sleeps in cudaEventSynchronize (no spin), takes host_now_ns() right after
// (fence_wake_ns), and reads the pair: gpu_status is ok only when both stamps
// belong to this frame's use of the slots (completed_pair_status).
// Threads: frame calls from one thread; sample_calibration from any thread.
Result<std::unique_ptr<LatencyDevice>> create_cuda_latency_device(
    const std::string& device_selector);
Result<std::unique_ptr<LatencyDevice>> create_cuda_latency_device(
    const CudaLatencyDeviceDesc& desc);

// ---------------------------------------------------------------------------
// Helpers for tests and benchmarks (device code lives in the library)
// ---------------------------------------------------------------------------

// Launches the frame workload's kernels into `stream` over `data` (device
// memory holding at least work.width * work.height floats). Error: bad
// workload (passes 0, complexity outside 1..4096, empty or too big target,
// fragment form) or the launch failed.
Result<void> cuda_launch_workload(CudaStream stream, const FrameWorkload& work, float* data);

// A one-thread kernel that spins for `duration_ns` of %globaltimer.
Result<void> cuda_launch_spin(CudaStream stream, int64_t duration_ns);

// Holds streams until open(): hold() launches a one-thread kernel that waits
// for a flag in mapped memory (at most `timeout_ns`, so a forgotten gate
// never hangs the GPU). The destructor opens the gate and waits for its
// kernels. Not thread-safe.
class CudaStreamGate {
 public:
  static Result<std::unique_ptr<CudaStreamGate>> create(int device = -1,
                                                        int64_t timeout_ns = 10'000'000'000);
  ~CudaStreamGate();
  CudaStreamGate(const CudaStreamGate&) = delete;
  CudaStreamGate& operator=(const CudaStreamGate&) = delete;
  Result<void> hold(CudaStream stream);
  void open();

 private:
  struct Impl;
  explicit CudaStreamGate(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Fused stamps: the workload writes its own begin/end stamps into a pair of
// CudaTimestampSlots, so no stamp kernel runs between the zone edge and the
// work (the tiny stamp kernels of write_timestamp each add a launch and a
// system fence of stream time). Begin = the earliest block start of the first
// pass (thread 0 of each block reads %globaltimer on entry); end = the last
// block of the last pass, read after every block of that pass finished. Only
// latlab's own kernels can carry them (the frame workload, the spin kernel);
// a user's kernels are timed by write_timestamp. No cudaEvent is recorded
// (event_elapsed of the pair reads missing). Slots are read as usual
// (read(), the pool, completed_pair_status); the pair must be reset first.
// Owns a few bytes of device scratch the blocks count themselves in; the
// kernels of one object must run one after another (one stream, or streams
// ordered by the caller): two stamped kernels running at once would share it.
// Not thread-safe. docs/cuda-timing.md compares it with the other ways.
class CudaFusedStamps {
 public:
  static Result<std::unique_ptr<CudaFusedStamps>> create(std::shared_ptr<CudaTimestampSlots> slots);
  ~CudaFusedStamps();
  CudaFusedStamps(const CudaFusedStamps&) = delete;
  CudaFusedStamps& operator=(const CudaFusedStamps&) = delete;

  // cuda_launch_workload with the stamps of slots `begin_slot` and
  // `begin_slot + 1` fused in. Error: bad workload, slot out of range or
  // never reset, or the launch failed.
  Result<void> launch_workload(CudaStream stream, const FrameWorkload& work, float* data,
                               uint32_t begin_slot);
  // cuda_launch_spin with its stamps fused in (read at kernel entry and exit).
  Result<void> launch_spin(CudaStream stream, int64_t duration_ns, uint32_t begin_slot);

 private:
  CudaFusedStamps(std::shared_ptr<CudaTimestampSlots> slots, void* scratch);
  Result<void> check_pair(uint32_t begin_slot) const;
  std::shared_ptr<CudaTimestampSlots> slots_;
  void* scratch_ = nullptr;  // cuda_detail::FusedScratch, device memory
};

// Pairs of (%globaltimer, SM clock) read back to back by one GPU thread,
// for telling how %globaltimer moves against the GPU's own cycle counter
// (bench/cuda_globaltimer.cpp, the globaltimer tests). A one-thread kernel
// on its own stream writes a sample every `interval_cycles` SM cycles into
// a ring in mapped memory until stop() or `max_ns`; the host copies samples
// out without blocking. The SM clock runs at the SM's current frequency
// (boost and power states change it): it is a reference only where its rate
// is shown to be steady. Not thread-safe.
struct CudaClockSample {
  uint64_t globaltimer_ns = 0;        // read before the SM clock
  uint64_t sm_cycles = 0;             // clock64() of the SM the thread runs on
  uint64_t globaltimer_after_ns = 0;  // read right after the SM clock
};
class CudaClockSampler {
 public:
  struct Desc {
    int device = -1;                       // CUDA ordinal; -1 = current device
    uint32_t capacity = 1u << 16;          // ring size in samples; copy out faster than it fills
    uint64_t interval_cycles = 1'000'000;  // between samples (about 0.5 ms at 2 GHz)
    int64_t max_ns = 600'000'000'000;      // the kernel stops by itself after this (default 10 min)
  };
  static Result<std::unique_ptr<CudaClockSampler>> create(const Desc& desc);
  ~CudaClockSampler();  // stops the kernel and waits for it
  CudaClockSampler(const CudaClockSampler&) = delete;
  CudaClockSampler& operator=(const CudaClockSampler&) = delete;

  // Appends the samples written since the last call (never blocks). Error if
  // the ring overran (samples were lost: call more often or raise capacity).
  Result<void> take(std::vector<CudaClockSample>& out);
  // Asks the kernel to stop and waits for it; later take() calls return the rest.
  Result<void> stop();

 private:
  struct Impl;
  explicit CudaClockSampler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// How %globaltimer advances: `steps` successive changes read by one thread.
struct GlobaltimerProbe {
  uint32_t steps = 0;  // changes observed (fewer than asked: the timer stalled)
  uint64_t min_step_ns = 0;
  uint64_t median_step_ns = 0;
  uint64_t max_step_ns = 0;
};
// Runs on `device` (-1: current) and waits for the result (blocking).
Result<GlobaltimerProbe> probe_globaltimer(int device = -1, uint32_t steps = 1000);

// `latlab profile`'s rig on this backend (latlab/core/profile_rig.hpp);
// null, with `failure` set, when it cannot run the reference frame.
std::unique_ptr<ProfileRig> open_cuda_profile_rig(const ProfileRigDesc& desc,
                                            ProfileFailure& failure);

}  // namespace latlab
