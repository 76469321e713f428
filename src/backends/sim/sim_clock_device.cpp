#include "latlab/sim_clock_device.hpp"

#include <cstdio>
#include <string>

#include "latlab/host_clock.hpp"

namespace latlab {
namespace {

class SimClockDevice final : public LatencyDevice {
 public:
  explicit SimClockDevice(SimClockDesc desc) : clock_(std::move(desc)) {
    char name[96];
    std::snprintf(name, sizeof name, "sim clock (drift %+.3f ppm)", clock_.desc().drift_ppm);
    info_.backend = "sim";
    info_.name = name;
    info_.driver = "latlab sim";
    info_.ticks = clock_.ticks();
    info_.can_time = false;
    info_.calibration_domain = kHostClockName;
    info_.calibration_estimated = clock_.desc().estimated;
    info_.missing.push_back({"frames", "the clock-only sim device runs no frames"});
  }

  const DeviceInfo& info() const override { return info_; }
  Result<void> submit_frame(uint64_t, const FrameWorkload&) override { return no_frames(); }
  Result<GpuFrameTiming> wait_frame(uint64_t) override { return no_frames(); }
  Result<CalibrationPair> sample_calibration() override { return clock_.sample(); }

 private:
  static Error no_frames() { return make_error("the clock-only sim device runs no frames"); }

  SimClock clock_;
  DeviceInfo info_;
};

}  // namespace

std::unique_ptr<LatencyDevice> make_sim_clock_device(SimClockDesc clock) {
  return std::make_unique<SimClockDevice>(std::move(clock));
}

}  // namespace latlab
