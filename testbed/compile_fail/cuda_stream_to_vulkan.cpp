// Must not compile: a cudaStream_t given to a Vulkan profiler.
#include "latlab/profiler_vulkan.hpp"

using cudaStream_t = struct CUstream_st*;  // as cuda_runtime.h defines it

void record(latlab::VulkanGpuProfiler& prof, cudaStream_t stream) {
  LATLAB_GPU_ZONE(prof, stream, "wrong stream");
}
