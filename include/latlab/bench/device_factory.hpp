// Opening a LatencyDevice by backend (backend.hpp) and device selector; the
// sim backend's devices are all built here, for every command.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "latlab/bench/backend.hpp"
#include "latlab/core/latency_device.hpp"
#include "latlab/host_time.hpp"
#include "latlab/result.hpp"

namespace latlab {

struct DeviceSelector {
  Backend backend = Backend::vulkan;
  std::string device;       // index ("0") or name substring; empty = default device
  bool validation = false;  // Vulkan: the Khronos validation layer; GL: KHR_debug
  bool present = false;     // Vulkan: enable surface + swapchain extensions (open_present)
};

// Error (with the devices that exist) when the selector matches nothing, or
// (with the reason) when the backend is not built into this binary.
Result<std::unique_ptr<LatencyDevice>> open_latency_device(const DeviceSelector& selector);

// The sim backend's devices by use. --device "", "0" or "load": a scripted
// GPU cost model; "1" or "clock": a 4 ppm drifting clock
// (open_latency_device's sim devices).
Result<std::unique_ptr<LatencyDevice>> open_sim_device(const std::string& device);
// `run`'s sim device, on `time` (the run's real or scaled clock): GPU time
// grows with the workload (sim_latency_desc), so Loaded frames take longer
// than Baseline ones and calibration converges. Error when `device` is
// neither "", "0" nor part of its name.
Result<std::unique_ptr<LatencyDevice>> open_sim_run_device(const std::string& device,
                                                           std::shared_ptr<HostTime> time);
// Device `index` of a sim device list (--device all or "0,1"): clocks that
// differ by index; `latency`: it runs frames (sim_latency_desc), else a clock
// device that also times; `fail_from` > 0: every submit from that frame id
// fails (tests of a device failing mid-run).
std::unique_ptr<LatencyDevice> open_sim_list_device(size_t index, bool latency,
                                                    uint64_t fail_from = 0);
// A clock-only sim device drifting `drift_ppm`, 1 s ahead of the host clock.
std::unique_ptr<LatencyDevice> open_sim_clock_device(double drift_ppm);

// The device of `latlab run` and the clock it lives on.
struct RunDevice {
  std::shared_ptr<HostTime> time;
  std::unique_ptr<LatencyDevice> device;
};
// The sim backend's device runs on the run's own clock, real or scaled by
// `time_scale` (tests: a long schedule in a short wall time); the others on
// the host clock.
Result<RunDevice> open_run_device(const DeviceSelector& selector, int64_t time_scale = 1);

// `latlab clocks`' device: with no --device, the sim backend's drifting
// clock device ("clock").
Result<std::unique_ptr<LatencyDevice>> open_clock_device(const DeviceSelector& selector);

// One device of a several-device list (--device all or "0,1"), by the index
// in selector.device: the sim backend's are open_sim_list_device(index,
// latency, sim_fail_from).
Result<std::unique_ptr<LatencyDevice>> open_listed_device(const DeviceSelector& selector,
                                                          bool latency,
                                                          uint64_t sim_fail_from = 0);

}  // namespace latlab
