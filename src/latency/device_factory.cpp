// open_latency_device: one place that knows every backend, so the engine and
// the commands stay backend-agnostic.
#include "latlab/bench/device_factory.hpp"

#include <memory>
#include <string>
#include <utility>

#include "latlab/bench/sim.hpp"
#if LATLAB_HAVE_VULKAN
#include "latlab/bench/vulkan_rig.hpp"
#include "latlab/vulkan.hpp"
#endif
#if LATLAB_HAVE_CUDA
#include "latlab/bench/cuda_rig.hpp"
#include "latlab/cuda.hpp"
#endif
#if LATLAB_HAVE_OPENGL
#include "latlab/bench/gl_rig.hpp"
#include "latlab/opengl.hpp"
#endif

namespace latlab {
namespace {

constexpr const char* kBackends =
#if LATLAB_HAVE_VULKAN
    "vulkan, "
#endif
#if LATLAB_HAVE_CUDA
    "cuda, "
#endif
#if LATLAB_HAVE_OPENGL
    "gl, "
#endif
    "sim";

// The simulated devices, by index and name. Each command picks the one that
// suits it when none is named (sim_default_device).
constexpr const char* kSimDevices =
    "0: load (scripted GPU cost model), 1: clock (4 ppm drifting clock)";

Result<std::unique_ptr<LatencyDevice>> open_sim(const std::string& device) {
  if (device.empty() || device == "0" || device == "load") {
    SimDesc desc = sim_load_desc();
    desc.cost->noise_fraction = 0.01;  // seeded: repeatable, but with a spread like a real GPU
    return std::unique_ptr<LatencyDevice>(std::make_unique<SimDevice>(std::move(desc)));
  }
  if (device == "1" || device == "clock") {
    // 4 ppm: 6-15 times the 0.26-0.62 ppm measured on the H200
    // (docs/BENCHMARKS.md), so the drift correction shows in a short run;
    // 1-2 us deviations.
    SimClockDesc clock;
    clock.drift_ppm = 4.0;
    clock.offset_ns = 1'000'000'000;
    return std::unique_ptr<LatencyDevice>(std::make_unique<SimDevice>(sim_clock_desc(clock)));
  }
  return make_error("no sim device matches '" + device + "'; devices: " + kSimDevices);
}

}  // namespace

Result<std::unique_ptr<LatencyDevice>> open_latency_device(const DeviceSelector& selector) {
  if (selector.backend == "vulkan") {
#if LATLAB_HAVE_VULKAN
    VulkanContextDesc desc;
    desc.device = selector.device;
    desc.validation = selector.validation;
    desc.present = selector.present;
    return create_vulkan_latency_device(desc);
#else
    return make_error("backend vulkan is not built (configure with -DLATLAB_VULKAN=ON)");
#endif
  }
  if (selector.backend == "cuda") {
#if LATLAB_HAVE_CUDA
    return create_cuda_latency_device(selector.device);
#else
    return make_error(
        "backend cuda is not built (configure with nvcc present or -DLATLAB_CUDA=ON)");
#endif
  }
  if (selector.backend == "gl" || selector.backend == "opengl") {
#if LATLAB_HAVE_OPENGL
    // --validation turns KHR_debug on (the GL counterpart of the layer).
    return create_gl_latency_device({.context = {.device = selector.device,
                                                 .api = GlApiKind::automatic,
                                                 .debug = selector.validation},
                                     .frames_in_flight = 4});
#else
    return make_error(
        "backend gl is not built (configure with libegl-dev and libopengl-dev present)");
#endif
  }
  if (selector.backend == "sim") return open_sim(selector.device);
  return make_error("unknown backend '" + selector.backend + "'; this build has: " + kBackends);
}

}  // namespace latlab
