// VulkanTimestampWriter: the GPU profiler's timestamp writer on a VkQueryPool.
//
//   auto writer = VulkanTimestampWriter::create(ctx).value();
//   auto prof = GpuProfiler::create(writer, {.name = "graphics"}).value();
//   LATLAB_GPU_ZONE(prof, cmd, "shadows");  // cmd: a VkCommandBuffer
//
// Zone begin: vkCmdWriteTimestamp(TOP_OF_PIPE), zone end: BOTTOM_OF_PIPE, so a
// zone spans from when its first command may start to when everything
// recorded before its end has finished (children lie inside their parent;
// siblings may overlap on the device). Record zones outside or inside render
// passes alike (timestamps are allowed in both; no reset is recorded).
// Results are read with vkGetQueryPoolResults(64-bit, WITH_AVAILABILITY), no
// WAIT flag: the profiler never asks the driver to wait. (lavapipe in Mesa
// 22.3 waits for the device to go idle inside that call anyway:
// VulkanCapabilities::query_reads_wait_idle.) Queries are reset on the host
// (vkResetQueryPool) when the profiler recycles them, so the device must have
// host query reset (core in Vulkan 1.2; lavapipe and NVIDIA have it).
//
// Ownership: the writer owns its VkQueryPool and refers to the context, which
// must outlive it; destroy it (i.e. the profiler holding it) only after the
// device finished every command buffer that wrote into it.
// Threads: write_timestamp from any recording thread (each with its own
// command buffer, as Vulkan requires); reads and resets from the profiler's
// collector.
#pragma once

#include <atomic>
#include <memory>

#include "latlab/profiler.hpp"
#include "latlab/result.hpp"
#include "latlab/vulkan.hpp"

namespace latlab {

struct VulkanTimestampWriterDesc {
  // Queries in the pool (>= 2): enough for the profiler, 2 x
  // max_zones_per_frame x (frames_in_flight + 1). Default 8192 (the
  // profiler's defaults: 1024 zones a frame, 3 frames in flight).
  uint32_t query_count = 8192;
};

class VulkanTimestampWriter final : public GpuTimestampWriter {
 public:
  // Errors (with what to do): the context's queue cannot write timestamps,
  // the device has no host query reset, the query pool cannot be created.
  static Result<std::shared_ptr<VulkanTimestampWriter>> create(const VulkanContext& ctx,
                                                               VulkanTimestampWriterDesc desc = {});
  ~VulkanTimestampWriter() override;

  uint32_t query_count() const override { return count_; }
  TickFormat tick_format() const override { return ticks_; }
  // `stream` is a VkCommandBuffer in the recording state.
  void write_timestamp(GpuCommandStream stream, uint32_t query, ZoneEdge edge) override;
  void read_results(uint32_t first, std::span<TimestampReadback> out) override;
  void reset_queries(uint32_t first, uint32_t count) override;

  VkQueryPool handle() const { return pool_; }
  // vkGetQueryPoolResults calls that failed (device lost, out of memory):
  // their queries read as unavailable, so their frames never complete.
  uint64_t read_errors() const { return read_errors_.load(std::memory_order_relaxed); }

 private:
  VulkanTimestampWriter(const VulkanContext& ctx, uint32_t count);

  VkDevice device_ = VK_NULL_HANDLE;
  VkQueryPool pool_ = VK_NULL_HANDLE;
  PFN_vkResetQueryPoolEXT reset_ = nullptr;
  uint32_t count_ = 0;
  TickFormat ticks_;
  std::atomic<uint64_t> read_errors_{0};
};

}  // namespace latlab
