#include "capture/gl_interposer/gl_wayland.hpp"

#include <EGL/eglext.h>

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "capture/gl_interposer/interposer_core.hpp"

#define LATLAB_GL_EXPORT extern "C" __attribute__((visibility("default")))

namespace latlab::capture::glcap {
namespace {

struct State {
  std::mutex mu;
  std::map<EGLDisplay, void*> displays;       // -> its wl_display
  std::map<void*, void*> windows;             // wl_egl_window -> its wl_surface
  std::map<EGLSurface, EGLDisplay> surfaces;  // Wayland window surfaces -> their display
  WaylandSurfaces wayland;                    // keyed by EGLSurface
  std::set<EGLDisplay> x11_displays;          // displays on an X server
  // Their window surfaces -> the display and the X window.
  std::map<EGLSurface, std::pair<EGLDisplay, uint64_t>> x11_windows;
};

// Never destroyed: the program may still call EGL while the process exits.
State& state() {
  static auto* s = new State;
  return *s;
}

uint64_t key(EGLSurface s) { return reinterpret_cast<uint64_t>(s); }

// Whether `native` is a wl_display: its first word is libwayland's
// wl_display_interface (as Mesa tells a native display's platform), asked
// only where the program has libwayland-client loaded.
bool is_wl_display(void* native) {
  if (native == nullptr) return false;
  std::string why;
  const wl::Client* c = wl::client(why);
  return c != nullptr && *static_cast<const void* const*>(native) == c->display_interface;
}

void note_display(EGLDisplay dpy, void* wl_display) {
  if (dpy == EGL_NO_DISPLAY) return;
  std::lock_guard lock(state().mu);
  state().displays[dpy] = wl_display;
}

void note_x11_display(EGLDisplay dpy) {
  if (dpy == EGL_NO_DISPLAY) return;
  std::lock_guard lock(state().mu);
  state().x11_displays.insert(dpy);
}

// A window surface made on `window` (`platform`: by a platform call, where
// an X11 window is given as a Window*): kept when both are Wayland's, or
// its X window when the display is an X server's.
void note_surface(EGLDisplay dpy, EGLSurface surface, void* window, bool platform) {
  if (surface == EGL_NO_SURFACE || !enabled()) return;
  State& s = state();
  void* wl_display = nullptr;
  void* wl_surface = nullptr;
  {
    std::lock_guard lock(s.mu);
    if (s.x11_displays.count(dpy) != 0 && window != nullptr) {
      // The legacy call takes the Window itself, the platform call a pointer to it.
      s.x11_windows[surface] = {dpy, platform ? *static_cast<const uint64_t*>(window)
                                              : reinterpret_cast<uint64_t>(window)};
      return;
    }
    auto d = s.displays.find(dpy);
    auto w = s.windows.find(window);
    if (d == s.displays.end() || w == s.windows.end()) return;
    wl_display = d->second;
    wl_surface = w->second;
    s.surfaces[surface] = dpy;
  }
  // Binds the display's wp_presentation the first time: outside the lock.
  s.wayland.add(key(surface), wl_display, wl_surface);
}

void forget_surface(EGLSurface surface) {
  State& s = state();
  {
    std::lock_guard lock(s.mu);
    s.x11_windows.erase(surface);
    if (s.surfaces.erase(surface) == 0) return;
  }
  s.wayland.remove(key(surface));
}

// The program is letting `wl_display` go: nothing of latlab's may use it
// after. Its feedback is closed first, while the display's entry still
// holds it (a context may keep it past its surfaces); then the EGL displays
// on it, and their surfaces, are forgotten.
void display_disconnecting(void* wl_display) {
  State& s = state();
  s.wayland.forget_display(wl_display);
  std::vector<EGLDisplay> on_it;
  {
    std::lock_guard lock(s.mu);
    for (const auto& [dpy, wl] : s.displays) {
      if (wl == wl_display) on_it.push_back(dpy);
    }
  }
  for (EGLDisplay dpy : on_it) wayland_display_terminated(dpy);
}

using DisconnectFn = void (*)(void*);
// What the program's dlsym found for wl_display_disconnect (a program that
// loaded libwayland-client privately), for the wrapper to forward to.
std::atomic<DisconnectFn> g_seen_disconnect{nullptr};

using GetPlatformDisplayExt = EGLDisplay (*)(EGLenum, void*, const EGLint*);
using CreatePlatformSurfaceExt = EGLSurface (*)(EGLDisplay, EGLConfig, void*, const EGLint*);
std::atomic<GetPlatformDisplayExt> g_get_platform_display_ext{nullptr};
std::atomic<CreatePlatformSurfaceExt> g_create_platform_surface_ext{nullptr};

EGLDisplay get_platform_display_ext(EGLenum platform, void* native, const EGLint* attribs) {
  const auto real = g_get_platform_display_ext.load();
  if (real == nullptr) return EGL_NO_DISPLAY;
  const EGLDisplay dpy = real(platform, native, attribs);
  if (enabled() && platform == EGL_PLATFORM_WAYLAND_EXT && native != nullptr)
    note_display(dpy, native);
  if (enabled() && platform == EGL_PLATFORM_X11_EXT) note_x11_display(dpy);
  return dpy;
}

EGLSurface create_platform_surface_ext(EGLDisplay dpy, EGLConfig config, void* window,
                                       const EGLint* attribs) {
  const auto real = g_create_platform_surface_ext.load();
  if (real == nullptr) return EGL_NO_SURFACE;
  const EGLSurface s = real(dpy, config, window, attribs);
  note_surface(dpy, s, window, true);
  return s;
}

}  // namespace

std::optional<WaylandSurfaces::Surface> wayland_surface_of(EGLSurface surface) {
  return state().wayland.find(key(surface));
}

std::optional<uint64_t> x11_window_of(EGLSurface surface) {
  State& s = state();
  std::lock_guard lock(s.mu);
  const auto it = s.x11_windows.find(surface);
  if (it == s.x11_windows.end()) return std::nullopt;
  return it->second.second;
}

void poll_wayland_feedback(std::vector<DisplayOutcome>& out) { state().wayland.poll_all(out); }

void wayland_display_terminated(EGLDisplay dpy) {
  State& s = state();
  std::vector<EGLSurface> gone;
  {
    std::lock_guard lock(s.mu);
    for (const auto& [surface, d] : s.surfaces) {
      if (d == dpy) gone.push_back(surface);
    }
    for (const auto& [surface, on] : s.x11_windows) {
      if (on.first == dpy) gone.push_back(surface);
    }
    s.displays.erase(dpy);
    s.x11_displays.erase(dpy);
  }
  for (EGLSurface surface : gone) forget_surface(surface);
}

}  // namespace latlab::capture::glcap

