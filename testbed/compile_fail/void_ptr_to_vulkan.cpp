// Must not compile: a plain void* given to a Vulkan profiler.
#include "latlab/profiler_vulkan.hpp"

void record(latlab::VulkanGpuProfiler* prof, void* stream) {
  LATLAB_GPU_ZONE(prof, stream, "untyped stream");
}
