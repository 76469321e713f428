// Must not compile: a cudaStream_t given to a profiler on a program's Vulkan device.
#include "latlab/profiler_vulkan.hpp"

using cudaStream_t = struct CUstream_st*;  // as cuda_runtime.h defines it

void record(const std::unique_ptr<latlab::vulkan::Gpu>& gpu, cudaStream_t stream) {
  LATLAB_GPU_ZONE_TRANSIENT(gpu, stream, "wrong stream");
}
