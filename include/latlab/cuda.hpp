// CUDA timing: timestamp slots for the user's streams (the timestamp query pool and
// the profiler run on them) and bracketed GPU->host calibration pairs. The
// benchmark rig (the LatencyDevice for the latency path, workload and spin
// kernels, fused stamps, stream gates, %globaltimer probes) is
// latlab/bench/cuda_rig.hpp; both are compiled into latlab_cuda
// (latlab::cuda).
//
// Technique. A timestamp is a one-thread kernel launched into the stream
// that reads %globaltimer (the GPU's 64-bit nanosecond timer) and writes it
// into a slot of pinned, host-mapped memory, followed by a tag that binds the
// value to the generation of the slot's allocation (see cuda_kernels.hpp).
// Why this and not cudaEvents alone:
//  * reads never block and need no API call: a slot is a plain host memory
//    load (acquire), availability is the tag (cudaEventQuery per slot would
//    be a driver call per query, and cudaEventElapsedTime gives only a
//    difference, never a time that can be placed on the host clock);
//  * the raw ns value can be calibrated against CLOCK_MONOTONIC, so kernel
//    begin/end land on the host timeline (launch latency, core latency);
//  * the generation tag detects a late write from a previous use of a slot,
//    which an event cannot tell apart.
// Each slot also keeps a cudaEvent recorded right after its stamp kernel, so
// durations can be cross-checked against cudaEventElapsedTime (the stamp and
// the event are in the same order at both ends, so their spans are equal up
// to jitter and the two clocks' resolutions).
//
// Cost: a stamp is one extra kernel in the stream (a few us of stream time
// per stamp: the launch, and the kernel's system fence) plus one
// cudaEventRecord on the host. A measured span therefore includes the tail of
// the begin stamp and the launch of the end stamp around the user's work.
//
// The GPU clock is not the host clock. %globaltimer counts ns on its own
// epoch (on recent drivers close to, but not equal to, CLOCK_REALTIME; it may
// also step and update in coarse increments, e.g. 32 ns to 1 us depending on
// the GPU and driver). It is never trusted as a host time: map it with
// calibration pairs (CudaCalibrationSampler, the latency device's sample_calibration)
// and a ClockModel.
//
// Host clock: every host time here is latlab::host_now_ns() (CLOCK_MONOTONIC).
// Device ticks: %globaltimer ns, TickFormat{1, 1, 64} (kCudaGlobaltimerTicks).
//
// This header needs no CUDA header: streams are passed as CUstream_st*, the
// type cudaStream_t names.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "latlab/calibrator.hpp"
#include "latlab/clock_model.hpp"
#include "latlab/clock_sync.hpp"
#include "latlab/query_status.hpp"
#include "latlab/result.hpp"
#include "latlab/core/capability.hpp"
#include "latlab/tick_format.hpp"
#include "latlab/timestamp_query_pool.hpp"
#include "latlab/timestamp_slots.hpp"

struct CUstream_st;  // cudaStream_t == CUstream_st*
struct CUevent_st;   // cudaEvent_t == CUevent_st*

