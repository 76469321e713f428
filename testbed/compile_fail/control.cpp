// Compiles: each typed profiler with its own stream type, through every zone
// form, and the untyped path (sim). The control of the compile-fail cases: if
// this fails, their rejections prove nothing (an include path, a flag).
#include "latlab/bench/sim_timestamp_slots.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_cuda.hpp"
#include "latlab/profiler_opengl.hpp"
#ifdef LATLAB_CF_VULKAN
#include "latlab/profiler_queues.hpp"
#include "latlab/profiler_vulkan.hpp"
#endif

#include <memory>
#include <string>
#include <type_traits>

using cudaStream_t = struct CUstream_st*;  // as cuda_runtime.h defines it

// Each API's profiler names the stream it records into.
static_assert(std::is_same_v<latlab::CudaGpuProfiler::stream_type, cudaStream_t>);
static_assert(std::is_same_v<latlab::GlGpuProfiler::stream_type, latlab::GlContext*>);
#ifdef LATLAB_CF_VULKAN
static_assert(std::is_same_v<latlab::VulkanGpuProfiler::stream_type, VkCommandBuffer>);
#endif

void record(latlab::CudaGpuProfiler& cuda, cudaStream_t stream, latlab::GlGpuProfiler* gl,
            latlab::GlContext* ctx, const std::unique_ptr<latlab::GpuProfiler>& untyped,
            latlab::SimCommandStream* sim, const std::string& name) {
  LATLAB_GPU_ZONE(cuda, stream, "cuda");
  LATLAB_GPU_ZONE(&cuda, nullptr, "legacy default stream");
  LATLAB_GPU_ZONE_TRANSIENT(cuda, stream, name);
  LATLAB_GPU_ZONE(gl, ctx, "gl");
  static constexpr latlab::ZoneSite kSite{"site", "record", "control.cpp", 1};
  const latlab::GpuZone zone(gl, ctx, kSite);
  const latlab::GpuZone bare(gl, ctx, "bare");
  LATLAB_GPU_ZONE(untyped, sim, "sim");  // untyped: any pointer
  LATLAB_GPU_ZONE(untyped, stream, "sim");
  latlab::GpuProfiler& as_base = cuda;  // a typed profiler is a GpuProfiler
  as_base.next_frame();
}

#ifdef LATLAB_CF_VULKAN
void record_vulkan(const std::unique_ptr<latlab::VulkanGpuProfiler>& made,
                   latlab::vulkan::Gpu& attached, VkCommandBuffer cmd) {
  LATLAB_GPU_ZONE(made, cmd, "made");
  LATLAB_GPU_ZONE(attached, cmd, "attached");
  LATLAB_GPU_ZONE(attached.profiler(), cmd, "attached");
  LATLAB_GPU_ZONE_TRANSIENT(&attached, cmd, std::string("transient"));
  LATLAB_CPU_ZONE(attached, "cpu");
  const latlab::GpuZone method = attached.zone(cmd, "method");
  static_cast<void>(method);
  LATLAB_GPU_COMMAND_BUFFER(made, cmd, "upload");
}
void record_vulkan_owner(const std::unique_ptr<latlab::vulkan::Gpu>& gpu, VkCommandBuffer cmd) {
  LATLAB_GPU_ZONE(gpu, cmd, "owned");
  LATLAB_CPU_ZONE(gpu, "owned cpu");
}
#endif
