// Host-side internals shared by the CUDA backend's sources: CUDA error text,
// device selection and checks, mapped memory and its atomic access, streams.
// Private to src/backends/cuda/ (needs the CUDA runtime header).
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>

#include "latlab/host_clock.hpp"
#include "latlab/result.hpp"

namespace latlab::cuda_detail {

// "cudaErrorX: description".
std::string cuda_error_text(cudaError_t e);
// "CUDA: <what> failed (<error>)".
Error cuda_fail(std::string_view what, cudaError_t e);

// Mapped memory shared with the GPU is read and written through atomic_ref:
// the device is a concurrent writer the C++ memory model does not know of.
inline uint64_t load_acquire(uint64_t& word) {
  return std::atomic_ref<uint64_t>(word).load(std::memory_order_acquire);
}
inline uint64_t load_relaxed(uint64_t& word) {
  return std::atomic_ref<uint64_t>(word).load(std::memory_order_relaxed);
}
inline void store_relaxed(uint64_t& word, uint64_t v) {
  std::atomic_ref<uint64_t>(word).store(v, std::memory_order_relaxed);
}
inline void store_release(uint64_t& word, uint64_t v) {
  std::atomic_ref<uint64_t>(word).store(v, std::memory_order_release);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Waits for pred() up to timeout_ns. Spins (with a pause hint) for the first
// `spin_ns`, where the expected wait is a bus round trip or a kernel launch;
// then sleeps 50 us between checks so a long wait does not burn a core.
template <class Pred>
bool wait_until(Pred pred, int64_t timeout_ns, int64_t spin_ns) {
  const int64_t start = host_now_ns();
  for (;;) {
    if (pred()) return true;
    const int64_t waited = host_now_ns() - start;
    if (waited > timeout_ns) return pred();
    if (waited < spin_ns) {
      cpu_relax();
    } else {
      const timespec nap{0, 50'000};
      nanosleep(&nap, nullptr);
    }
  }
}

// Selects `device` on the calling thread for the scope (CUDA's current device
// is per thread) and restores the previous one if it changed it.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    if (device >= 0 && device != previous_) {
      status_ = cudaSetDevice(device);
      changed_ = status_ == cudaSuccess && previous_ >= 0;
    }
  }
  ~DeviceScope() {
    if (changed_) (void)cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  cudaError_t status() const { return status_; }

 private:
  int previous_ = -1;
  bool changed_ = false;
  cudaError_t status_ = cudaSuccess;
};

// Devices visible; error (with what to check) when CUDA cannot be used.
Result<int> device_count();
// `requested` < 0: the calling thread's current device.
Result<int> resolve_device(int requested);
// Error unless the device can map host memory (timestamps and calibration need it).
Result<void> require_mapped_memory(int device);
// Error unless the device runs the kernels this build holds.
Result<void> require_kernel_arch(int device);
// Loads latlab's kernels into the current device's context now (see preload_kernels).
Result<void> preload(int device);
// What every create() on `device` checks first, with `scope` (the caller's,
// kept for the rest of create()) selecting it: cudaSetDevice succeeded,
// require_mapped_memory, require_kernel_arch, preload.
Result<void> ready_device(const DeviceScope& scope, int device);

// Pinned, host-mapped memory: host pointer and the device's address of it.
struct MappedBlock {
  void* host = nullptr;
  void* device = nullptr;
};
// Zeroed; the caller frees `host` with cudaFreeHost.
Result<MappedBlock> alloc_mapped(size_t bytes);

// A non-blocking stream (never serialised behind the legacy default stream)
// of the current device, at its lowest or highest priority.
Result<cudaStream_t> create_stream(bool highest_priority);

}  // namespace latlab::cuda_detail
