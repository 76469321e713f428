// Deprecated: the old spelling of the sim device, kept only for
// apps/latlab/run.cpp (being split elsewhere) until it opens SimDevice
// directly: `device = std::make_unique<SimDevice>(sim_latency_desc(), time);`.
// Delete this header with its last include. New code includes latlab/sim.hpp.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "latlab/sim.hpp"

namespace latlab {

// What run.cpp sets of the old SimLatencyDevice's desc.
struct SimDeviceDesc {
  std::string name = SimDesc{}.name;
  double gpu_ns_per_work_unit = 0.0;  // + rate * width * height * passes * complexity ns
};

struct SimLatencyDevice {
  static std::unique_ptr<SimDevice> create(const SimDeviceDesc& old,
                                           std::shared_ptr<HostTime> time) {
    SimDesc d = sim_latency_desc();
    d.name = old.name;
    if (old.gpu_ns_per_work_unit == 0.0) {
      d.cost.reset();
    } else {
      d.cost->ns_per_unit = old.gpu_ns_per_work_unit;
    }
    return std::make_unique<SimDevice>(std::move(d), std::move(time));
  }
};

}  // namespace latlab
