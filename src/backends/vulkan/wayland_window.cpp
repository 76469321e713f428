// WaylandWindow: see wayland_window.hpp.
#include "backends/vulkan/wayland_window.hpp"

#include <poll.h>
#include <time.h>
#include <wayland-client.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "latlab/host_clock.hpp"
#include "presentation-time-client-protocol.h"
#include "xdg-shell-client-protocol.h"

namespace latlab {

// One frame's feedback, owned by the window until its answer came.
struct Feedback {
  WaylandWindow::State* window = nullptr;
  uint64_t frame_id = 0;
  struct wp_presentation_feedback* proxy = nullptr;
};

struct WaylandWindow::State {
  std::string name;
  wl_display* display = nullptr;
  wl_event_queue* queue = nullptr;
  wl_display* wrapper = nullptr;  // the display's proxy on `queue` (the registry's factory)
  wl_registry* registry = nullptr;
  wl_compositor* compositor = nullptr;
  xdg_wm_base* wm = nullptr;
  wp_presentation* presentation = nullptr;
  wl_surface* surface = nullptr;
  xdg_surface* xdg = nullptr;
  xdg_toplevel* toplevel = nullptr;
  bool configured = false;
  // The compositor's clock and its offset to the host clock (host - it).
  clockid_t clock = CLOCK_MONOTONIC;
  bool clock_named = false;
  int64_t clock_offset_ns = 0;
  int64_t clock_offset_error_ns = 0;

  mutable std::mutex mutex;  // guards what the two threads share below
  std::vector<std::unique_ptr<Feedback>> pending;
  std::unordered_map<uint64_t, int64_t> shown;
  uint64_t discarded = 0;
  std::vector<int64_t> refresh_ns;
  uint64_t hw_clock = 0;

  std::atomic<bool> stop{false};
  std::thread thread;

