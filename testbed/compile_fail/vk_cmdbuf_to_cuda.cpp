// Must not compile: a VkCommandBuffer given to a CUDA profiler. The handle
// is declared as vulkan_core.h declares it (VK_DEFINE_HANDLE), so this case
// needs neither Vulkan nor CUDA installed.
#include <memory>

#include "latlab/profiler_cuda.hpp"

using VkCommandBuffer = struct VkCommandBuffer_T*;

void record(const std::unique_ptr<latlab::CudaGpuProfiler>& prof, VkCommandBuffer cmd) {
  LATLAB_GPU_ZONE(prof, cmd, "wrong stream");
}
