// open_latency_device: backend name -> LatencyDevice. This branch builds only
// the clock-only "sim" device; the GPU backends are added where they exist.
#include "latlab/device_factory.hpp"

#include "latlab/sim_clock_device.hpp"

namespace latlab {

Result<std::unique_ptr<LatencyDevice>> open_latency_device(const DeviceSelector& selector) {
  if (selector.backend == "sim") {
    if (!selector.device.empty() && selector.device != "0" &&
        selector.device.find("sim") == std::string::npos) {
      return make_error("no sim device matches \"" + selector.device + "\"; devices: 0: sim clock");
    }
    // Drifts like the H200 measured against the host (~4 ppm), 1-2 us deviations.
    SimClockDesc clock;
    clock.drift_ppm = 4.0;
    clock.offset_ns = 1'000'000'000;
    return make_sim_clock_device(clock);
  }
  return make_error("backend \"" + selector.backend +
                    "\" is not built into this latlab (built: sim)");
}

}  // namespace latlab
