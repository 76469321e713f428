// A clock-only simulated LatencyDevice: calibration pairs from a SimClock,
// no frames. It lets `latlab clocks --backend sim` and tests run the clock
// study through the device interface without a GPU.
//
// Thread safety: sample_calibration() may be called from any thread (the
// SimClock locks); submit_frame/wait_frame only return errors.
#pragma once

#include <memory>

#include "latlab/latency_device.hpp"
#include "latlab/sim_clock.hpp"

namespace latlab {

// The device owns its SimClock (built from `clock`). info(): backend "sim",
// calibration domain CLOCK_MONOTONIC, can_time false (it runs no frames).
std::unique_ptr<LatencyDevice> make_sim_clock_device(SimClockDesc clock = {});

}  // namespace latlab
