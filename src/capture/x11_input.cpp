#include "capture/x11_input.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <utility>

#include "latlab/bench/signal_generator.hpp"
#include "latlab/host_clock.hpp"

#if LATLAB_HAVE_X11_INPUT
#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/extensions/XInput2.h>
#include <X11/extensions/XTest.h>
#endif

namespace latlab::capture {

#if LATLAB_HAVE_X11_INPUT

namespace {

// Xlib's default error handler exits the process: latlab's notes the error
// instead (the calls that can fail check their own status).
std::atomic<int> g_last_x_error{0};
extern "C" int on_x_error(Display*, XErrorEvent* e) {
  g_last_x_error.store(e->error_code);
  return 0;
}

void ns_to_timespec(int64_t ns, timespec& ts) {
  ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
}

std::optional<int64_t> window_pid(Display* d, Window w, Atom net_wm_pid) {
  Atom type = None;
  int format = 0;
  unsigned long n = 0, after = 0;
  unsigned char* data = nullptr;
  std::optional<int64_t> pid;
  if (XGetWindowProperty(d, w, net_wm_pid, 0, 1, False, XA_CARDINAL, &type, &format, &n, &after,
                         &data) == Success &&
      type == XA_CARDINAL && format == 32 && n == 1 && data != nullptr) {
    pid = static_cast<int64_t>(*reinterpret_cast<unsigned long*>(data));
  }
  if (data != nullptr) XFree(data);
  return pid;
}

}  // namespace

struct X11Input::Conn {
  Display* rec = nullptr;  // the recorder thread's
  Display* inj = nullptr;  // the injector's (start() on the caller's thread, before it runs)
  int xi_opcode = 0;
  std::vector<int> xtest_devices;
  KeyCode key = 0;
  Atom net_wm_pid = None;
  int motion_x[2] = {0, 0}, motion_y = 0;
  ~Conn() {
    if (rec != nullptr) XCloseDisplay(rec);
    if (inj != nullptr) XCloseDisplay(inj);
  }
};

Result<std::unique_ptr<X11Input>> X11Input::create(const std::string& display,
                                                   const CaptureInputSpec& spec) {
  std::string name = display;
  if (name.empty()) {
    const char* env = std::getenv("DISPLAY");
    name = env != nullptr ? env : "";
  }
  if (name.empty()) return Error{"no X display: DISPLAY is not set"};
  XInitThreads();
  XSetErrorHandler(on_x_error);
  auto conn = std::make_unique<Conn>();
  conn->rec = XOpenDisplay(name.c_str());
  conn->inj = XOpenDisplay(name.c_str());
  if (conn->rec == nullptr || conn->inj == nullptr)
    return Error{"cannot connect to X display " + name + " (XOpenDisplay failed)"};
  int event = 0, error = 0;
  if (XQueryExtension(conn->rec, "XInputExtension", &conn->xi_opcode, &event, &error) == 0)
    return Error{"the X server on " + name + " has no XInputExtension"};
  int major = 2, minor = 2;
  if (XIQueryVersion(conn->rec, &major, &minor) != Success)
    return Error{"the X server on " + name + " has no XInput 2.2 (raw events to the root window)"};
  int xt_major = 0, xt_minor = 0;
  if (XTestQueryExtension(conn->inj, &event, &error, &xt_major, &xt_minor) == 0)
    return Error{"the X server on " + name + " has no XTEST extension (latlab injects through it)"};
  if (spec.kind == InputKind::key) {
    const KeySym sym = XStringToKeysym(spec.key.c_str());
    if (sym == NoSymbol)
      return Error{"--input key:" + spec.key +
                   ": X knows no keysym of that name (space, a, Return)"};
    conn->key = XKeysymToKeycode(conn->inj, sym);
    if (conn->key == 0)
      return Error{"--input key:" + spec.key + ": no key of the keyboard on " + name +
                   " gives that keysym"};
  }
  int ndev = 0;
  XIDeviceInfo* devs = XIQueryDevice(conn->rec, XIAllDevices, &ndev);
  for (int i = 0; i < ndev; ++i) {
    if (std::string(devs[i].name).find("XTEST") != std::string::npos)
      conn->xtest_devices.push_back(devs[i].deviceid);
  }
  XIFreeDeviceInfo(devs);
  conn->net_wm_pid = XInternAtom(conn->rec, "_NET_WM_PID", False);
  const Window root = DefaultRootWindow(conn->rec);
  unsigned char bits[XIMaskLen(XI_LASTEVENT)] = {};
  XISetMask(bits, XI_RawKeyPress);
  XISetMask(bits, XI_RawButtonPress);
  XISetMask(bits, XI_RawMotion);
  XIEventMask mask{XIAllDevices, static_cast<int>(sizeof bits), bits};
  XISelectEvents(conn->rec, root, &mask, 1);
  XSelectInput(conn->rec, root, SubstructureNotifyMask);
  XSync(conn->rec, False);

  std::unique_ptr<X11Input> in(new X11Input());
  in->conn_ = std::move(conn);
  in->display_ = name;
  in->spec_ = spec;
  if (pipe2(in->stop_inject_, O_CLOEXEC) != 0 || pipe2(in->stop_record_, O_CLOEXEC) != 0)
    return Error{"pipe2 failed"};
  in->recorder_ = std::thread([p = in.get()] { p->record_loop(); });
  return in;
}

void X11Input::set_program(int64_t pid) { pid_.store(pid); }

std::optional<FoundWindow> X11Input::found_window() const {
  std::lock_guard lock(mu_);
  if (found_) return found_;
  if (unnamed_) return FoundWindow{*unnamed_, "first window mapped"};
  return std::nullopt;
}

void X11Input::record_loop() {
  Display* d = conn_->rec;
  pollfd fds[2] = {{ConnectionNumber(d), POLLIN, 0}, {stop_record_[0], POLLIN, 0}};
  for (;;) {
    while (XPending(d) > 0) {
      XEvent ev;
      XNextEvent(d, &ev);
      const int64_t now = host_now_ns();
      if (ev.type == MapNotify) {
        if (ev.xmap.override_redirect != 0) continue;
        const int64_t program = pid_.load();
        const std::optional<int64_t> pid = window_pid(d, ev.xmap.window, conn_->net_wm_pid);
        std::lock_guard lock(mu_);
        if (!found_ && pid && *pid == program) {
          found_ = FoundWindow{ev.xmap.window, "_NET_WM_PID"};
        } else if (!pid && !unnamed_) {
          unnamed_ = ev.xmap.window;
        }
        continue;
      }
      XGenericEventCookie* cookie = &ev.xcookie;
      if (ev.type != GenericEvent || cookie->extension != conn_->xi_opcode) continue;
      if (XGetEventData(d, cookie) == 0) continue;
      const auto* raw = static_cast<const XIRawEvent*>(cookie->data);
      RawInputEvent e;
      e.host_ns = now;
      e.server_ms = static_cast<uint32_t>(raw->time);
      bool keep = raw->deviceid == raw->sourceid;  // a slave's own copy, not its master's
      switch (cookie->evtype) {
        case XI_RawKeyPress:
          e.kind = InputKind::key;
          break;
        case XI_RawButtonPress:
          e.kind = InputKind::button;
          break;
        case XI_RawMotion:
          e.kind = InputKind::motion;
          break;
        default:
          keep = false;
      }
      const auto& xt = conn_->xtest_devices;
      e.from_xtest = std::find(xt.begin(), xt.end(), raw->sourceid) != xt.end();
      XFreeEventData(d, cookie);
      if (!keep) continue;
      std::lock_guard lock(mu_);
      raw_.push_back(e);
    }
    fds[0].revents = fds[1].revents = 0;
    if (poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[1].revents != 0) return;
  }
}

Result<void> X11Input::start(uint64_t window, const ScheduleDesc& schedule, int64_t start,
                             uint64_t count, int64_t timer_slack_ns) {
  Display* d = conn_->inj;
  const auto w = static_cast<Window>(window);
  g_last_x_error.store(0);
  XWindowAttributes attr{};
  if (XGetWindowAttributes(d, w, &attr) == 0)
    return Error{"the program's window " + std::to_string(window) + " is gone"};
  Window child = None;
  int x = 0, y = 0;
  XTranslateCoordinates(d, w, attr.root, attr.width / 2, attr.height / 2, &x, &y, &child);
  XSetInputFocus(d, w, RevertToPointerRoot, CurrentTime);
  XWarpPointer(d, None, attr.root, 0, 0, 0, 0, x, y);
  XSync(d, False);
  if (const int err = g_last_x_error.load(); err != 0)
    return Error{"could not focus the program's window " + std::to_string(window) + " (X error " +
                 std::to_string(err) + ")"};
  const int dx = std::max(1, std::min(8, attr.width / 4));
  conn_->motion_x[0] = x - dx;
  conn_->motion_x[1] = x + dx;
  conn_->motion_y = y;
  injector_ = std::thread([this, schedule, start, count, timer_slack_ns] {
    if (timer_slack_ns > 0) (void)set_thread_timer_slack(timer_slack_ns);
    slack_.store(read_thread_timer_slack().obtained_ns);
    inject_loop(schedule, start, count);
  });
  return {};
}

void X11Input::inject_loop(ScheduleDesc desc, int64_t start, uint64_t count) {
  Display* d = conn_->inj;
  const int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
  if (tfd < 0) {
    injector_done_.store(true);
    return;
  }
  Schedule schedule(desc);
  int64_t deadline = start;
  for (uint64_t id = 0; count == 0 || id < count; ++id) {
    deadline += schedule.next_interval_ns();
    itimerspec its{};
    ns_to_timespec(deadline, its.it_value);
    timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, nullptr);
    pollfd fds[2] = {{tfd, POLLIN, 0}, {stop_inject_[0], POLLIN, 0}};
    int n = 0;
    do {
      n = poll(fds, 2, -1);
    } while (n < 0 && errno == EINTR);
    if (n < 0 || fds[1].revents != 0) break;
    const int64_t woke = host_now_ns();
    uint64_t expirations = 0;
    (void)!read(tfd, &expirations, sizeof expirations);
    switch (spec_.kind) {
      case InputKind::key:
        XTestFakeKeyEvent(d, conn_->key, True, 0);
        XTestFakeKeyEvent(d, conn_->key, False, 0);
        break;
      case InputKind::button:
        XTestFakeButtonEvent(d, spec_.button, True, 0);
        XTestFakeButtonEvent(d, spec_.button, False, 0);
        break;
      case InputKind::motion:
        XTestFakeMotionEvent(d, -1, conn_->motion_x[id % 2], conn_->motion_y, 0);
        break;
    }
    // Before the flush that writes the request: the server cannot have it
    // earlier (after it, a preempted thread could read a time later than
    // the server's handling of the event).
    const int64_t sent = host_now_ns();
    XFlush(d);
    {
      std::lock_guard lock(mu_);
      markers_.push_back(InputMarker{id, deadline, woke, sent});
    }
    sent_.fetch_add(1);
  }
  close(tfd);
  injector_done_.store(true);
}

