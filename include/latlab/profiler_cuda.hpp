// The GPU profiler on CUDA: zones are recorded into cudaStreams and timed by
// the backend's CudaTimestampSlots (cuda.hpp).
//
//   auto prof = create_cuda_profiler(0, {.name = "cuda"}).value();
//   {
//     LATLAB_GPU_ZONE(prof, stream, "simulate");  // stream: a cudaStream_t
//     my_kernel<<<grid, block, 0, stream>>>(...);
//   }
//   cudaEventRecord(frame_done, stream);
//   prof->next_frame();                            // collects what is ready
//   ... once frame_done has completed: prof->retire_frame(that frame's id);
//
// The profiler is a CudaGpuProfiler: its zones take a cudaStream_t (nullptr:
// the legacy default stream) and nothing else; a VkCommandBuffer or a void*
// does not compile (TypedGpuProfiler, profiler.hpp). No CUDA header needed:
// cudaStream_t is CUstream_st*, as cuda.hpp declares it.
//
// A program's own streams in its current context, one object:
//   auto gpu = latlab::cuda::attach({.profiler = {.name = "cuda"}});  // cuda::Gpu
//   { LATLAB_GPU_ZONE(*gpu, stream, "simulate"); ... }
//   const uint64_t id = (*gpu)->frame(); ... once its streams are done: (*gpu)->retire(id);
//
// What a zone spans. Each edge of a zone is a one-thread stamp kernel
// launched into the stream: it reads %globaltimer and writes it to mapped
// host memory. Stream order puts the begin stamp after everything launched
// into the stream before the zone and the end stamp after everything launched
// inside it, so a zone spans from the begin stamp's timer read to the end
// stamp's. The stamps are real kernels and cost GPU time: a zone includes the
// begin stamp's tail (its stores and system fence), the gaps between kernels
// and the end stamp's launch; on an H200 an empty zone measured about 6 us and
// each stamp adds about 3 us to the stream (docs/BENCHMARKS.md). Nested zones
// add their stamps to their parents' spans. Work on other streams is not
// ordered with a zone's stamps: time each stream with its own zones.
//
// Threads: zones may be recorded from several threads at once, each with its
// own stream (CudaTimestampSlots::write is safe for distinct slots and
// streams, which the profiler guarantees). Each recording thread must have
// the profiler's device current (cudaSetDevice): a kernel cannot be launched
// into a stream of another device; such a write fails and is counted
// (CudaTimestampSlots::write_errors), its zone then reads invalid.
//
// Frames in flight: next_frame() never waits. Collection reads the stamps'
// availability in mapped memory; once the owner knows a frame's work has
// completed (an event it recorded after the frame, a stream synchronise), it
// calls retire_frame(frame id), so a stamp that was never written (a failed
// launch) makes its zone invalid instead of keeping the frame waiting.
//
// Ownership: the profiler shares its slots; destroying the last owner waits
// for stamp kernels still queued (their events), so freed memory is never
// written. Destroy it before the device is reset.
#pragma once

#include <memory>
#include <utility>

#include "latlab/clock_sync.hpp"
#include "latlab/cuda.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_attached.hpp"
#include "latlab/result.hpp"

namespace latlab {

// A GpuProfiler whose zones record into CUDA streams (cudaStream_t).
using CudaGpuProfiler = TypedGpuProfiler<CudaStream>;

// The profiler on CudaTimestampSlots of GpuProfiler::slots_needed(desc) slots
// on CUDA device `device` (-1: the calling thread's current device). Errors
// (with why): no usable device, the device cannot map host memory or run
// latlab's kernels (compute capability), an allocation failed.
inline Result<std::unique_ptr<CudaGpuProfiler>> create_cuda_profiler(int device,
                                                                     GpuProfilerDesc desc = {}) {
  // No timing events: the profiler reads the stamps; the events only let the
  // slots' destructor wait for queued stamps.
  auto slots = CudaTimestampSlots::create(
      {.count = GpuProfiler::slots_needed(desc), .device = device, .cross_check_events = false});
  if (!slots) return slots.error();
  return CudaGpuProfiler::create(std::move(slots.value()), std::move(desc));
}

namespace cuda {

struct AttachDesc {
  int device = -1;  // CUDA device; -1: the calling thread's current device
  GpuProfilerDesc profiler;
};

// One owner of everything latlab keeps on a CUDA device: the profiler's
// stamp slots, the clock sync and the profiler (with the trace, stats and
// teardown of AttachedProfiler). Zones take the program's cudaStream_t.
// Threads and ownership: as CudaGpuProfiler's (above).
class Gpu final : public AttachedProfiler<CudaStream> {
 public:
  // Errors (with why): no usable device, the device cannot map host memory
  // or run latlab's kernels, an allocation failed.
  static Result<std::unique_ptr<Gpu>> attach(const AttachDesc& desc = {}) {
    auto prof = create_cuda_profiler(desc.device, desc.profiler);
    if (!prof) return prof.error();
    std::unique_ptr<ClockSync> clock = start_cuda_clock_sync(desc.device);
    return std::unique_ptr<Gpu>(new Gpu(std::move(prof.value()), std::move(clock)));
  }
  ~Gpu() = default;

  // Once per frame: closes the frame if it holds a zone and collects what is
  // ready; never waits. Returns the id of the frame it closed (or of the
  // open one, when it held no zone): retire(id) once that frame's streams
  // are done (an event recorded after it, a stream synchronise).
  uint64_t frame() {
    const uint64_t closed = profiler().current_frame_id();
    profiler().next_frame();
    return closed;
  }
  // The open frame is never retired (its zones may still be recorded).
  void retire(uint64_t frame_id) {
    if (frame_id < profiler().current_frame_id()) profiler().retire_frame(frame_id);
  }

 private:
  Gpu(std::unique_ptr<CudaGpuProfiler> prof, std::unique_ptr<ClockSync> clock)
      : AttachedProfiler(std::move(prof), std::move(clock)) {}
};

// latlab::cuda::attach(desc): Gpu::attach.
inline Result<std::unique_ptr<Gpu>> attach(const AttachDesc& desc = {}) {
  return Gpu::attach(desc);
}

}  // namespace cuda

}  // namespace latlab
