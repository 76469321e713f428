// probe_present_in_child: tries the present path in a child process, so a
// driver that crashes while making a surface or a swapchain (NVIDIA's X11
// WSI against an X server it does not expect did) takes down the child, not
// the run.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "latlab/bench/device_factory.hpp"
#include "latlab/bench/run_engine.hpp"
#include "latlab/core/latency_device.hpp"
#include "latlab/core/present_path.hpp"
#include "latlab/result.hpp"

namespace latlab {

// Forks; the child opens `selector`'s device with present on, opens the
// present path with `desc` and presents one minimal frame, then exits
// without running destructors. Ok when it did all that; otherwise an Error
// saying why: the child's own error, or that it was killed by a signal
// (with the step it had reached), or that it did not finish in `timeout_ns`
// (then it is killed). Without DISPLAY (and no desc.display) the Error comes
// back without forking.
//
// Call before this process starts threads or uses Vulkan: the child of a
// fork has only the calling thread.
Result<void> probe_present_in_child(const DeviceSelector& selector, const PresentDesc& desc,
                                    int64_t timeout_ns = 20'000'000'000);

// `latlab run --present` before the device is opened (it forks): the probe
// when asked, or why there is no present path (a backend without one).
PresentSetup probe_run_present(bool asked, const DeviceSelector& selector, const PresentDesc& desc);

// After the device is opened: its present path unless the probe failed;
// says on `info`, one line each, what it opened (or why not).
void open_run_present(LatencyDevice& device, const PresentDesc& desc, PresentSetup& setup,
                      const std::function<void(const std::string&)>& info);

}  // namespace latlab