  ~State();
  // Dispatches latlab's queue: events that came, then up to `timeout_ms` for more.
  void dispatch(int timeout_ms);
  void finish(Feedback* f, std::optional<int64_t> shown_at, uint32_t refresh, uint32_t flags);
};

WaylandWindow::State::~State() {
  stop = true;
  if (thread.joinable()) thread.join();
  for (auto& f : pending) wp_presentation_feedback_destroy(f->proxy);
  if (toplevel != nullptr) xdg_toplevel_destroy(toplevel);
  if (xdg != nullptr) xdg_surface_destroy(xdg);
  if (surface != nullptr) wl_surface_destroy(surface);
  if (presentation != nullptr) wp_presentation_destroy(presentation);
  if (wm != nullptr) xdg_wm_base_destroy(wm);
  if (compositor != nullptr) wl_compositor_destroy(compositor);
  if (registry != nullptr) wl_registry_destroy(registry);
  if (wrapper != nullptr) wl_proxy_wrapper_destroy(wrapper);
  if (queue != nullptr) wl_event_queue_destroy(queue);
  if (display != nullptr) wl_display_disconnect(display);
}

void WaylandWindow::State::dispatch(int timeout_ms) {
  // libwayland's protocol for several readers of one connection (the WSI
  // reads it too): prepare, flush, poll, read or cancel, dispatch.
  while (wl_display_prepare_read_queue(display, queue) != 0)
    wl_display_dispatch_queue_pending(display, queue);
  wl_display_flush(display);
  pollfd p{wl_display_get_fd(display), POLLIN, 0};
  if (poll(&p, 1, timeout_ms) > 0 && (p.revents & POLLIN) != 0) {
    wl_display_read_events(display);
  } else {
    wl_display_cancel_read(display);
  }
  wl_display_dispatch_queue_pending(display, queue);
}

void WaylandWindow::State::finish(Feedback* f, std::optional<int64_t> shown_at, uint32_t refresh,
                                  uint32_t flags) {
  std::lock_guard lock(mutex);
  if (shown_at) {
    shown[f->frame_id] = *shown_at;
    if (refresh != 0) refresh_ns.push_back(refresh);
    if ((flags & WP_PRESENTATION_FEEDBACK_KIND_HW_CLOCK) != 0) ++hw_clock;
  } else {
    ++discarded;
  }
  wp_presentation_feedback_destroy(f->proxy);
  const auto it = std::find_if(pending.begin(), pending.end(),
                               [&](const std::unique_ptr<Feedback>& p) { return p.get() == f; });
  if (it != pending.end()) pending.erase(it);
}

namespace {

void on_sync_output(void*, struct wp_presentation_feedback*, wl_output*) {}

void on_presented(void* data, struct wp_presentation_feedback*, uint32_t sec_hi, uint32_t sec_lo,
                  uint32_t nsec, uint32_t refresh, uint32_t, uint32_t, uint32_t flags) {
  auto* f = static_cast<Feedback*>(data);
  const int64_t t = static_cast<int64_t>((uint64_t{sec_hi} << 32) | sec_lo) * 1'000'000'000 + nsec;
  f->window->finish(f, t + f->window->clock_offset_ns, refresh, flags);
}

void on_discarded(void* data, struct wp_presentation_feedback*) {
  auto* f = static_cast<Feedback*>(data);
  f->window->finish(f, std::nullopt, 0, 0);
}

const wp_presentation_feedback_listener kFeedbackListener = {on_sync_output, on_presented,
                                                             on_discarded};

int64_t clock_ns(clockid_t c) {
  timespec ts{};
  clock_gettime(c, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

void on_clock_id(void* data, wp_presentation*, uint32_t clock) {
  auto* s = static_cast<WaylandWindow::State*>(data);
  s->clock = static_cast<clockid_t>(clock);
  s->clock_named = true;
  if (s->clock == kHostClockId) return;
  // Another clock: its offset, read between two host reads (the gap bounds it).
  const int64_t before = host_now_ns();
  const int64_t theirs = clock_ns(s->clock);
  const int64_t after = host_now_ns();
  s->clock_offset_ns = before + (after - before) / 2 - theirs;
  s->clock_offset_error_ns = (after - before) / 2;
}

const wp_presentation_listener kPresentationListener = {on_clock_id};

void on_ping(void*, xdg_wm_base* wm, uint32_t serial) { xdg_wm_base_pong(wm, serial); }
const xdg_wm_base_listener kWmListener = {on_ping};

void on_surface_configure(void* data, xdg_surface* xdg, uint32_t serial) {
  xdg_surface_ack_configure(xdg, serial);
  static_cast<WaylandWindow::State*>(data)->configured = true;
}
const xdg_surface_listener kXdgSurfaceListener = {on_surface_configure};

void on_toplevel_configure(void*, xdg_toplevel*, int32_t, int32_t, wl_array*) {}
void on_toplevel_close(void*, xdg_toplevel*) {}
const xdg_toplevel_listener kToplevelListener = {on_toplevel_configure, on_toplevel_close, nullptr,
                                                 nullptr};

void on_global(void* data, wl_registry* registry, uint32_t name, const char* interface, uint32_t) {
  auto* s = static_cast<WaylandWindow::State*>(data);
  if (std::strcmp(interface, wl_compositor_interface.name) == 0) {
    s->compositor =
        static_cast<wl_compositor*>(wl_registry_bind(registry, name, &wl_compositor_interface, 1));
  } else if (std::strcmp(interface, xdg_wm_base_interface.name) == 0) {
    s->wm = static_cast<xdg_wm_base*>(wl_registry_bind(registry, name, &xdg_wm_base_interface, 1));
    xdg_wm_base_add_listener(s->wm, &kWmListener, s);
  } else if (std::strcmp(interface, wp_presentation_interface.name) == 0) {
    s->presentation = static_cast<wp_presentation*>(
        wl_registry_bind(registry, name, &wp_presentation_interface, 1));
    wp_presentation_add_listener(s->presentation, &kPresentationListener, s);
  }
}
void on_global_remove(void*, wl_registry*, uint32_t) {}
const wl_registry_listener kRegistryListener = {on_global, on_global_remove};

// A round trip on latlab's queue: every event the requests so far caused.
Result<void> round_trip(WaylandWindow::State& s, const char* what) {
  if (wl_display_roundtrip_queue(s.display, s.queue) < 0)
    return make_error("the Wayland compositor on " + s.name + " closed the connection " + what);
  return {};
}

}  // namespace

Result<std::unique_ptr<WaylandWindow>> WaylandWindow::open(const std::string& display,
                                                           uint32_t width, uint32_t height) {
  auto s = std::make_unique<State>();
  const char* env = std::getenv("WAYLAND_DISPLAY");
  s->name = !display.empty() ? display : (env != nullptr ? env : "");
  if (s->name.empty()) return make_error("no Wayland display: WAYLAND_DISPLAY is not set");
  s->display = wl_display_connect(s->name.c_str());
  if (s->display == nullptr) return make_error("cannot connect to the Wayland display " + s->name);
  s->queue = wl_display_create_queue(s->display);
  s->wrapper = static_cast<wl_display*>(wl_proxy_create_wrapper(s->display));
  wl_proxy_set_queue(reinterpret_cast<wl_proxy*>(s->wrapper), s->queue);
  s->registry = wl_display_get_registry(s->wrapper);
  wl_registry_add_listener(s->registry, &kRegistryListener, s.get());
  if (auto r = round_trip(*s, "while listing its globals"); !r) return r.error();
  if (s->compositor == nullptr)
    return make_error("the compositor on " + s->name + " has no wl_compositor");
  if (s->wm == nullptr)
    return make_error("the compositor on " + s->name + " has no xdg_wm_base (xdg-shell)");
  s->surface = wl_compositor_create_surface(s->compositor);
  s->xdg = xdg_wm_base_get_xdg_surface(s->wm, s->surface);
  xdg_surface_add_listener(s->xdg, &kXdgSurfaceListener, s.get());
  s->toplevel = xdg_surface_get_toplevel(s->xdg);
  xdg_toplevel_add_listener(s->toplevel, &kToplevelListener, s.get());
  xdg_toplevel_set_title(s->toplevel, "latlab present");
  xdg_toplevel_set_min_size(s->toplevel, static_cast<int32_t>(width), static_cast<int32_t>(height));
  wl_surface_commit(s->surface);  // no buffer: asks for the first configure
  for (int i = 0; i < 10 && !s->configured; ++i) {
    if (auto r = round_trip(*s, "before configuring the window"); !r) return r.error();
  }
  if (!s->configured)
    return make_error("the compositor on " + s->name + " did not configure the window");
  return std::unique_ptr<WaylandWindow>(new WaylandWindow(std::move(s)));
}

WaylandWindow::WaylandWindow(std::unique_ptr<State> state) : s_(std::move(state)) {}
WaylandWindow::~WaylandWindow() = default;

wl_display* WaylandWindow::display() const { return s_->display; }
wl_surface* WaylandWindow::surface() const { return s_->surface; }
const std::string& WaylandWindow::name() const { return s_->name; }

ScreenObserverInfo WaylandWindow::describe() const {
  ScreenObserverInfo o;
  o.name = "wp_presentation";
  o.observes =
      "the Wayland compositor's report of when it showed the frame (wp_presentation_feedback."
      "presented): the page flip where the output reports hw_clock, else the compositor's own "
      "repaint time (weston headless: its repaint timer; no scan-out, no panel)";
  o.error = "as the compositor states it (hw_clock, vsync flags in the frames it reports)";
  if (s_->presentation == nullptr) {
    o.reason = "the compositor on " + s_->name + " offers no wp_presentation";
  } else if (!s_->clock_named) {
    o.reason = "the compositor named no clock for its presentation times";
  } else {
    o.available = true;
    if (s_->clock != kHostClockId)
      o.error += "; its clock " + std::to_string(s_->clock) +
                 " is mapped to the host clock by "
                 "an offset read at start (+/- " +
                 std::to_string(s_->clock_offset_error_ns) + " ns)";
  }
  return o;
}

void WaylandWindow::start() {
  s_->stop = false;
  s_->thread = std::thread([s = s_.get()] {
    while (!s->stop) s->dispatch(10);
  });
}

void WaylandWindow::stop(int64_t grace_ns) {
  const int64_t end = host_now_ns() + grace_ns;
  while (host_now_ns() < end) {
    {
      std::lock_guard lock(s_->mutex);
      if (s_->pending.empty()) break;
    }
    timespec ts{0, 1'000'000};
    nanosleep(&ts, nullptr);
  }
  s_->stop = true;
  if (s_->thread.joinable()) s_->thread.join();
}

void WaylandWindow::request_feedback(uint64_t frame_id) {
  if (s_->presentation == nullptr) return;
  auto f = std::make_unique<Feedback>();
  f->window = s_.get();
  f->frame_id = frame_id;
  std::lock_guard lock(s_->mutex);  // its answer waits until it is listed
  f->proxy = wp_presentation_feedback(s_->presentation, s_->surface);
  wp_presentation_feedback_add_listener(f->proxy, &kFeedbackListener, f.get());
  s_->pending.push_back(std::move(f));
}

std::optional<int64_t> WaylandWindow::shown_ns(uint64_t frame_id) const {
  std::lock_guard lock(s_->mutex);
  const auto it = s_->shown.find(frame_id);
  if (it == s_->shown.end()) return std::nullopt;
  return it->second;
}

ScreenObserverInfo WaylandWindow::info() const {
  ScreenObserverInfo o = describe();
  std::lock_guard lock(s_->mutex);
  o.frames_seen = s_->shown.size();
  if (!s_->refresh_ns.empty()) {
    std::vector<int64_t> r = s_->refresh_ns;
    std::nth_element(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(r.size() / 2), r.end());
    o.error += "; refresh reported " + std::to_string(r[r.size() / 2] / 1000) + " us";
  }
  o.error += "; " + std::to_string(s_->discarded) +
             " frames discarded by the compositor (replaced before they were shown) have no "
             "time; " +
             std::to_string(s_->hw_clock) + " shown frames flagged hw_clock";
  return o;
}

}  // namespace latlab