using namespace latlab::capture::glcap;  // NOLINT: the exported C functions below

LATLAB_GL_EXPORT EGLDisplay eglGetDisplay(EGLNativeDisplayType native) {
  static const auto real = next<EGLDisplay (*)(EGLNativeDisplayType)>("eglGetDisplay");
  if (real == nullptr) return EGL_NO_DISPLAY;
  const EGLDisplay dpy = real(native);
  if (enabled() && is_wl_display(native)) {
    note_display(dpy, native);
  } else if (enabled() && native != nullptr) {
    note_x11_display(dpy);  // a Display* (Mesa's default platform when not Wayland's)
  }
  return dpy;
}

LATLAB_GL_EXPORT EGLDisplay eglGetPlatformDisplay(EGLenum platform, void* native,
                                                  const EGLAttrib* attribs) {
  static const auto real =
      next<EGLDisplay (*)(EGLenum, void*, const EGLAttrib*)>("eglGetPlatformDisplay");
  if (real == nullptr) return EGL_NO_DISPLAY;
  const EGLDisplay dpy = real(platform, native, attribs);
  if (enabled() && platform == EGL_PLATFORM_WAYLAND_KHR && native != nullptr)
    note_display(dpy, native);
  if (enabled() && platform == EGL_PLATFORM_X11_KHR) note_x11_display(dpy);
  return dpy;
}

LATLAB_GL_EXPORT void* wl_egl_window_create(void* surface, int width, int height) {
  static const auto real = next<void* (*)(void*, int, int)>("wl_egl_window_create");
  if (real == nullptr) return nullptr;
  void* window = real(surface, width, height);
  if (window != nullptr && enabled()) {
    std::lock_guard lock(state().mu);
    state().windows[window] = surface;
  }
  return window;
}

