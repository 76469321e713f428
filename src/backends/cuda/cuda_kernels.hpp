// Internal interface between the CUDA host logic (the .cpp files, plain C++ with
// the project's warnings) and the device code (cuda_kernels.cu, nvcc).
//
// Everything a kernel writes for the host goes to pinned, host-mapped memory
// (cudaHostAlloc(cudaHostAllocMapped)), so the host reads it with plain loads:
// no API call, no stall.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#if defined(__CUDACC__)
#define LATLAB_HOST_DEVICE __host__ __device__
#else
#define LATLAB_HOST_DEVICE
#endif

namespace latlab::cuda_detail {

// One timestamp in mapped memory. The stamp kernel stores `ticks`
// (%globaltimer, ns), then __threadfence_system(), then `tag` =
// stamp_tag(generation, ticks). The host loads `tag` (acquire), then `ticks`:
//  * tag == 0: not written since the host reset it;
//  * tag == stamp_tag(expected, ticks): written by the expected use;
//  * anything else: a write of another use (a late one, decodable as
//    tag ^ stamp_mix(ticks)) or two uses interleaved in one slot. The tag
//    binds the generation to the value, so a value of one use paired with
//    the tag of another is never accepted (short of a 2^-64 hash collision).
struct alignas(16) StampSlot {
  uint64_t ticks;
  uint64_t tag;
};
static_assert(sizeof(StampSlot) == 16, "StampSlot is two 64-bit words");

// splitmix64's finaliser: a bijective 64-bit mix, same on host and device.
LATLAB_HOST_DEVICE inline uint64_t stamp_mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

LATLAB_HOST_DEVICE inline uint64_t stamp_tag(uint64_t generation, uint64_t ticks) {
  return generation ^ stamp_mix(ticks);
}

// The calibration mailbox, in mapped memory. The host writes `go` (its own
// cache line); the kernel writes `started`, `ticks` and `tag`.
struct alignas(64) CalibrationMailbox {
  uint64_t go;  // host: the sequence number the kernel waits for
  uint64_t pad0[7];
  uint64_t started;  // kernel: its sequence number, as soon as it runs
  uint64_t ticks;    // kernel: %globaltimer read after it saw `go`
  uint64_t tag;      // kernel: stamp_tag(sequence, ticks), after ticks
  uint64_t pad1[5];
};
static_assert(sizeof(CalibrationMailbox) == 128, "two cache lines");

// Loads every kernel of this file into the current device's context now.
// CUDA loads kernels lazily on first launch by default (CUDA_MODULE_LOADING=
// LAZY); a load between two stamps would be measured as GPU time.
cudaError_t preload_kernels();

// Launchers. Each returns the launch's own status (cudaLaunchKernel), never
// an earlier unrelated error. Pointers are device pointers of mapped memory
// (cudaHostGetDevicePointer) unless said otherwise.

// One thread: slot <- (%globaltimer, stamp_tag(generation, ticks)).
cudaError_t launch_stamp(cudaStream_t stream, StampSlot* slot, uint64_t generation);

// One thread: writes `started` = sequence, waits (polling mapped memory, at
// most gpu_timeout_ns of %globaltimer) for `go` == sequence, then reads
// %globaltimer into ticks/tag. On timeout it exits without writing ticks.
cudaError_t launch_calibration(cudaStream_t stream, CalibrationMailbox* mailbox, uint64_t sequence,
                               uint64_t gpu_timeout_ns);

// One thread: waits until *flag == open_value or timeout_ns passed.
cudaError_t launch_gate(cudaStream_t stream, const uint64_t* flag, uint64_t open_value,
                        uint64_t timeout_ns);

// One thread: spins on %globaltimer for duration_ns.
cudaError_t launch_spin(cudaStream_t stream, uint64_t duration_ns);

// `passes` kernels over `elements` floats of device memory `data`, each
// element running `complexity` iterations of the fixed hash + FMA loop.
cudaError_t launch_workload(cudaStream_t stream, float* data, uint32_t elements, uint32_t passes,
                            uint32_t complexity);

// One thread: reads %globaltimer until it changed `count` times and stores
// each change (ns) in device memory `deltas`; a change that does not come
// within a bounded number of reads is stored as 0 and ends the probe.
cudaError_t launch_timer_probe(cudaStream_t stream, uint64_t* deltas, uint32_t count);

// Fused stamps: device memory a stamped kernel coordinates its blocks in.
// `first` holds the earliest block start (%globaltimer, atomicMin), `done` the
// blocks finished; the last block to finish resets both for the next launch,
// so one scratch serves the kernels of one stream one after another (never
// two kernels that may run at once). Zeroed: first must be ~0 before use
// (init_fused_scratch).
struct FusedScratch {
  unsigned long long first;
  unsigned int done;
  unsigned int pad;
};

// Where a fused kernel writes its stamps: slot pointers (mapped memory,
// device address) and the generations their tags carry; a null slot is not
// written.
struct FusedStamps {
  StampSlot* begin;
  uint64_t begin_generation;
  StampSlot* end;
  uint64_t end_generation;
  FusedScratch* scratch;  // device memory (unused by the one-thread spin)
};

// One thread: first = ~0, done = 0.
cudaError_t launch_init_fused_scratch(cudaStream_t stream, FusedScratch* scratch);

// launch_spin with the stamps fused: %globaltimer at kernel entry -> begin,
// after the spin -> end.
cudaError_t launch_fused_spin(cudaStream_t stream, uint64_t duration_ns, FusedStamps stamps);

// launch_workload with the stamps fused: `stamps.begin` (earliest block
// start of the first pass) and `stamps.end` (the last block of the last pass,
// after every block of that pass finished its elements) are written by the
// last block to finish each pass. Each pass kernel uses `stamps.scratch`.
cudaError_t launch_fused_workload(cudaStream_t stream, float* data, uint32_t elements,
                                  uint32_t passes, uint32_t complexity, FusedStamps stamps);

// A (%globaltimer, SM clock) pair, read back to back by one thread.
struct ClockSample {
  uint64_t globaltimer_ns;  // %globaltimer read before the SM clock
  uint64_t sm_cycles;       // clock64()
  uint64_t globaltimer_after_ns;  // %globaltimer read right after clock64()
  uint64_t pad;
};
static_assert(sizeof(ClockSample) == 32, "four 64-bit words");

// One thread: every `interval_cycles` of clock64() stores a ClockSample in
// ring[count % capacity] (mapped memory), then `*count` (release: fence
// first), until *stop != 0 or max_ns of %globaltimer passed.
cudaError_t launch_clock_sampler(cudaStream_t stream, ClockSample* ring, uint64_t* count,
                                 const uint64_t* stop, uint32_t capacity, uint64_t interval_cycles,
                                 uint64_t max_ns);

}  // namespace latlab::cuda_detail
