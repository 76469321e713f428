// PresentPath: the optional present port of the backend seam. A backend that
// can show frames on a display (Vulkan through an X11 window) implements it;
// the latency engine calls present() right after submit_frame() and reads the
// screen observers' times after the run. Part of the core: no GPU, X11 or
// latency-engine headers.
//
// Clock: every time is host-clock ns (latlab/host_clock.hpp).
//
// Screen observers are independent ways to see when a presented frame reached
// the screen (a display-timing extension, a vendor report, the X server's
// framebuffer). They are listed side by side, each with what it observes and
// its known error; one that cannot run is listed with why. None of them is a
// photodiode.
//
// Threads: present() from the thread that drives the LatencyDevice; the
// observers run on their own threads between start_observers() and
// stop_observers(); screen_ns() and info() after stop_observers().
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "latlab/result.hpp"

namespace latlab {

// At most this many screen observers per present path (FrameRecord budget).
inline constexpr size_t kMaxScreenObservers = 4;

struct PresentDesc {
  uint32_t width = 256;  // window and swapchain size in pixels (>= 64x16). Default 256x128.
  uint32_t height = 128;
  // Test knob: the frame's copy into the swapchain image waits on the GPU
  // until this long after vkQueuePresentKHR was called, so the image reaches
  // the screen that much later. 0 (default): no hold.
  int64_t hold_ns = 0;
  // Framebuffer observer: time between two reads of the pattern. Default 500 us.
  int64_t poll_period_ns = 500'000;
  // X display to open; empty (default): $DISPLAY.
  std::string display;
};

// One screen observer: what it is and, after stop_observers(), what it cost.
struct ScreenObserverInfo {
  std::string name;      // e.g. "x11_framebuffer", "vk_google_display_timing"
  std::string observes;  // what its time means
  std::string error;     // its known error, in words
  bool available = false;
  std::string reason;  // why it is unavailable; "" when available
  // Polled observers (0 otherwise): the polling period, and over the run:
  // polls, reads that held no complete pattern (torn or foreign), frames
  // seen, the observer thread's CPU time and wall time, read round trips.
  int64_t poll_period_ns = 0;
  // Per frame, how much earlier the event may have happened than the time
  // given (polled observers: the reply that saw it - the previous request):
  // the median and the largest over the run, the stated error. 0: unknown.
  int64_t error_p50_ns = 0;
  int64_t error_bound_ns = 0;
  uint64_t polls = 0;
  uint64_t unreadable_polls = 0;
  uint64_t frames_seen = 0;
  int64_t cpu_ns = 0;
  int64_t wall_ns = 0;
  int64_t read_p50_ns = 0;  // one read of the pattern region (request to reply)
  int64_t read_p99_ns = 0;
  bool operator==(const ScreenObserverInfo&) const = default;
};

struct PresentInfo {
  std::string api;                         // "vulkan"
  std::string surface;                     // e.g. "VK_KHR_xcb_surface, window 256x128 on :99"
  std::string present_mode;                // the mode used: "immediate", "mailbox", "fifo"
  std::vector<std::string> modes_offered;  // as the surface lists them
  uint32_t swapchain_images = 0;
  std::string image_content;  // what a presented image holds
  int64_t hold_ns = 0;        // PresentDesc::hold_ns
  // present_complete: vkWaitForPresentKHR per frame; unavailable with why.
  bool present_wait = false;
  std::string present_wait_reason;
  std::vector<ScreenObserverInfo> observers;  // index = observer index of screen_ns()
  bool operator==(const PresentInfo&) const = default;
};

// Host times of one present call.
struct PresentTimes {
  int64_t present_start_ns = 0;                // right before the present call
  int64_t present_end_ns = 0;                  // right after it returned
  std::optional<int64_t> present_complete_ns;  // present wait returned (where it exists)
};

class PresentPath {
 public:
  virtual ~PresentPath() = default;
  virtual PresentInfo info() const = 0;
  // Copies frame `frame_id`'s result into a swapchain image, after that
  // frame's work (submit_frame must have been called for it), and presents
  // it. At most one frame in flight: waits for the previous frame's copy
  // first. Error when the driver fails; the engine records the frame's
  // present markers as missing and goes on.
  virtual Result<PresentTimes> present(uint64_t frame_id) = 0;
  // The observers watch from start to stop; stop gives late frames a moment
  // to appear, joins the threads and fills info()'s costs.
  virtual void start_observers() = 0;
  virtual void stop_observers() = 0;
  // When observer `observer` first saw frame `frame_id`; nullopt when it did not.
  virtual std::optional<int64_t> screen_ns(size_t observer, uint64_t frame_id) const = 0;
};

}  // namespace latlab
