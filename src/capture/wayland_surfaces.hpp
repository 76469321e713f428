// The Wayland surfaces a frame source has seen the program make (a
// VkSurfaceKHR from vkCreateWaylandSurfaceKHR, an EGLSurface on a
// wl_egl_window), each with its wl_surface and the feedback machinery of its
// wl_display (presentation_feedback.hpp), one per display, shared by its
// surfaces and released with the last of them.
//
// Threads: every method from any thread. Ownership: the map holds each
// display's PresentationFeedback; find() shares it, so a swapchain may keep
// it past remove(). Nothing here is released at process exit (the program
// may have disconnected its display by then).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "capture/presentation_feedback.hpp"

namespace latlab::capture {

// Set to 0 in the program's environment: no feedback is asked (the
// surfaces are kept, present_complete is unavailable with that reason).
inline constexpr const char* kWaylandFeedbackEnv = "LATLAB_CAPTURE_WAYLAND_FEEDBACK";

class WaylandSurfaces {
 public:
  struct Surface {
    wl::Proxy* surface = nullptr;                    // the program's wl_surface
    std::shared_ptr<PresentationFeedback> feedback;  // null: unavailable, `why` says why
    std::string why;
  };

  // Remembers `key` (the API's surface handle) as `surface` on `display`;
  // binds the display's wp_presentation the first time (two round trips).
  void add(uint64_t key, void* display, void* surface);
  // Forgets `key`; the display's machinery goes with its last surface.
  // Waits for a poll_all in progress.
  void remove(uint64_t key);
  // The surface `key` names; nullopt when it is not a Wayland surface.
  std::optional<Surface> find(uint64_t key) const;
  // Appends what the compositor said of every display's requests
  // (PresentationFeedback::poll), from a thread of latlab's. Polls only
  // displays with a surface: remove() and forget_display() wait for it.
  void poll_all(std::vector<DisplayOutcome>& out);
  // The program is disconnecting `display` (called just before): its
  // surfaces are forgotten and its feedback closed, after any poll_all in
  // progress.
  void forget_display(void* display);

 private:
  struct Display {
    std::shared_ptr<PresentationFeedback> feedback;
    std::string why;
    uint32_t surfaces = 0;
  };
  struct Entry {
    void* display = nullptr;
    wl::Proxy* surface = nullptr;
  };
  void remove_locked(uint64_t key);

  // poll_mu_: held by poll_all while it uses the displays, taken by the
  // removals before mu_. mu_: the maps, never held across a poll.
  std::mutex poll_mu_;
  mutable std::mutex mu_;
  std::map<void*, Display> displays_;
  std::map<uint64_t, Entry> surfaces_;
};

}  // namespace latlab::capture
