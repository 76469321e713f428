// Branch-local open_latency_device: only the "sim" backend (SimLoadDevice).
// The lead's merged factory adds vulkan/cuda; keep "sim" -> SimLoadDevice
// (or the engine's sim device) there so `calibrate-load --backend sim` works.
#include "latlab/device_factory.hpp"

#include <memory>
#include <string>

#include "latlab/sim_cost_model.hpp"

namespace latlab {

Result<std::unique_ptr<LatencyDevice>> open_latency_device(const DeviceSelector& selector) {
  if (selector.backend != "sim") {
    return make_error("backend " + selector.backend + " is not built (this build has: sim)");
  }
  SimLoadDeviceDesc desc;
  desc.cost.noise_fraction =
      0.01;  // seeded: runs are repeatable but show a spread, like a real GPU
  const std::string& d = selector.device;
  if (!d.empty() && d != "0" && desc.name.find(d) == std::string::npos) {
    return make_error("no sim device matches '" + d + "'; devices: 0: " + desc.name);
  }
  return std::unique_ptr<LatencyDevice>(std::make_unique<SimLoadDevice>(desc));
}

}  // namespace latlab
