// latlab_gl_swap_probe [SWAPS]: a GL program that checks, around each of its
// eglSwapBuffers calls, the state a swap interposer must leave alone (run
// under `latlab capture` by tests/e2e/capture_gl_test.cpp):
//  - a GL error the program left pending before the swap is still there
//    after it, and a swap with none pending leaves none;
//  - the buffer it bound to GL_QUERY_BUFFER (GL 4.4) is still bound;
//  - a GL_TIME_ELAPSED query it keeps open across the swap ends cleanly;
//  - a failed swap's EGL error is what eglGetError returns.
// On an EGL pbuffer (Mesa's surfaceless platform, else the default display):
// no window system needed; a pbuffer's swap does nothing, so its cost is
// the swap wrappers' own. Prints the swap's CPU time (min, median ns).
// Exit: 0 all held, 1 a check failed (said which), 77 no context could be
// made (the test skips).
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/glcorearb.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

namespace {

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

template <class F>
F load(const char* name) {
  return reinterpret_cast<F>(eglGetProcAddress(name));
}

int skip(const char* why) {
  std::printf("gl_swap_probe: skipped: %s (EGL error 0x%x)\n", why,
              static_cast<unsigned>(eglGetError()));
  return 77;
}

int fail(int swap, const char* what, unsigned got) {
  std::printf("gl_swap_probe: swap %d: %s (got 0x%x)\n", swap, what, got);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const int swaps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  EGLDisplay dpy = EGL_NO_DISPLAY;
  const char* client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  auto platform_display = load<PFNEGLGETPLATFORMDISPLAYEXTPROC>("eglGetPlatformDisplayEXT");
  if (client != nullptr && std::strstr(client, "EGL_MESA_platform_surfaceless") != nullptr &&
      platform_display != nullptr)
    dpy = platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
  if (dpy == EGL_NO_DISPLAY) dpy = eglGetDisplay(EGL_DEFAULT_DISPLAY);
  if (dpy == EGL_NO_DISPLAY || eglInitialize(dpy, nullptr, nullptr) != EGL_TRUE)
    return skip("no EGL display");
  if (eglBindAPI(EGL_OPENGL_API) != EGL_TRUE) return skip("no desktop GL through EGL");
  const EGLint config_attribs[] = {EGL_SURFACE_TYPE,
                                   EGL_PBUFFER_BIT,
                                   EGL_RENDERABLE_TYPE,
                                   EGL_OPENGL_BIT,
                                   EGL_RED_SIZE,
                                   8,
                                   EGL_GREEN_SIZE,
                                   8,
                                   EGL_BLUE_SIZE,
                                   8,
                                   EGL_NONE};
  EGLConfig config = nullptr;
  EGLint configs = 0;
  if (eglChooseConfig(dpy, config_attribs, &config, 1, &configs) != EGL_TRUE || configs < 1)
    return skip("no pbuffer config for desktop GL");
  const EGLint pbuffer_attribs[] = {EGL_WIDTH, 64, EGL_HEIGHT, 64, EGL_NONE};
  EGLSurface surface = eglCreatePbufferSurface(dpy, config, pbuffer_attribs);
  if (surface == EGL_NO_SURFACE) return skip("no pbuffer");
  EGLContext ctx = eglCreateContext(dpy, config, EGL_NO_CONTEXT, nullptr);
  if (ctx == EGL_NO_CONTEXT) return skip("no GL context");
  if (eglMakeCurrent(dpy, surface, surface, ctx) != EGL_TRUE) return skip("eglMakeCurrent");

  auto GetError = load<PFNGLGETERRORPROC>("glGetError");
  auto Enable = load<PFNGLENABLEPROC>("glEnable");
  auto Clear = load<PFNGLCLEARPROC>("glClear");
  auto GetIntegerv = load<PFNGLGETINTEGERVPROC>("glGetIntegerv");
  auto GenBuffers = load<PFNGLGENBUFFERSPROC>("glGenBuffers");
  auto BindBuffer = load<PFNGLBINDBUFFERPROC>("glBindBuffer");
  auto BufferData = load<PFNGLBUFFERDATAPROC>("glBufferData");
  auto GenQueries = load<PFNGLGENQUERIESPROC>("glGenQueries");
  auto BeginQuery = load<PFNGLBEGINQUERYPROC>("glBeginQuery");
  auto EndQuery = load<PFNGLENDQUERYPROC>("glEndQuery");
  GLint major = 0;
  GLint minor = 0;
  GetIntegerv(GL_MAJOR_VERSION, &major);
  GetIntegerv(GL_MINOR_VERSION, &minor);
  if (major * 10 + minor < 33) return skip("GL before 3.3");
  const bool query_buffer = major * 10 + minor >= 44;
  GLuint buffer = 0;
  GenBuffers(1, &buffer);
  if (query_buffer) {
    BindBuffer(GL_QUERY_BUFFER, buffer);
    BufferData(GL_QUERY_BUFFER, 64, nullptr, GL_DYNAMIC_COPY);
  }
  GLuint query = 0;
  GenQueries(1, &query);
  if (const GLenum e = GetError(); e != GL_NO_ERROR) return fail(-1, "set-up left an error", e);

  std::vector<int64_t> cost;
  for (int i = 0; i < swaps; ++i) {
    Clear(GL_COLOR_BUFFER_BIT);
    BeginQuery(GL_TIME_ELAPSED, query);
    // Even swaps: an error left pending must survive the swap. Odd swaps: no
    // error before, none after (GL keeps only the first error, so a pending
    // one would hide an error made in the swap).
    const bool pending = i % 2 == 0;
    if (pending) Enable(0x7fff);  // not a capability: GL_INVALID_ENUM
    const int64_t t0 = now_ns();
    const EGLBoolean ok = eglSwapBuffers(dpy, surface);
    cost.push_back(now_ns() - t0);
    if (ok != EGL_TRUE) return fail(i, "eglSwapBuffers failed", static_cast<unsigned>(ok));
    if (const EGLint e = eglGetError(); e != EGL_SUCCESS)
      return fail(i, "EGL error after a good swap", static_cast<unsigned>(e));
    if (pending) {
      if (const GLenum e = GetError(); e != GL_INVALID_ENUM)
        return fail(i, "the program's pending GL_INVALID_ENUM is gone", e);
    }
    if (const GLenum e = GetError(); e != GL_NO_ERROR)
      return fail(i, "a GL error made in the swap", e);
    EndQuery(GL_TIME_ELAPSED);
    if (const GLenum e = GetError(); e != GL_NO_ERROR)
      return fail(i, "the program's GL_TIME_ELAPSED query did not end cleanly", e);
    if (query_buffer) {
      GLint bound = 0;
      GetIntegerv(GL_QUERY_BUFFER_BINDING, &bound);
      if (bound != static_cast<GLint>(buffer))
        return fail(i, "GL_QUERY_BUFFER binding changed", static_cast<unsigned>(bound));
    }
  }
  // A failed swap: its EGL error is the last one.
  if (eglSwapBuffers(dpy, EGL_NO_SURFACE) != EGL_FALSE)
    return fail(swaps, "a swap of no surface succeeded", 1);
  if (const EGLint e = eglGetError(); e != EGL_BAD_SURFACE)
    return fail(swaps, "EGL_BAD_SURFACE of the failed swap is gone", static_cast<unsigned>(e));

  std::sort(cost.begin(), cost.end());
  std::printf(
      "gl_swap_probe: ok, %d swaps (query buffer %s); eglSwapBuffers ns min %lld median %lld\n",
      swaps, query_buffer ? "checked" : "absent", static_cast<long long>(cost.front()),
      static_cast<long long>(cost[cost.size() / 2]));
  // Destroyed while current: what is available is read then.
  eglDestroyContext(dpy, ctx);
  eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  eglDestroySurface(dpy, surface);
  eglTerminate(dpy);
  return 0;
}
