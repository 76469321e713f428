// LatencyDevice: the latency port of the backend seam, the one small
// interface between the latency engine and a GPU backend's benchmark rig
// (Vulkan, CUDA, OpenGL, sim). The engine does not know which API is behind
// it. No GPU headers. Header-only (the defaults below are inline), so every
// rig implements it without linking another library, and the timing library
// (latlab_core) knows nothing of it.
//
// Threads: a device is driven from one thread at a time (the consumer thread)
// except sample_calibration(), which the calibrator may call from its own
// thread; implementations make that call safe against the frame calls. The
// engine may move the frame calls to a new thread between blocks; it calls
// prepare_thread() there first.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "latlab/clock_model.hpp"
#include "latlab/query_status.hpp"
#include "latlab/result.hpp"
#include "latlab/core/capability.hpp"
#include "latlab/core/poll_target.hpp"
#include "latlab/core/present_path.hpp"
#include "latlab/core/reference_path.hpp"
#include "latlab/tick_format.hpp"

namespace latlab {

enum class WorkloadForm : uint8_t { compute, fragment };

// The range of FrameWorkload::complexity every backend accepts.
inline constexpr uint32_t kMinComplexity = 1;
inline constexpr uint32_t kMaxComplexity = 4096;

// The GPU work of one frame: `passes` post-process passes over a
// width x height target, each costing more per pixel as complexity grows.
struct FrameWorkload {
  uint32_t passes = 1;      // number of passes (Loaded uses 4)
  uint32_t complexity = 1;  // 1..4096, per-pixel cost multiplier
  uint32_t width = 64;      // target size in pixels
  uint32_t height = 64;
  WorkloadForm form = WorkloadForm::compute;
  bool operator==(const FrameWorkload&) const = default;
};

// Why `work` is out of the range every backend accepts (passes >= 1,
// complexity kMinComplexity..kMaxComplexity, size >= 1x1); nullopt when it is
// in range. Backends add their own limits on top.
inline std::optional<std::string> frame_workload_error(const FrameWorkload& work) {
  if (work.passes >= 1 && work.complexity >= kMinComplexity && work.complexity <= kMaxComplexity &&
      work.width >= 1 && work.height >= 1) {
    return std::nullopt;
  }
  return "FrameWorkload out of range: passes >= 1, complexity " + std::to_string(kMinComplexity) +
         ".." + std::to_string(kMaxComplexity) + ", size >= 1x1 (got passes " +
         std::to_string(work.passes) + ", complexity " + std::to_string(work.complexity) + ", " +
         std::to_string(work.width) + "x" + std::to_string(work.height) + ")";
}

struct DeviceInfo {
  std::string backend;  // "vulkan", "cuda", "opengl", "sim"
  std::string name;     // device name as the driver reports it
  std::string driver;   // driver name/version
  TickFormat ticks;
  bool can_time = false;               // GPU timestamps usable
  std::string calibration_domain;      // host domain pairs are taken against, "" if none
  bool calibration_estimated = false;  // pairs are bracketed estimates
  std::vector<MissingCapability> missing;
  bool operator==(const DeviceInfo&) const = default;
};

// What the device observed for one frame.
struct GpuFrameTiming {
  QueryStatus gpu_status = QueryStatus::missing;  // of the begin/end timestamps
  uint64_t gpu_begin_ticks = 0;                   // raw device ticks, valid when gpu_status == ok
  uint64_t gpu_end_ticks = 0;
  QueryStatus fence_status = QueryStatus::missing;
  int64_t fence_wake_ns = 0;  // host ns right after the CPU saw completion
};

enum class PollStatus : uint8_t {
  complete,  // the frame's work has completed
  pending,   // not yet
  failed,    // the driver could not tell (device lost, bad handle)
};

// The CPU asking whether a frame completed, without blocking
// (vkGetFenceStatus, cudaEventQuery, glClientWaitSync with timeout 0). Made
// by LatencyDevice::open_poller() on the thread that polls (the engine's
// poller thread), used and destroyed there; poll() may run while the
// consumer thread blocks in wait_frame() on the same frame.
class CompletionPoller {
 public:
  virtual ~CompletionPoller() = default;
  CompletionPoller() = default;
  CompletionPoller(const CompletionPoller&) = delete;
  CompletionPoller& operator=(const CompletionPoller&) = delete;
  // One non-blocking look at `target`. Allocation-free.
  virtual PollStatus poll(const PollTarget& target) = 0;
};

class LatencyDevice {
 public:
  virtual ~LatencyDevice() = default;
  virtual const DeviceInfo& info() const = 0;
  // Records frame `frame_id`'s work with a GPU timestamp before the first
  // pass and after the last, and submits it. Does not wait for the GPU.
  virtual Result<void> submit_frame(uint64_t frame_id, const FrameWorkload& work) = 0;
  // Blocks until `frame_id`'s work has completed; returns what was observed.
  virtual Result<GpuFrameTiming> wait_frame(uint64_t frame_id) = 0;
  // One calibration pair now (thread-safe against the frame calls).
  virtual Result<CalibrationPair> sample_calibration() = 0;
  // Called once on each thread that will call submit_frame/wait_frame (or
  // the present and reference paths' calls) before that thread's first
  // measured frame, outside any timed frame: pays what the API charges the
  // first call on a new thread (NVIDIA's first eglMakeCurrent of a context
  // on a thread: about 27 ms). Leaves the thread as it found it; calling it
  // again on a prepared thread is allowed and cheap. An error means frames
  // cannot run on this thread. Default: nothing to prepare.
  virtual Result<void> prepare_thread() { return {}; }
  // A present path showing this device's frames on a display (PresentPath),
  // or why there is none. It refers to the device: destroy it first. Default:
  // this backend has no present path.
  virtual Result<std::unique_ptr<PresentPath>> open_present(const PresentDesc& /*desc*/) {
    return make_error("the " + info().backend +
                      " backend has no present path (present needs --backend vulkan)");
  }
  // The independent minimal path of `--bare` (ReferencePath), or why there
  // is none. It refers to the device: destroy it first. Default: not
  // available on this backend.
  virtual Result<std::unique_ptr<ReferencePath>> open_reference() {
    return make_error("the " + info().backend + " backend has no reference path (not available)");
  }
  // The poll target of `frame_id` (submitted, not yet waited for), on the
  // consumer thread; nullopt when this backend cannot poll. The object it
  // names stays valid until the frame's wait_frame() has returned and the
  // next submit_frame() begins (the engine stops polling before that).
  virtual std::optional<PollTarget> poll_target(uint64_t /*frame_id*/) { return std::nullopt; }
  // A poller for the calling thread (the engine's poller thread), or why
  // there is none. It refers to the device: destroy it first. Default: this
  // backend cannot poll.
  virtual Result<std::unique_ptr<CompletionPoller>> open_poller() {
    return make_error("the " + info().backend + " backend cannot poll a frame's completion");
  }
};

}  // namespace latlab
