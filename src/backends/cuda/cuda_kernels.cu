// Device code of the CUDA backend: the %globaltimer stamp, the calibration
// handshake, the frame workload and small kernels for tests and benchmarks.
#include <cuda_runtime.h>

#include "cuda_kernels.hpp"

namespace latlab::cuda_detail {
namespace {

// %globaltimer: the GPU's 64-bit nanosecond timer. The "memory" clobber keeps
// the read in program order with the surrounding mapped-memory accesses.
__device__ __forceinline__ uint64_t globaltimer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}

__global__ void stamp_kernel(StampSlot* slot, uint64_t generation) {
  const uint64_t t = globaltimer_ns();
  volatile StampSlot* s = slot;
  s->ticks = t;
  __threadfence_system();  // the value is visible to the host before the tag
  s->tag = stamp_tag(generation, t);
}

__global__ void calibration_kernel(CalibrationMailbox* mailbox, uint64_t sequence,
                                   uint64_t gpu_timeout_ns) {
  volatile CalibrationMailbox* m = mailbox;
  m->started = sequence;
  __threadfence_system();
  const uint64_t begin = globaltimer_ns();
  // Poll the host's flag: every read crosses the bus, so the loop runs at
  // one read per round trip. No sleep here: it would widen the bracket.
  while (m->go != sequence) {
    if (globaltimer_ns() - begin > gpu_timeout_ns) return;  // host gave up: never hang the GPU
  }
  const uint64_t t = globaltimer_ns();
  m->ticks = t;
  __threadfence_system();
  m->tag = stamp_tag(sequence, t);
}

__global__ void gate_kernel(const uint64_t* flag, uint64_t open_value, uint64_t timeout_ns) {
  const volatile uint64_t* f = flag;
  const uint64_t begin = globaltimer_ns();
  while (*f != open_value) {
    if (globaltimer_ns() - begin > timeout_ns) return;
    __nanosleep(2000);  // a gate may wait long: keep the bus traffic low
  }
}

__global__ void spin_kernel(uint64_t duration_ns) {
  const uint64_t begin = globaltimer_ns();
  while (globaltimer_ns() - begin < duration_ns) {
  }
}

// The per-element cost unit: `complexity` iterations of a xorshift hash and a
// dependent FMA, so the compiler can neither fold nor vectorise it away.
__global__ void workload_kernel(float* data, uint32_t elements, uint32_t complexity,
                                uint32_t pass) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= elements) return;
  float v = data[i];
  uint32_t h = ((i + 1u) * 0x9E3779B9u) ^ ((pass + 1u) * 0x85EBCA6Bu);
  for (uint32_t c = 0; c < complexity; ++c) {
    h ^= h << 13;
    h ^= h >> 17;
    h ^= h << 5;
    const float r = __uint_as_float(0x3f800000u | (h >> 9)) - 1.0f;  // [0, 1)
    v = fmaf(v, 0.75f, r);
  }
  data[i] = v;
}

__global__ void timer_probe_kernel(uint64_t* deltas, uint32_t count) {
  constexpr uint32_t kMaxReadsPerChange = 1u << 24;
  uint64_t prev = globaltimer_ns();
  for (uint32_t k = 0; k < count; ++k) {
    uint64_t t = prev;
    uint32_t reads = 0;
    while (t == prev && reads < kMaxReadsPerChange) {
      t = globaltimer_ns();
      ++reads;
    }
    if (t == prev) {
      deltas[k] = 0;  // the timer did not move: stop, the host reports it
      return;
    }
    deltas[k] = t - prev;
    prev = t;
  }
}

}  // namespace

cudaError_t preload_kernels() {
  // cudaFuncGetAttributes needs the function loaded, so it forces the load.
  cudaFuncAttributes attr{};
  for (const void* k :
       {reinterpret_cast<const void*>(stamp_kernel),
        reinterpret_cast<const void*>(calibration_kernel),
        reinterpret_cast<const void*>(gate_kernel), reinterpret_cast<const void*>(spin_kernel),
        reinterpret_cast<const void*>(workload_kernel),
        reinterpret_cast<const void*>(timer_probe_kernel)}) {
    const cudaError_t e = cudaFuncGetAttributes(&attr, k);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

cudaError_t launch_stamp(cudaStream_t stream, StampSlot* slot, uint64_t generation) {
  void* args[] = {&slot, &generation};
  return cudaLaunchKernel(stamp_kernel, dim3(1), dim3(1), args, 0, stream);
}

cudaError_t launch_calibration(cudaStream_t stream, CalibrationMailbox* mailbox, uint64_t sequence,
                               uint64_t gpu_timeout_ns) {
  void* args[] = {&mailbox, &sequence, &gpu_timeout_ns};
  return cudaLaunchKernel(calibration_kernel, dim3(1), dim3(1), args, 0, stream);
}

cudaError_t launch_gate(cudaStream_t stream, const uint64_t* flag, uint64_t open_value,
                        uint64_t timeout_ns) {
  void* args[] = {&flag, &open_value, &timeout_ns};
  return cudaLaunchKernel(gate_kernel, dim3(1), dim3(1), args, 0, stream);
}

cudaError_t launch_spin(cudaStream_t stream, uint64_t duration_ns) {
  void* args[] = {&duration_ns};
  return cudaLaunchKernel(spin_kernel, dim3(1), dim3(1), args, 0, stream);
}

cudaError_t launch_workload(cudaStream_t stream, float* data, uint32_t elements, uint32_t passes,
                            uint32_t complexity) {
  constexpr uint32_t kBlock = 256;
  const dim3 grid((elements + kBlock - 1) / kBlock);
  for (uint32_t pass = 0; pass < passes; ++pass) {
    void* args[] = {&data, &elements, &complexity, &pass};
    const cudaError_t e = cudaLaunchKernel(workload_kernel, grid, dim3(kBlock), args, 0, stream);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

cudaError_t launch_timer_probe(cudaStream_t stream, uint64_t* deltas, uint32_t count) {
  void* args[] = {&deltas, &count};
  return cudaLaunchKernel(timer_probe_kernel, dim3(1), dim3(1), args, 0, stream);
}

}  // namespace latlab::cuda_detail
