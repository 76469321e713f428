// Test scaffolding: a device that sets an interrupt flag when its Nth frame
// is submitted (1-based), as a Ctrl-C arriving while that frame runs, and
// otherwise forwards to the device it wraps. Counts the frames submitted, so
// a test sees how far the work went on after the interrupt.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "latlab/core/latency_device.hpp"

namespace latlab {

class InterruptAtSubmit final : public LatencyDevice {
 public:
  // `inner` and `flag` must outlive this device.
  InterruptAtSubmit(LatencyDevice& inner, uint64_t at, std::atomic<bool>& flag)
      : inner_(inner), at_(at), flag_(flag) {}

  const DeviceInfo& info() const override { return inner_.info(); }
  Result<void> submit_frame(uint64_t frame_id, const FrameWorkload& work) override {
    if (submitted_.fetch_add(1) + 1 == at_) flag_.store(true);
    return inner_.submit_frame(frame_id, work);
  }
  Result<GpuFrameTiming> wait_frame(uint64_t frame_id) override {
    return inner_.wait_frame(frame_id);
  }
  Result<CalibrationPair> sample_calibration() override { return inner_.sample_calibration(); }
  Result<void> prepare_thread() override { return inner_.prepare_thread(); }
  std::optional<PollTarget> poll_target(uint64_t frame_id) override {
    return inner_.poll_target(frame_id);
  }
  Result<std::unique_ptr<CompletionPoller>> open_poller() override { return inner_.open_poller(); }

  uint64_t submitted() const { return submitted_.load(); }

 private:
  LatencyDevice& inner_;
  uint64_t at_;
  std::atomic<bool>& flag_;
  std::atomic<uint64_t> submitted_{0};
};

}  // namespace latlab
