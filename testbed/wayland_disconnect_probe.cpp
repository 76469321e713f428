// latlab_wayland_disconnect_probe [FRAMES] [--dlsym]: an EGL program on a
// Wayland compositor that lets its display go as careless programs do:
// FRAMES swaps (swap interval 0, on a surface with no role, so the
// compositor shows none of them and many feedback requests are still
// awaited), then wl_display_disconnect without eglTerminate, then 50 ms of
// life (the capture interposer's thread polls every 2 ms: it must not touch
// the freed display). --dlsym: the disconnect is looked up with dlsym, as
// programs that load libwayland-client themselves (SDL) do. Run under
// `latlab capture` by tests/e2e/capture_wayland_test.cpp.
// Exit: 0 done (prints "swaps N"), 1 a call failed (said which), 77 no
// compositor or no EGL context (the test skips).
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <dlfcn.h>
#include <wayland-client.h>
#include <wayland-egl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

wl_compositor* g_compositor = nullptr;

void on_global(void*, wl_registry* registry, uint32_t name, const char* iface, uint32_t) {
  if (std::strcmp(iface, wl_compositor_interface.name) == 0) {
    g_compositor =
        static_cast<wl_compositor*>(wl_registry_bind(registry, name, &wl_compositor_interface, 1));
  }
}
void on_global_remove(void*, wl_registry*, uint32_t) {}
const wl_registry_listener kRegistryListener = {on_global, on_global_remove};

int fail(const char* what) {
  std::fprintf(stderr, "wayland_disconnect_probe: %s failed (EGL error 0x%x)\n", what,
               static_cast<unsigned>(eglGetError()));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const int frames = argc > 1 ? std::atoi(argv[1]) : 120;
  const bool by_dlsym = argc > 2 && std::strcmp(argv[2], "--dlsym") == 0;
  wl_display* display = wl_display_connect(nullptr);
  if (display == nullptr) {
    std::printf("wayland_disconnect_probe: skipped: no Wayland compositor\n");
    return 77;
  }
  wl_registry* registry = wl_display_get_registry(display);
  wl_registry_add_listener(registry, &kRegistryListener, nullptr);
  wl_display_roundtrip(display);
  if (g_compositor == nullptr) return fail("binding wl_compositor");
  wl_surface* surface = wl_compositor_create_surface(g_compositor);
  EGLDisplay dpy = eglGetPlatformDisplay(EGL_PLATFORM_WAYLAND_KHR, display, nullptr);
  if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, nullptr, nullptr)) {
    std::printf("wayland_disconnect_probe: skipped: no EGL display on Wayland\n");
    return 77;
  }
  eglBindAPI(EGL_OPENGL_ES_API);
  const EGLint config_attribs[] = {EGL_SURFACE_TYPE, EGL_WINDOW_BIT, EGL_RENDERABLE_TYPE,
                                   EGL_OPENGL_ES2_BIT, EGL_NONE};
  EGLConfig config = nullptr;
  EGLint configs = 0;
  if (!eglChooseConfig(dpy, config_attribs, &config, 1, &configs) || configs == 0) {
    std::printf("wayland_disconnect_probe: skipped: no ES2 window config\n");
    return 77;
  }
  const EGLint context_attribs[] = {EGL_CONTEXT_CLIENT_VERSION, 2, EGL_NONE};
  EGLContext context = eglCreateContext(dpy, config, EGL_NO_CONTEXT, context_attribs);
  if (context == EGL_NO_CONTEXT) return fail("eglCreateContext");
  wl_egl_window* window = wl_egl_window_create(surface, 64, 64);
  EGLSurface egl_surface =
      eglCreateWindowSurface(dpy, config, reinterpret_cast<EGLNativeWindowType>(window), nullptr);
  if (egl_surface == EGL_NO_SURFACE) return fail("eglCreateWindowSurface");
  if (!eglMakeCurrent(dpy, egl_surface, egl_surface, context)) return fail("eglMakeCurrent");
  eglSwapInterval(dpy, 0);  // no role, no frame callbacks: never wait for one
  using Clear = void (*)(unsigned);
  const auto clear = reinterpret_cast<Clear>(eglGetProcAddress("glClear"));
  int swaps = 0;
  for (; swaps < frames; ++swaps) {
    if (clear != nullptr) clear(0x4000);  // GL_COLOR_BUFFER_BIT
    if (!eglSwapBuffers(dpy, egl_surface)) return fail("eglSwapBuffers");
  }
  using Disconnect = void (*)(wl_display*);
  Disconnect disconnect = &wl_display_disconnect;
  if (by_dlsym) {
    disconnect = reinterpret_cast<Disconnect>(dlsym(RTLD_DEFAULT, "wl_display_disconnect"));
    if (disconnect == nullptr) return fail("dlsym(wl_display_disconnect)");
  }
  disconnect(display);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::printf("swaps %d\n", swaps);
  std::fflush(stdout);
  return 0;
}
