// Branch stand-in for the device factory: only the sim backend. The lead
// replaces this file with the full factory (Vulkan, CUDA) at merge.
#include "latlab/device_factory.hpp"

#include "latlab/sim_device.hpp"

namespace latlab {

Result<std::unique_ptr<LatencyDevice>> open_latency_device(const DeviceSelector& selector) {
  if (selector.backend == "sim") {
    if (!selector.device.empty() && selector.device != "0" && selector.device.find("sim") == std::string::npos) {
      return make_error("no sim device matches '" + selector.device + "'; the sim backend has one device: 0 (\"" +
                        SimDeviceDesc{}.name + "\")");
    }
    return std::unique_ptr<LatencyDevice>(SimLatencyDevice::create(SimDeviceDesc{}));
  }
  if (selector.backend == "vulkan" || selector.backend == "cuda" || selector.backend == "opengl") {
    return make_error("the " + selector.backend + " backend is not built into this binary; use --backend sim");
  }
  return make_error("unknown backend '" + selector.backend + "' (known: vulkan, cuda, sim)");
}

}  // namespace latlab
