// open_latency_device: one place that opens every backend's latency device,
// and builds every sim device, so the engine and the commands stay
// backend-agnostic.
#include "latlab/bench/device_factory.hpp"

#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "latlab/bench/sim.hpp"
#include "latlab/host_time.hpp"
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

// The simulated devices, by index and name. Each command picks the one that
// suits it when none is named.
constexpr const char* kSimDevices =
    "0: load (scripted GPU cost model), 1: clock (4 ppm drifting clock)";

Result<std::unique_ptr<LatencyDevice>> not_built(Backend backend) {
  return make_error(std::string(backend_info(backend).not_built));
}

}  // namespace

Result<std::unique_ptr<LatencyDevice>> open_sim_device(const std::string& device) {
  if (device.empty() || device == "0" || device == "load") {
    SimDesc desc = sim_load_desc();
    desc.cost->noise_fraction = 0.01;  // seeded: repeatable, but with a spread like a real GPU
    return std::unique_ptr<LatencyDevice>(std::make_unique<SimDevice>(std::move(desc)));
  }
  if (device == "1" || device == "clock") {
    // 4 ppm: 6-15 times the 0.26-0.62 ppm measured on the H200
    // (docs/BENCHMARKS.md), so the drift correction shows in a short run;
    // 1-2 us deviations.
    return open_sim_clock_device(4.0);
  }
  return make_error("no sim device matches '" + device + "'; devices: " + kSimDevices);
}

std::unique_ptr<LatencyDevice> open_sim_clock_device(double drift_ppm) {
  SimClockDesc clock;
  clock.drift_ppm = drift_ppm;
  clock.offset_ns = 1'000'000'000;
  return std::make_unique<SimDevice>(sim_clock_desc(clock));
}

Result<std::unique_ptr<LatencyDevice>> open_sim_run_device(const std::string& device,
                                                           std::shared_ptr<HostTime> time) {
  SimDesc desc = sim_latency_desc();
  if (!device.empty() && device != "0" && desc.name.find(device) == std::string::npos) {
    return make_error("no sim device matches '" + device + "'; devices: 0: " + desc.name);
  }
  return std::unique_ptr<LatencyDevice>(
      std::make_unique<SimDevice>(std::move(desc), std::move(time)));
}

std::unique_ptr<LatencyDevice> open_sim_list_device(size_t index, bool latency,
                                                    uint64_t fail_from) {
  // Clocks that differ: 4 ppm slow and -3 ppm fast, starting far apart.
  constexpr double kDrift[] = {4.0, -3.0, 1.5, -0.5};
  SimDesc d = latency ? sim_latency_desc() : sim_clock_desc();
  d.clock.drift_ppm = kDrift[index % 4];
  d.clock.start_ticks = 1'000'000'000'000 * (index + 1);
  char name[64];
  std::snprintf(name, sizeof name, "latlab simulated device %zu (%+.1f ppm)", index,
                d.clock.drift_ppm);
  d.name = name;
  d.runs_frames = true;
  d.can_time = true;
  if (fail_from > 0) {
    const SimFrameScript base = d.frame;
    d.script = [base, fail_from](uint64_t id) {
      SimFrameScript f = base;
      f.fail_submit = id >= fail_from;
      return f;
    };
  }
  return std::make_unique<SimDevice>(std::move(d), std::make_shared<RealHostTime>());
}

Result<std::unique_ptr<LatencyDevice>> open_latency_device(const DeviceSelector& selector) {
  if (!backend_info(selector.backend).built) return not_built(selector.backend);
  switch (selector.backend) {
    case Backend::vulkan:
#if LATLAB_HAVE_VULKAN
    {
      VulkanContextDesc desc;
      desc.device = selector.device;
      desc.validation = selector.validation;
      desc.present = selector.present;
      return create_vulkan_latency_device(desc);
    }
#else
      break;
#endif
    case Backend::cuda:
#if LATLAB_HAVE_CUDA
      return create_cuda_latency_device(selector.device);
#else
      break;
#endif
    case Backend::gl:
#if LATLAB_HAVE_OPENGL
      // --validation turns KHR_debug on (the GL counterpart of the layer).
      return create_gl_latency_device({.context = {.device = selector.device,
                                                   .api = GlApiKind::automatic,
                                                   .debug = selector.validation},
                                       .frames_in_flight = 4});
#else
      break;
#endif
    case Backend::sim:
      return open_sim_device(selector.device);
  }
  return not_built(selector.backend);
}

Result<RunDevice> open_run_device(const DeviceSelector& selector, int64_t time_scale) {
  RunDevice out;
  if (selector.backend != Backend::sim) {
    out.time = std::make_shared<RealHostTime>();
    Result<std::unique_ptr<LatencyDevice>> opened = open_latency_device(selector);
    if (!opened) return opened.error();
    out.device = std::move(opened.value());
    return out;
  }
  if (time_scale != 1) {
    out.time = std::make_shared<ScaledHostTime>(time_scale);
  } else {
    out.time = std::make_shared<RealHostTime>();
  }
  Result<std::unique_ptr<LatencyDevice>> opened = open_sim_run_device(selector.device, out.time);
  if (!opened) return opened.error();
  out.device = std::move(opened.value());
  return out;
}

Result<std::unique_ptr<LatencyDevice>> open_clock_device(const DeviceSelector& selector) {
  if (selector.backend != Backend::sim || !selector.device.empty())
    return open_latency_device(selector);
  DeviceSelector clock = selector;
  clock.device = "clock";
  return open_latency_device(clock);
}

Result<std::unique_ptr<LatencyDevice>> open_listed_device(const DeviceSelector& selector,
                                                          bool latency, uint64_t sim_fail_from) {
  if (selector.backend != Backend::sim) return open_latency_device(selector);
  return open_sim_list_device(std::stoul(selector.device), latency, sim_fail_from);
}

}  // namespace latlab