namespace latlab {

using CudaStream = CUstream_st*;  // a cudaStream_t; nullptr is the legacy default stream

// %globaltimer: 1 ns per tick, 64 valid bits.
inline constexpr TickFormat kCudaGlobaltimerTicks{1, 1, 64};
inline constexpr const char* kCudaCalibrationDomain = "CLOCK_MONOTONIC (bracketed %globaltimer)";
// Why CUDA results are never `disjoint` (the devices' missing "disjoint_detection").
inline constexpr const char* kCudaNoDisjointReason =
    "CUDA has no disjoint signal: %globaltimer is read by kernels and nothing reports a jump of it "
    "during a timed span; a span crossing one reads as ok or, if end < begin, invalid";

// ---------------------------------------------------------------------------
// Devices
// ---------------------------------------------------------------------------

// What `latlab devices` shows for one CUDA device.
struct CudaDeviceReport {
  int index = 0;           // CUDA device ordinal
  std::string name;        // cudaDeviceProp::name
  std::string pci_bus_id;  // "0000:01:00.0"
  std::string uuid;        // cudaDeviceProp::uuid as text (the same bytes as Vulkan's deviceUUID)
  int cc_major = 0;        // compute capability
  int cc_minor = 0;
  int sm_count = 0;  // multiprocessors
  uint64_t total_memory_bytes = 0;
  int clock_khz = 0;         // peak SM clock (cudaDevAttrClockRate), 0 if unknown
  int memory_clock_khz = 0;  // peak memory clock, 0 if unknown
  int memory_bus_width_bits = 0;
  int driver_version = 0;            // cudaDriverGetVersion, e.g. 13000
  int runtime_version = 0;           // cudaRuntimeGetVersion
  bool can_map_host_memory = false;  // required for timestamps and calibration
  bool concurrent_kernels = false;
  bool unified_addressing = false;
  std::vector<MissingCapability> missing;  // what latlab cannot use on it, with why
};

// Every CUDA device. Error (with the CUDA error and what to check) when CUDA
// cannot be used at all: no driver, driver too old, no device visible.
// Creates no context and launches nothing.
Result<std::vector<CudaDeviceReport>> enumerate_cuda_devices();

// "13.0" for 13000 (CUDA's encoding 1000*major + 10*minor).
inline std::string format_cuda_version(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

// The ordinal of the device `selector` names: "" -> 0, all digits -> that
// ordinal, else the first device whose name contains it (case-insensitive).
// Error: CUDA unusable (as enumerate_cuda_devices), or nothing matches (the
// message lists the devices). Creates no context.
Result<int> find_cuda_device(const std::string& selector);

// ---------------------------------------------------------------------------
// Timestamp slots
// ---------------------------------------------------------------------------

struct CudaTimestampSlotsDesc {
  uint32_t count = 8192;  // stamp slots (>= 2). Default 8192, as the profiler's defaults need
  int device = -1;        // CUDA ordinal; -1 = the calling thread's current device
  bool cross_check_events = true;  // timing cudaEvents beside the stamps (event_elapsed);
                                   // off: events are created without timing (cheaper)
  // Default true: a cudaEvent is recorded after each stamp, so event_elapsed
  // works and the destructor waits for stamps still queued. False: a write is
  // the stamp kernel only (one API call); event_elapsed reads missing, and the
  // owner must synchronise every stream that wrote the slots before
  // destroying them (the latency device does: it owns its one stream).
  bool record_events = true;
};

// The backend seam's TimestampSlots on CUDA streams: the timestamp query pool
// (create_cuda_query_pool) and the profiler (GpuProfiler::create(slots, ...),
// LATLAB_GPU_ZONE(prof, stream, "name")) run on it. A write launches the
// stamp kernel of the slot into the stream (a cudaStream_t passed as
// GpuCommandStream) and records the slot's event; each reset gives the slot
// a new generation, so a late stamp of an earlier use reads back kLate.
// Owns its mapped memory and events; the destructor waits for stamp kernels
// still queued (with record_events) so the GPU never writes into freed memory.
// Threads: write() from several threads at once for distinct slots and
// streams (the slots' device must be current on the calling thread: a kernel
// cannot be launched into another device's stream); read/reset from one
// thread, ordered before the writes of the slots they reset (the pool's and
// the profiler's hand-out does that).
class CudaTimestampSlots final : public TimestampSlots {
 public:
  // Error if the device cannot be used or cannot map host memory.
  static Result<std::shared_ptr<CudaTimestampSlots>> create(
      const CudaTimestampSlotsDesc& desc = {});
  ~CudaTimestampSlots() override;

  uint32_t slot_count() const override { return count_; }
  TickFormat tick_format() const override { return kCudaGlobaltimerTicks; }
  // A failed launch is counted (write_errors); the slot then stays unwritten.
  void write(GpuCommandStream stream, uint32_t slot, TimestampEdge edge) override;
  void read(uint32_t first, std::span<SlotReading> out) override;
  void reset(uint32_t first, uint32_t count, bool previous_use_done) override;

  // write() with its error: slot out of range, or the launch failed (the
  // CUDA error). The stream must belong to the slots' device, with that
  // device current.
  Result<void> write_timestamp(CudaStream stream, uint32_t slot);

  // cudaEventElapsedTime between the events recorded with the latest stamps
  // of `begin_slot` and `begin_slot + 1`; never blocks. Status: ok (ms set),
  // not_ready (an event has not completed), missing (never recorded, the two
  // stamps belong to different uses, or cross-checking off), invalid (CUDA
  // reported an error).
  struct EventSpan {
    QueryStatus status = QueryStatus::missing;
    double ms = 0.0;  // valid when status == ok
  };
  EventSpan event_elapsed(uint32_t begin_slot) const;

  int device() const { return device_; }
  uint64_t write_errors() const { return write_errors_.load(std::memory_order_relaxed); }

 private:
  friend class CudaFusedStamps;  // writes slots from inside the workload
  CudaTimestampSlots(uint32_t count, int device, bool timing_events, bool record_events);

  uint32_t count_ = 0;
  int device_ = 0;
  bool timing_events_ = true;
  bool record_events_ = true;
  void* host_slots_ = nullptr;    // cuda_detail::StampSlot[count], mapped
  void* device_slots_ = nullptr;  // the same memory, device address
  uint64_t next_generation_ = 1;
  std::vector<uint64_t> slot_generation_;   // the use a slot belongs to now
  std::vector<CUevent_st*> events_;         // one per slot (none without record_events)
  std::vector<uint64_t> event_generation_;  // generation of the slot's last record (0: none)
  std::atomic<uint64_t> write_errors_{0};
};

struct CudaQueryPoolDesc {
  QueryPoolDesc pool;              // capacity (even), uid kind, retained frames
  int device = -1;                 // CUDA ordinal; -1 = the calling thread's current device
  bool cross_check_events = true;  // see CudaTimestampSlotsDesc
};

// A timestamp query pool on its own CudaTimestampSlots of desc.pool.max_queries slots.
Result<std::unique_ptr<TimestampQueryPool>> create_cuda_query_pool(
    const CudaQueryPoolDesc& desc = {});

// ---------------------------------------------------------------------------
// Calibration
// ---------------------------------------------------------------------------

struct CudaCalibrationDesc {
  int device = -1;        // CUDA ordinal; -1 = current device
  uint32_t brackets = 4;  // brackets per sample(); the narrowest is returned (>= 1)
  int64_t start_timeout_ns =
      200'000'000;                        // wait for the kernel to start (GPU busy), default 200 ms
  int64_t reply_timeout_ns = 10'000'000;  // wait for the GPU's reply after the flag, default 10 ms
  int64_t gpu_wait_timeout_ns = 50'000'000;  // the kernel stops waiting for the flag after this
};

// Takes calibration pairs by a handshake in mapped memory. On its own
// high-priority non-blocking stream, a one-thread kernel announces that it
// runs and spins on a host-written flag; the host reads host_now_ns() (t0),
// writes the flag, and waits (a bounded spin of a few us) for the kernel's
// %globaltimer reply, read right after it saw the flag; then host_now_ns()
// (t2). The GPU read happened inside [t0, t2], so the pair is
// (ticks, midpoint, half width): one bus round trip wide, independent of the
// launch latency. Pairs are `estimated` (bracketed, not driver-calibrated).
//
// Thread-safe: sample() serialises on an internal mutex and selects the
// sampler's device on the calling thread for the call only.
class CudaCalibrationSampler {
 public:
  static Result<std::unique_ptr<CudaCalibrationSampler>> create(
      const CudaCalibrationDesc& desc = {});
  ~CudaCalibrationSampler();
  CudaCalibrationSampler(const CudaCalibrationSampler&) = delete;
  CudaCalibrationSampler& operator=(const CudaCalibrationSampler&) = delete;

  // The narrowest of desc.brackets brackets. Error if none succeeded (each
  // failure's reason is in the message: kernel did not start, no reply,
  // CUDA error).
  Result<CalibrationPair> sample();
  int device() const;

 private:
  struct Impl;
  explicit CudaCalibrationSampler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The calibrator and its refresh on CUDA device `device` (-1: the calling
// thread's current device), through a CudaCalibrationSampler of its own
// (`calibration`; its device is replaced by `device`): what
// GpuProfiler::set_clock_mapper takes is clock->mapper() (clock_sync.hpp).
// Never fails: where no sampler can be made, the ClockSync is unavailable
// with the reason. Attach: a program's streams in its current context need
// nothing else; the sampler's stream and the refresh thread use the
// device's primary context (what the CUDA runtime uses; a context of the
// program's made with cuCtxCreate is not followed onto the refresh thread).
std::unique_ptr<ClockSync> start_cuda_clock_sync(int device = -1,
                                                 const CudaCalibrationDesc& calibration = {},
                                                 const CalibratorDesc& desc = {});

}  // namespace latlab
