// Shared host-side internals of the CUDA backend (cuda_runtime_util.hpp).
#include "backends/cuda/cuda_runtime_util.hpp"

#include <cuda_runtime.h>

#include <cstring>

#include "backends/cuda/cuda_kernels.hpp"
#include "latlab/cuda.hpp"

#ifndef LATLAB_CUDA_MIN_CC
#define LATLAB_CUDA_MIN_CC \
  90  // lowest compute capability the kernels are built for (10*major+minor)
#endif

namespace latlab::cuda_detail {

std::string cuda_error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

Error cuda_fail(std::string_view what, cudaError_t e) {
  return make_error("CUDA: " + std::string(what) + " failed (" + cuda_error_text(e) + ")");
}

Result<int> device_count() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    int runtime = 0;
    (void)cudaRuntimeGetVersion(&runtime);
    return make_error(
        "CUDA: no usable device: cudaGetDeviceCount failed (" + cuda_error_text(e) +
        "). Check that the NVIDIA driver is installed and loaded (nvidia-smi), that it "
        "supports CUDA runtime " +
        format_cuda_version(runtime) + ", and that CUDA_VISIBLE_DEVICES does not hide the GPU.");
  }
  if (n <= 0) {
    return make_error(
        "CUDA: no usable device: cudaGetDeviceCount returned 0. Check nvidia-smi and "
        "CUDA_VISIBLE_DEVICES.");
  }
  return n;
}

Result<int> resolve_device(int requested) {
  auto count = device_count();
  if (!count) return count.error();
  int device = requested;
  if (device < 0) {
    const cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess) return cuda_fail("cudaGetDevice", e);
  }
  if (device >= *count) {
    return make_error("CUDA: device " + std::to_string(device) + " does not exist (" +
                      std::to_string(*count) + " device(s) visible)");
  }
  return device;
}

Result<void> require_mapped_memory(int device) {
  int can_map = 0;
  const cudaError_t e = cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, device);
  if (e != cudaSuccess) return cuda_fail("cudaDeviceGetAttribute(CanMapHostMemory)", e);
  if (!can_map) {
    return make_error("CUDA: device " + std::to_string(device) +
                      " cannot map host memory; latlab's timestamps and calibration need mapped "
                      "pinned memory (cudaHostAllocMapped)");
  }
  return {};
}

Result<void> preload(int device) {
  const cudaError_t e = preload_kernels();
  if (e != cudaSuccess)
    return cuda_fail("loading latlab's kernels on device " + std::to_string(device), e);
  return {};
}

Result<void> require_kernel_arch(int device) {
  int major = 0;
  int minor = 0;
  cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  if (e != cudaSuccess) return cuda_fail("cudaDeviceGetAttribute(ComputeCapability)", e);
  if (major * 10 + minor < LATLAB_CUDA_MIN_CC) {
    return make_error(
        "CUDA: device " + std::to_string(device) + " has compute capability " +
        std::to_string(major) + "." + std::to_string(minor) + "; latlab's kernels are built for " +
        std::to_string(LATLAB_CUDA_MIN_CC / 10) + "." + std::to_string(LATLAB_CUDA_MIN_CC % 10) +
        " and newer (rebuild with CUDA_ARCHITECTURES for this GPU)");
  }
  return {};
}

Result<MappedBlock> alloc_mapped(size_t bytes) {
  MappedBlock b;
  // Not write-combined: the host reads this memory, and WC reads are uncached.
  cudaError_t e = cudaHostAlloc(&b.host, bytes, cudaHostAllocMapped | cudaHostAllocPortable);
  if (e != cudaSuccess)
    return cuda_fail("cudaHostAlloc(mapped, " + std::to_string(bytes) + " bytes)", e);
  std::memset(b.host, 0, bytes);
  e = cudaHostGetDevicePointer(&b.device, b.host, 0);
  if (e != cudaSuccess) {
    (void)cudaFreeHost(b.host);
    return cuda_fail("cudaHostGetDevicePointer", e);
  }
  return b;
}

Result<cudaStream_t> create_stream(bool highest_priority) {
  int least = 0;
  int greatest = 0;
  cudaError_t e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
  if (e != cudaSuccess) return cuda_fail("cudaDeviceGetStreamPriorityRange", e);
  cudaStream_t s = nullptr;
  // Non-blocking: never serialised behind the legacy default stream.
  e = cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, highest_priority ? greatest : least);
  if (e != cudaSuccess) return cuda_fail("cudaStreamCreateWithPriority", e);
  return s;
}

Result<void> ready_device(const DeviceScope& scope, int device) {
  if (scope.status() != cudaSuccess) return cuda_fail("cudaSetDevice", scope.status());
  if (auto ok = require_mapped_memory(device); !ok) return ok;
  if (auto ok = require_kernel_arch(device); !ok) return ok;
  return preload(device);
}

}  // namespace latlab::cuda_detail
