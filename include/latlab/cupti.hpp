// CUPTI observer of CUDA work: per-kernel start/end as the GPU itself records
// them (CUPTI Activity API, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, the source
// Nsight Systems shows), an observer independent of latlab's own stamps.
// Its records are a series of their own: compare them with latlab's stamps,
// never put them in place of a stamp.
//
// Optional: built as latlab_cupti where the CUDA backend is built and CMake
// finds libcupti (CUDA::cupti); LATLAB_HAVE_CUPTI is defined for its users.
//
// Clock. CUPTI records GPU timestamps on the GPU and converts them to CPU
// time itself, by linear interpolation against a CPU timestamp source (its
// documentation of cuptiActivityRegisterTimestampCallback). By default that
// source is CLOCK_REALTIME, which NTP may step or slew; the observer
// registers latlab::host_now_ns (CLOCK_MONOTONIC) as CUPTI's timestamp
// callback, so every record is on the run's host clock with CUPTI's own
// calibration, and no second mapping (bracketing cuptiGetTimestamp against
// CLOCK_MONOTONIC, with its own bracket error and REALTIME steps in between)
// is stacked on it. CUPTI does not publish the error of its conversion; the
// comparison bench (bench/cuda_timing.cpp) measures it against latlab's
// bracketed calibration (docs/cuda-timing.md).
//
// CUPTI is per process: one observer at a time (create() fails while one
// exists). Create it before the CUDA work it should see; records of kernels
// that completed before create() are not reported.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "latlab/cuda.hpp"
#include "latlab/result.hpp"

namespace latlab {

// One kernel execution as CUPTI recorded it.
struct CuptiKernelRecord {
  std::string name;             // the kernel's (mangled) name
  uint32_t device = 0;          // CUDA device ordinal
  uint32_t context_id = 0;      // CUPTI's context id
  uint32_t stream_id = 0;       // CUPTI's stream id (CuptiKernelObserver::stream_id)
  uint32_t correlation_id = 0;  // CUPTI's id of the launch call
  int64_t start_ns = 0;         // host clock (CLOCK_MONOTONIC), CUPTI's GPU->host conversion
  int64_t end_ns = 0;           // host clock; end_ns >= start_ns
  int64_t grid_blocks = 0;      // gridX * gridY * gridZ
};

struct CuptiObserverDesc {
  // Bytes of each activity buffer handed to CUPTI (default 4 MiB: about 20k
  // kernel records); CUPTI asks for more when one fills.
  size_t buffer_bytes = 4u << 20;
  // false (default): CONCURRENT_KERNEL, which keeps kernels concurrent.
  // true: KERNEL, which serialises every kernel of the process (a different
  // timeline than the application's; for experiments only).
  bool serialize_kernels = false;
};

// Threads: take() and stream_id() from any thread (an internal mutex);
// CUPTI delivers buffers on its own thread.
class CuptiKernelObserver {
 public:
  // Error: another observer exists, CUPTI could not be initialised (the
  // CUPTI error and what to check: libcupti version vs driver, a profiler
  // already attached), or the activity kind could not be enabled.
  static Result<std::unique_ptr<CuptiKernelObserver>> create(const CuptiObserverDesc& desc = {});
  // Disables the activity kinds, flushes, and drops what was not taken.
  ~CuptiKernelObserver();
  CuptiKernelObserver(const CuptiKernelObserver&) = delete;
  CuptiKernelObserver& operator=(const CuptiKernelObserver&) = delete;

  // Flushes CUPTI's buffers (cuptiActivityFlushAll: blocks for the flush,
  // not for the GPU; call it outside a frame loop) and moves out every kernel
  // record delivered since the last call, in delivery order (sort by
  // start_ns for a stream's order). A kernel still running is not reported
  // yet: synchronise first for a complete list.
  Result<std::vector<CuptiKernelRecord>> take();

  // CUPTI's id of `stream` (nullptr: the legacy default stream), to select
  // one stream's records. Error from cuptiGetStreamIdEx.
  Result<uint32_t> stream_id(CudaStream stream) const;

  // Records lost since create(): dropped by CUPTI (buffers full) or
  // delivered incomplete (no end time).
  uint64_t dropped() const;

 private:
  CuptiKernelObserver() = default;
};

}  // namespace latlab