void X11Input::stop(int64_t grace_ns) {
  const char byte = 1;
  if (injector_.joinable()) {
    (void)!write(stop_inject_[1], &byte, 1);
    injector_.join();
  }
  if (!recorder_.joinable()) return;
  // What the last events caused still comes in meanwhile.
  if (grace_ns > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(grace_ns));
  (void)!write(stop_record_[1], &byte, 1);
  recorder_.join();
}

X11Input::~X11Input() {
  stop(0);
  for (int fd : {stop_inject_[0], stop_inject_[1], stop_record_[0], stop_record_[1]}) {
    if (fd >= 0) close(fd);
  }
}

#else  // built without libXi / libXtst

struct X11Input::Conn {};

Result<std::unique_ptr<X11Input>> X11Input::create(const std::string&, const CaptureInputSpec&) {
  return Error{"latlab was built without libXi and libXtst (Debian libxi-dev, libxtst-dev)"};
}
void X11Input::set_program(int64_t) {}
std::optional<FoundWindow> X11Input::found_window() const { return std::nullopt; }
void X11Input::record_loop() {}
Result<void> X11Input::start(uint64_t, const ScheduleDesc&, int64_t, uint64_t, int64_t) {
  return Error{"no X input support"};
}
void X11Input::inject_loop(ScheduleDesc, int64_t, uint64_t) {}
void X11Input::stop(int64_t) {}
X11Input::~X11Input() = default;

#endif

std::vector<InputMarker> X11Input::take_markers() {
  std::lock_guard lock(mu_);
  return std::exchange(markers_, {});
}

std::vector<RawInputEvent> X11Input::take_raw() {
  std::lock_guard lock(mu_);
  return std::exchange(raw_, {});
}

}  // namespace latlab::capture