LATLAB_GL_EXPORT void wl_egl_window_destroy(void* window) {
  static const auto real = next<void (*)(void*)>("wl_egl_window_destroy");
  {
    std::lock_guard lock(state().mu);
    state().windows.erase(window);
  }
  if (real != nullptr) real(window);
}

LATLAB_GL_EXPORT EGLSurface eglCreateWindowSurface(EGLDisplay dpy, EGLConfig config,
                                                   EGLNativeWindowType window,
                                                   const EGLint* attribs) {
  static const auto real =
      next<EGLSurface (*)(EGLDisplay, EGLConfig, EGLNativeWindowType, const EGLint*)>(
          "eglCreateWindowSurface");
  if (real == nullptr) return EGL_NO_SURFACE;
  const EGLSurface s = real(dpy, config, window, attribs);
  note_surface(dpy, s, reinterpret_cast<void*>(window), false);
  return s;
}

LATLAB_GL_EXPORT EGLSurface eglCreatePlatformWindowSurface(EGLDisplay dpy, EGLConfig config,
                                                           void* window, const EGLAttrib* attribs) {
  static const auto real = next<EGLSurface (*)(EGLDisplay, EGLConfig, void*, const EGLAttrib*)>(
      "eglCreatePlatformWindowSurface");
  if (real == nullptr) return EGL_NO_SURFACE;
  const EGLSurface s = real(dpy, config, window, attribs);
  note_surface(dpy, s, window, true);
  return s;
}

LATLAB_GL_EXPORT EGLBoolean eglDestroySurface(EGLDisplay dpy, EGLSurface surface) {
  static const auto real = next<EGLBoolean (*)(EGLDisplay, EGLSurface)>("eglDestroySurface");
  forget_surface(surface);
  return real != nullptr ? real(dpy, surface) : EGL_FALSE;
}

LATLAB_GL_EXPORT void wl_display_disconnect(void* display) {
  static const auto found = next<DisconnectFn>("wl_display_disconnect");
  const DisconnectFn real = found != nullptr ? found : g_seen_disconnect.load();
  if (display != nullptr) display_disconnecting(display);
  if (real != nullptr) real(display);
}

namespace latlab::capture::glcap {

void* wayland_wrapper(const char* name, void* real) {
  struct Own {
    const char* name;
    void* own;
  };
  static const Own kOwn[] = {
      {"eglGetDisplay", reinterpret_cast<void*>(&eglGetDisplay)},
      {"eglGetPlatformDisplay", reinterpret_cast<void*>(&eglGetPlatformDisplay)},
      {"wl_egl_window_create", reinterpret_cast<void*>(&wl_egl_window_create)},
      {"wl_egl_window_destroy", reinterpret_cast<void*>(&wl_egl_window_destroy)},
      {"eglCreateWindowSurface", reinterpret_cast<void*>(&eglCreateWindowSurface)},
      {"eglCreatePlatformWindowSurface", reinterpret_cast<void*>(&eglCreatePlatformWindowSurface)},
      {"eglDestroySurface", reinterpret_cast<void*>(&eglDestroySurface)},
      {"wl_display_disconnect", reinterpret_cast<void*>(&wl_display_disconnect)},
  };
  for (const auto& o : kOwn) {
    if (std::strcmp(o.name, name) != 0) continue;
    if (real == o.own) return nullptr;
    if (o.own == reinterpret_cast<void*>(&wl_display_disconnect)) {
      DisconnectFn none = nullptr;
      g_seen_disconnect.compare_exchange_strong(none, reinterpret_cast<DisconnectFn>(real));
    }
    return o.own;
  }
  if (std::strcmp(name, "eglGetPlatformDisplayEXT") == 0) {
    g_get_platform_display_ext.store(reinterpret_cast<GetPlatformDisplayExt>(real));
    return reinterpret_cast<void*>(&get_platform_display_ext);
  }
  if (std::strcmp(name, "eglCreatePlatformWindowSurfaceEXT") == 0) {
    g_create_platform_surface_ext.store(reinterpret_cast<CreatePlatformSurfaceExt>(real));
    return reinterpret_cast<void*>(&create_platform_surface_ext);
  }
  return nullptr;
}

}  // namespace latlab::capture::glcap
