// When a Wayland compositor showed each frame of a program's surface
// (wp_presentation, presentation-time version 1; docs/capture.md, "Present
// completion"), for a frame source inside the program: per wl_display, the
// source binds wp_presentation on an event queue of its own, and asks for
// the feedback of a surface's next commit just before the program's present
// makes that commit. The compositor answers `presented` (when the frame was
// shown, the output's refresh period, its vblank counter, how the time was
// taken) or `discarded` (replaced before it was shown).
//
// The program's Wayland state is left alone: latlab's proxies are on its own
// queue (made through a wrapper of the program's wl_display), so the
// program's queues, listeners and dispatching never see them; latlab never
// dispatches a queue of the program's. Reading the socket (poll, drain)
// queues what it reads for the program on the program's queues, as the
// program's own reads and the driver's do (libwayland's
// prepare_read/read_events protocol, which lets several threads read).
//
// Every call uses the program's wl_display, so each must come while the
// display is sure to be connected: inside a call of the program's that
// requires it (a present, a swapchain or surface call), or from a thread
// that stops before such objects go (the layer's collector polls only
// while a swapchain on the display exists). Threads: every method from any
// thread (one lock per display).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "capture/capture_record.hpp"
#include "capture/wayland_client.hpp"

namespace latlab::capture {

// What the compositor said of one requested frame.
struct DisplayOutcome {
  uint64_t owner = 0;  // as given to request()
  uint64_t frame = 0;
  int64_t displayed_ns = kNoTime;  // host clock; kNoTime unless `why` is none
  int64_t refresh_ns = 0;          // the output's refresh period (0: the compositor gave none)
  uint64_t seq = 0;                // the output's vblank counter (0: none)
  uint32_t flags = 0;              // kDisplay* (capture_record.hpp)
  NoComplete why = NoComplete::none;  // discarded, or retired (no answer before drain's end)
};

// Puts `o` in the frame's record: present_complete (or why not) and the
// compositor's report of the display.
void apply_outcome(const DisplayOutcome& o, FrameRecord& f);

class PresentationFeedback {
 public:
  // Binds wp_presentation on `display` and learns its clock: two round trips
  // to the compositor on latlab's queue. nullptr with `why` when the
  // compositor offers no wp_presentation or its clock cannot be used.
  static std::unique_ptr<PresentationFeedback> create(const wl::Client& c, wl::Display* display,
                                                      std::string& why);
  // Destroys latlab's proxies and queue (the display must be connected).
  ~PresentationFeedback();
  PresentationFeedback(const PresentationFeedback&) = delete;
  PresentationFeedback& operator=(const PresentationFeedback&) = delete;

  // Asks for the outcome of `surface`'s next commit, reported as (owner,
  // frame). Never blocks. false: not asked (kMaxOutstanding are awaited).
  bool request(wl::Proxy* surface, uint64_t owner, uint64_t frame);
  // Appends the outcomes that have arrived: dispatches what others (the
  // driver, the program) already read for latlab's queue, and reads the
  // socket itself (if it holds data now) only when a request has waited
  // longer than kReadAfterNs: most presents make no system call. Never
  // waits for the compositor.
  void poll(std::vector<DisplayOutcome>& out);
  // Waits up to `timeout_ns` for the outcomes `owner` still awaits, then
  // gives up on the rest (NoComplete::retired). Appends every outcome seen.
  void drain(uint64_t owner, int64_t timeout_ns, std::vector<DisplayOutcome>& out);
  // Drops `owner`'s outstanding requests without outcomes (it is gone).
  void forget(uint64_t owner);
  // The program disconnects the display (called just before): latlab's
  // proxies and queue go now, and every later call does nothing (request
  // returns false). Outcomes not yet taken are lost.
  void close();

  uint32_t clock_id() const { return clock_id_; }

  static constexpr size_t kMaxOutstanding = 64;
  static constexpr int64_t kReadAfterNs = 100'000'000;

 private:
  struct Outstanding {
    wl::Proxy* proxy = nullptr;
    uint64_t owner = 0;
    uint64_t frame = 0;
    int64_t asked_ns = 0;  // host clock
  };
  PresentationFeedback(const wl::Client& c, wl::Display* display);
  // Binds wp_presentation and waits for its clock_id; why not, or "".
  std::string bind();
  // One read of the socket, waiting up to `timeout_ms` for data, and a
  // dispatch of latlab's queue. false: the display has failed.
  bool pump(int timeout_ms);
  // The outstanding entry of `proxy`: its outcome is `o` (owner and frame
  // filled in here); the proxy is destroyed. Nothing when it is not listed.
  void finish(wl::Proxy* proxy, DisplayOutcome o);
  int64_t oldest_age();
  void take_arrived(std::vector<DisplayOutcome>& out);

  static void on_global(void* self, wl::Proxy*, uint32_t name, const char* iface, uint32_t v);
  static void on_global_remove(void*, wl::Proxy*, uint32_t) {}
  static void on_clock_id(void* self, wl::Proxy*, uint32_t clock_id);
  static void on_sync_output(void*, wl::Proxy*, wl::Proxy*) {}
  static void on_presented(void* self, wl::Proxy* fb, uint32_t sec_hi, uint32_t sec_lo,
                           uint32_t nsec, uint32_t refresh, uint32_t seq_hi, uint32_t seq_lo,
                           uint32_t flags);
  static void on_discarded(void* self, wl::Proxy* fb);

  const wl::Client& c_;
  wl::Display* display_;
  // read_mu_: one of latlab's threads dispatches or reads at a time.
  // list_mu_ (taken inside read_mu_, never across a dispatch): the lists.
  // Each is taken before libwayland's own lock, never after it.
  std::mutex read_mu_;
  std::mutex list_mu_;
  wl::EventQueue* queue_ = nullptr;
  wl::Proxy* presentation_ = nullptr;
  uint32_t global_name_ = 0;  // wp_presentation's registry name (0: not offered)
  uint32_t clock_id_ = UINT32_MAX;
  bool closed_ = false;  // under both locks: the display is gone
  std::vector<Outstanding> outstanding_;
  std::vector<DisplayOutcome> arrived_;  // filled by the handlers during a dispatch
};

}  // namespace latlab::capture
