// Must not compile: a VkCommandBuffer given to an OpenGL profiler (whose
// stream is its GlContext*), through GpuZone itself.
#include "latlab/profiler_opengl.hpp"

using VkCommandBuffer = struct VkCommandBuffer_T*;

void record(latlab::GlGpuProfiler* prof, VkCommandBuffer cmd) {
  const latlab::GpuZone zone(prof, cmd, "wrong stream");
}
