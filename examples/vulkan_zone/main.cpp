// A Vulkan compute loop timed with LATLAB_GPU_ZONE: a few frames of three
// dispatches on the default device, two frames in flight, then each zone's
// device time in ms. Exit 0 on success, 1 on a Vulkan error, 3 when there is
// no Vulkan device.
#include <cstdio>

#include "latlab/bench/vulkan_rig.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_vulkan.hpp"
#include "latlab/version.hpp"
#include "latlab/vulkan.hpp"

namespace {

int fail(const char* what, const latlab::Error& e) {
  std::fprintf(stderr, "vulkan_zone: %s: %s\n", what, e.message.c_str());
  return 1;
}

}  // namespace

int main() {
  using namespace latlab;
  constexpr uint32_t kFramesInFlight = 2;
  constexpr int kFrames = 8;

  auto devices = enumerate_vulkan_devices();
  if (!devices) return fail("enumerate devices", devices.error());
  if (devices->empty()) {
    std::fprintf(stderr, "vulkan_zone: no Vulkan device\n");
    return 3;
  }
  auto ctx = VulkanContext::create();  // the first discrete GPU, else device 0
  if (!ctx) return fail("create context", ctx.error());
  auto work = VulkanComputeWorkload::create(**ctx, {.width = 64, .height = 64});
  if (!work) return fail("create workload", work.error());

  // The profiler on its own timestamp slots (2 per zone for each frame in
  // flight plus the one being recorded).
  auto prof = create_vulkan_profiler(
      **ctx, {.name = "compute", .max_zones_per_frame = 8, .frames_in_flight = kFramesInFlight});
  if (!prof) return fail("create profiler", prof.error());
  // Made last, so destroyed first: its destructor waits for frames still in
  // flight before the profiler and its query pool go away.
  auto ring = VulkanFrameRing::create(**ctx, kFramesInFlight);
  if (!ring) return fail("create frame ring", ring.error());

  for (int frame = 0; frame < kFrames; ++frame) {
    const uint32_t slot = static_cast<uint32_t>(frame) % kFramesInFlight;
    if (auto done = (*ring)->wait(slot); !done) return fail("wait", done.error());
    auto cmd = (*ring)->begin(slot);
    if (!cmd) return fail("begin frame", cmd.error());
    {
      LATLAB_GPU_ZONE(*prof, *cmd, "frame");  // ends at the closing brace
      {
        LATLAB_GPU_ZONE(*prof, *cmd, "light");
        (*work)->record_pass(*cmd, 4, 0);
      }
      {
        LATLAB_GPU_ZONE(*prof, *cmd, "heavy");  // 4x the work of "light"
        (*work)->record_pass(*cmd, 16, 1);
        (*work)->record_pass(*cmd, 16, 2);
      }
    }
    if (auto sent = (*ring)->submit(slot); !sent) return fail("submit", sent.error());
    (*prof)->next_frame();  // collects finished frames; never waits for the GPU
  }
  if (auto idle = (*ring)->wait_all(); !idle) return fail("wait", idle.error());
  (*prof)->collect();  // the last frames, now that the device is done

  std::printf("latlab %s on %s, %d frames\n", kVersion, (*ctx)->device_name().c_str(), kFrames);
  for (const ZoneStat& s : (*prof)->stats()) {
    std::printf("  %-6s avg %8.3f ms  min %8.3f  max %8.3f  (%u frames)\n", s.name.c_str(),
                s.avg_ms, s.min_ms, s.max_ms, s.frames);
  }
  return (*prof)->counters().zones_ok > 0 ? 0 : 1;
}
