// open_latency_device: one place that knows every backend, so the engine and
// the commands stay backend-agnostic.
#include "latlab/device_factory.hpp"

#include <memory>
#include <string>

#include "latlab/sim_cost_model.hpp"
#include "latlab/vulkan.hpp"
#if LATLAB_HAVE_CUDA
#include "latlab/cuda.hpp"
#endif

namespace latlab {
namespace {

constexpr const char* kBackends =
#if LATLAB_HAVE_CUDA
    "vulkan, cuda, sim";
#else
    "vulkan, sim";
#endif

Result<std::unique_ptr<LatencyDevice>> open_sim(const DeviceSelector& selector) {
  SimLoadDeviceDesc desc;
  desc.cost.noise_fraction = 0.01;  // seeded: repeatable, but with a spread like a real GPU
  const std::string& d = selector.device;
  if (!d.empty() && d != "0" && desc.name.find(d) == std::string::npos) {
    return make_error("no sim device matches '" + d + "'; devices: 0: " + desc.name);
  }
  return std::unique_ptr<LatencyDevice>(std::make_unique<SimLoadDevice>(desc));
}

}  // namespace

Result<std::unique_ptr<LatencyDevice>> open_latency_device(const DeviceSelector& selector) {
  if (selector.backend == "vulkan") {
    VulkanContextDesc desc;
    desc.device = selector.device;
    desc.validation = selector.validation;
    return create_vulkan_latency_device(desc);
  }
  if (selector.backend == "cuda") {
#if LATLAB_HAVE_CUDA
    return create_cuda_latency_device(selector.device);
#else
    return make_error("backend cuda is not built (configure with nvcc present or -DLATLAB_CUDA=ON)");
#endif
  }
  if (selector.backend == "sim") return open_sim(selector);
  return make_error("unknown backend '" + selector.backend + "'; this build has: " + kBackends);
}

}  // namespace latlab
