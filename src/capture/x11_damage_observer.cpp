#include "capture/x11_damage_observer.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <utility>

#include "latlab/host_clock.hpp"

#if LATLAB_HAVE_XCB_DAMAGE
#include <xcb/damage.h>
#include <xcb/xcb.h>
#endif

namespace latlab::capture {

#if LATLAB_HAVE_XCB_DAMAGE

struct X11DamageObserver::Conn {
  xcb_connection_t* c = nullptr;
  uint8_t first_event = 0;
  std::vector<xcb_damage_damage_t> damages;
  ~Conn() {
    if (c != nullptr) xcb_disconnect(c);
  }
};

Result<std::unique_ptr<X11DamageObserver>> X11DamageObserver::create(const std::string& display) {
  std::string name = display;
  if (name.empty()) {
    const char* env = std::getenv("DISPLAY");
    name = env != nullptr ? env : "";
  }
  if (name.empty()) return Error{"no X display: DISPLAY is not set"};
  auto conn = std::make_unique<Conn>();
  conn->c = xcb_connect(name.c_str(), nullptr);
  if (xcb_connection_has_error(conn->c) != 0)
    return Error{"cannot connect to X display " + name + " (xcb_connect failed)"};
  const xcb_query_extension_reply_t* ext = xcb_get_extension_data(conn->c, &xcb_damage_id);
  if (ext == nullptr || ext->present == 0)
    return Error{"the X server on " + name + " has no DAMAGE extension"};
  // DAMAGE answers only a client that said which version it speaks.
  xcb_damage_query_version_reply_t* v = xcb_damage_query_version_reply(
      conn->c,
      xcb_damage_query_version(conn->c, XCB_DAMAGE_MAJOR_VERSION, XCB_DAMAGE_MINOR_VERSION),
      nullptr);
  if (v == nullptr) return Error{"DAMAGE QueryVersion failed on " + name};
  std::free(v);
  conn->first_event = ext->first_event;
  std::unique_ptr<X11DamageObserver> o(new X11DamageObserver());
  o->conn_ = std::move(conn);
  o->display_ = name;
  if (pipe2(o->wake_, O_CLOEXEC) != 0) return Error{"pipe2 failed"};
  o->thread_ = std::thread([p = o.get()] { p->loop(); });
  return o;
}

Result<int64_t> X11DamageObserver::watch(uint64_t window) {
  xcb_connection_t* c = conn_->c;
  const xcb_damage_damage_t id = xcb_generate_id(c);
  const auto w = static_cast<xcb_drawable_t>(window);
  xcb_generic_error_t* err = xcb_request_check(
      c, xcb_damage_create_checked(c, id, w, XCB_DAMAGE_REPORT_LEVEL_RAW_RECTANGLES));
  if (err != nullptr) {
    const int code = err->error_code;
    std::free(err);
    return Error{"DAMAGE could not watch window " + std::to_string(window) + " (X error " +
                 std::to_string(code) + ": the window is gone?)"};
  }
  conn_->damages.push_back(id);
  const int64_t since = host_now_ns();
  // The reply's read may have queued events in xcb behind the thread's
  // poll(): wake it to look.
  poke(0);
  return since;
}

void X11DamageObserver::poke(char what) {
  ssize_t n = -1;
  do {
    n = write(wake_[1], &what, 1);
  } while (n < 0 && errno == EINTR);
}

void X11DamageObserver::loop() {
  xcb_connection_t* c = conn_->c;
  const uint8_t notify = static_cast<uint8_t>(conn_->first_event + XCB_DAMAGE_NOTIFY);
  pollfd fds[2] = {{xcb_get_file_descriptor(c), POLLIN, 0}, {wake_[0], POLLIN, 0}};
  for (;;) {
    // Events already read from the socket (by another thread's reply) first.
    while (xcb_generic_event_t* ev = xcb_poll_for_event(c)) {
      const int64_t now = host_now_ns();
      if ((ev->response_type & 0x7f) == notify) {
        const auto* n = reinterpret_cast<const xcb_damage_notify_event_t*>(ev);
        std::lock_guard lock(mu_);
        events_.push_back(ScreenEvent{now, n->timestamp, n->drawable, n->area.x, n->area.y,
                                      n->area.width, n->area.height});
      }
      std::free(ev);
    }
    if (xcb_connection_has_error(c) != 0) return;
    fds[0].revents = fds[1].revents = 0;
    if (poll(fds, 2, -1) < 0) continue;
    if (fds[1].revents != 0) {
      char buf[16];
      const ssize_t n = read(wake_[0], buf, sizeof buf);
      for (ssize_t i = 0; i < n; ++i) {
        if (buf[i] == 1) return;  // stop; 0: look at the queue
      }
    }
  }
}

void X11DamageObserver::stop(int64_t grace_ns) {
  if (!thread_.joinable()) return;
  if (grace_ns > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(grace_ns));
  poke(1);
  thread_.join();
}

X11DamageObserver::~X11DamageObserver() {
  stop(0);
  if (wake_[0] >= 0) close(wake_[0]);
  if (wake_[1] >= 0) close(wake_[1]);
}

#else  // built without libxcb-damage

struct X11DamageObserver::Conn {};

Result<std::unique_ptr<X11DamageObserver>> X11DamageObserver::create(const std::string&) {
  return Error{"latlab was built without libxcb-damage (Debian libxcb-damage0-dev)"};
}
Result<int64_t> X11DamageObserver::watch(uint64_t) { return Error{"no DAMAGE support"}; }
void X11DamageObserver::loop() {}
void X11DamageObserver::poke(char) {}
void X11DamageObserver::stop(int64_t) {}
X11DamageObserver::~X11DamageObserver() = default;

#endif

std::vector<ScreenEvent> X11DamageObserver::take_events() {
  std::lock_guard lock(mu_);
  return std::exchange(events_, {});
}

}  // namespace latlab::capture
