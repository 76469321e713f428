#include "bench/turn_warmup.hpp"

namespace latlab {

TurnWarmup run_turn_warmup(LatencyDevice& device, HostTime& time, const FrameWorkload& work,
                           uint64_t first_id, int64_t duration_ns,
                           const std::atomic<bool>* interrupt) {
  TurnWarmup out;
  if (duration_ns <= 0) return out;
  // This thread's set-up for the device outside the warm-up's time (it is
  // the caller's thread, the same for every block: paid once).
  if (Result<void> p = device.prepare_thread(); !p) {
    out.error = "turn warm-up: preparing the thread for the device failed: " + p.error().message;
    return out;
  }
  const int64_t start = time.now_ns();
  while (out.error.empty()) {
    if (interrupt != nullptr && interrupt->load(std::memory_order_relaxed)) {
      out.interrupted = true;
      break;
    }
    const uint64_t id = first_id + out.frames;
    if (Result<void> s = device.submit_frame(id, work); !s) {
      out.error =
          "turn warm-up: submitting frame " + std::to_string(id) + " failed: " + s.error().message;
      break;
    }
    ++out.frames;  // the id is used once submitted, whether or not the wait succeeds
    if (Result<GpuFrameTiming> w = device.wait_frame(id); !w) {
      out.error =
          "turn warm-up: waiting for frame " + std::to_string(id) + " failed: " + w.error().message;
      break;
    }
    if (time.now_ns() - start >= duration_ns) break;
  }
  out.wall_ns = time.now_ns() - start;
  return out;
}

}  // namespace latlab
