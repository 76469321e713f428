#include "backends/vulkan/x11_framebuffer_observer.hpp"

#if LATLAB_HAVE_XCB
#include <sys/ipc.h>
#include <sys/shm.h>
#include <xcb/shm.h>
#include <xcb/xcb.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <string_view>

#include "backends/vulkan/frame_pattern.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/host_time.hpp"

namespace latlab {
namespace {

int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

constexpr size_t kPatternBytes = size_t{frame_pattern::kWidth} * frame_pattern::kHeight * 4;

}  // namespace

struct X11FramebufferObserver::Conn {
  xcb_connection_t* c = nullptr;
  xcb_window_t root = 0;
  int16_t x = 0;  // pattern's top-left on the root window
  int16_t y = 0;
  xcb_shm_seg_t seg = 0;
  void* shm = nullptr;
  ~Conn() {
    if (c != nullptr && seg != 0) xcb_shm_detach(c, seg);
    if (shm != nullptr) shmdt(shm);
    if (c != nullptr) xcb_disconnect(c);
  }
};

ScreenObserverInfo X11FramebufferObserver::describe(int64_t poll_period_ns) {
  ScreenObserverInfo o;
  o.name = "x11_framebuffer";
  o.observes =
      "when the frame's id pattern is first in the X server's framebuffer (MIT-SHM XShmGetImage "
      "of the window's rectangle on the root window, polled): what a screen grab would see, "
      "not light from a panel";
  o.error =
      "late by 0 .. one polling period + one read, never early; the X server's copy to a real "
      "scan-out and the panel are not included";
  o.poll_period_ns = poll_period_ns;
  return o;
}

Result<std::unique_ptr<X11FramebufferObserver>> X11FramebufferObserver::create(
    const std::string& display, uint32_t window, int64_t poll_period_ns) {
  if (poll_period_ns <= 0) return make_error("the framebuffer observer needs a polling period > 0");
  std::unique_ptr<X11FramebufferObserver> o(new X11FramebufferObserver());
  o->period_ns_ = poll_period_ns;
  o->conn_ = std::make_unique<Conn>();
  Conn& k = *o->conn_;
  k.c = xcb_connect(display.empty() ? nullptr : display.c_str(), nullptr);
  if (k.c == nullptr || xcb_connection_has_error(k.c) != 0) {
    return make_error("cannot connect to X display " + display);
  }
  const xcb_setup_t* setup = xcb_get_setup(k.c);
  const xcb_screen_t* screen = xcb_setup_roots_iterator(setup).data;
  k.root = screen->root;
  // 32 bits per pixel at the root depth, or the pattern cannot be read as words.
  bool bpp32 = false;
  for (auto it = xcb_setup_pixmap_formats_iterator(setup); it.rem > 0; xcb_format_next(&it)) {
    if (it.data->depth == screen->root_depth) bpp32 = it.data->bits_per_pixel == 32;
  }
  if (!bpp32 || setup->image_byte_order != XCB_IMAGE_ORDER_LSB_FIRST) {
    return make_error("the X server's root depth " + std::to_string(screen->root_depth) +
                      " is not 32 bits per pixel, least significant byte first");
  }
  xcb_translate_coordinates_reply_t* tr = xcb_translate_coordinates_reply(
      k.c, xcb_translate_coordinates(k.c, window, k.root, 0, 0), nullptr);
  if (tr == nullptr) return make_error("cannot place the window on the root window");
  k.x = tr->dst_x;
  k.y = tr->dst_y;
  std::free(tr);

  xcb_shm_query_version_reply_t* v =
      xcb_shm_query_version_reply(k.c, xcb_shm_query_version(k.c), nullptr);
  if (v != nullptr) {
    std::free(v);
    const int id = shmget(IPC_PRIVATE, kPatternBytes, IPC_CREAT | 0600);
    if (id >= 0) {
      void* mem = shmat(id, nullptr, 0);
      if (mem != reinterpret_cast<void*>(-1)) {
        k.shm = mem;
        k.seg = xcb_generate_id(k.c);
        xcb_generic_error_t* err =
            xcb_request_check(k.c, xcb_shm_attach_checked(k.c, k.seg, static_cast<uint32_t>(id), 0));
        if (err != nullptr) {  // e.g. the server is in another IPC namespace
          std::free(err);
          k.seg = 0;
        }
      }
      shmctl(id, IPC_RMID, nullptr);  // gone once both sides detach
    }
  }
  o->shm_ = k.seg != 0;
  return o;
}

X11FramebufferObserver::~X11FramebufferObserver() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

bool X11FramebufferObserver::read_pattern(uint32_t* pixels) {
  Conn& k = *conn_;
  const uint16_t w = frame_pattern::kWidth;
  const uint16_t h = frame_pattern::kHeight;
  if (shm_) {
    xcb_shm_get_image_reply_t* r = xcb_shm_get_image_reply(
        k.c,
        xcb_shm_get_image(k.c, k.root, k.x, k.y, w, h, ~0u, XCB_IMAGE_FORMAT_Z_PIXMAP, k.seg, 0),
        nullptr);
    if (r == nullptr) return false;
    std::free(r);
    std::copy_n(static_cast<const uint32_t*>(k.shm), size_t{w} * h, pixels);
    return true;
  }
  xcb_get_image_reply_t* r = xcb_get_image_reply(
      k.c, xcb_get_image(k.c, XCB_IMAGE_FORMAT_Z_PIXMAP, k.root, k.x, k.y, w, h, ~0u), nullptr);
  if (r == nullptr) return false;
  const bool ok = static_cast<size_t>(xcb_get_image_data_length(r)) >= kPatternBytes;
  if (ok) {
    const uint8_t* d = xcb_get_image_data(r);
    for (size_t i = 0; i < size_t{w} * h; ++i) {
      pixels[i] = uint32_t{d[4 * i]} | uint32_t{d[4 * i + 1]} << 8 | uint32_t{d[4 * i + 2]} << 16 |
                  uint32_t{d[4 * i + 3]} << 24;
    }
  }
  std::free(r);
  return ok;
}

void X11FramebufferObserver::loop() {
  std::vector<uint32_t> px(size_t{frame_pattern::kWidth} * frame_pattern::kHeight);
  const int64_t cpu0 = thread_cpu_ns();
  const int64_t wall0 = host_now_ns();
  int64_t deadline = wall0;
  std::optional<uint32_t> last_low;
  int64_t prev_t0 = wall0;
  while (!stop_.load(std::memory_order_relaxed)) {
    const int64_t t0 = host_now_ns();
    const bool ok = read_pattern(px.data());
    const int64_t t1 = host_now_ns();
    ++polls_;
    read_ns_.push_back(t1 - t0);
    std::optional<uint32_t> low;
    if (ok) {
      low = frame_pattern::decode(
          [&](uint32_t x, uint32_t y) { return px[size_t{y} * frame_pattern::kWidth + x]; });
    }
    if (!low) {
      ++unreadable_;
    } else if (low != last_low) {
      last_low = low;
      const uint64_t id =
          frame_pattern::widen(*low, last_presented_.load(std::memory_order_relaxed));
      if (seen_.empty() || id > seen_.back().first) {
        seen_.emplace_back(id, t1);
        windows_.push_back(t1 - prev_t0);  // it arrived after prev_t0, by t1
      }
    }
    prev_t0 = t0;
    deadline += period_ns_;
    const int64_t now = host_now_ns();
    if (deadline < now) deadline = now;  // a late read: the next one a period after it at most
    host_sleep_until(deadline);
  }
  cpu_ns_ = thread_cpu_ns() - cpu0;
  wall_ns_ = host_now_ns() - wall0;
}

void X11FramebufferObserver::start() {
  if (thread_.joinable()) return;
  seen_.reserve(1 << 16);
  read_ns_.reserve(1 << 18);
  windows_.reserve(1 << 16);
  stop_.store(false);
  thread_ = std::thread([this] { loop(); });
}

void X11FramebufferObserver::stop(int64_t grace_ns) {
  if (!thread_.joinable()) return;
  host_sleep_until(host_now_ns() + grace_ns);
  stop_.store(true);
  thread_.join();
}

std::optional<int64_t> X11FramebufferObserver::first_seen(uint64_t frame_id) const {
  const auto it = std::lower_bound(seen_.begin(), seen_.end(), frame_id,
                                   [](const auto& e, uint64_t id) { return e.first < id; });
  if (it == seen_.end() || it->first != frame_id) return std::nullopt;
  return it->second;
}

ScreenObserverInfo X11FramebufferObserver::info() const {
  ScreenObserverInfo o = describe(period_ns_);
  if (!shm_) {
    o.observes = "when the frame's id pattern is first in the X server's framebuffer (GetImage "
                 "of the window's rectangle on the root window, polled; the server has no usable "
                 "MIT-SHM): what a screen grab would see, not light from a panel";
  }
  o.available = true;
  o.polls = polls_;
  o.unreadable_polls = unreadable_;
  o.frames_seen = seen_.size();
  o.cpu_ns = cpu_ns_;
  o.wall_ns = wall_ns_;
  if (!read_ns_.empty()) {
    std::vector<int64_t> r = read_ns_;
    std::sort(r.begin(), r.end());
    o.read_p50_ns = r[r.size() / 2];
    o.read_p99_ns = r[std::min(r.size() - 1, r.size() * 99 / 100)];
  }
  if (!windows_.empty()) {
    std::vector<int64_t> w = windows_;
    std::sort(w.begin(), w.end());
    o.error_p50_ns = w[w.size() / 2];
    o.error_bound_ns = w.back();
  }
  return o;
}

}  // namespace latlab
#endif  // LATLAB_HAVE_XCB
