// A GL program that makes its own EGL display, a 512x512 pbuffer and a
// GLES 3 context, current on its thread, and then attaches latlab: zones
// around its own clears, the stat table and a Perfetto trace. The lines that
// call latlab are marked "latlab:".
//
// Usage: gl_attach [trace.json]. Exit 0 on success, 1 on a GL or latlab
// error, 3 when no EGL display, pbuffer or GLES 3 context can be made.
#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <cstdio>
#include <string>

#include "latlab/profiler_opengl.hpp"

namespace {

// GLES entry points the program uses, through eglGetProcAddress.
using ClearColorFn = void (*)(float, float, float, float);
using ClearFn = void (*)(unsigned);
using FinishFn = void (*)();
using FenceSyncFn = void* (*)(unsigned, unsigned);
using ClientWaitSyncFn = unsigned (*)(void*, unsigned, unsigned long long);
using DeleteSyncFn = void (*)(void*);
constexpr unsigned kColorBufferBit = 0x4000;       // GL_COLOR_BUFFER_BIT
constexpr unsigned kSyncGpuCommandsDone = 0x9117;  // GL_SYNC_GPU_COMMANDS_COMPLETE
constexpr unsigned kSyncFlush = 0x1;               // GL_SYNC_FLUSH_COMMANDS_BIT

// The program's own EGL objects, none of them latlab's.
struct Program {
  EGLDisplay display = EGL_NO_DISPLAY;
  EGLSurface surface = EGL_NO_SURFACE;
  EGLContext context = EGL_NO_CONTEXT;

  ~Program() {
    if (display == EGL_NO_DISPLAY) return;
    eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (context != EGL_NO_CONTEXT) eglDestroyContext(display, context);
    if (surface != EGL_NO_SURFACE) eglDestroySurface(display, surface);
  }

  bool create() {
    auto get_display = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
        eglGetProcAddress("eglGetPlatformDisplayEXT"));
    auto query_devices =
        reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    EGLDeviceEXT device = nullptr;
    EGLint n = 0;
    if (get_display != nullptr && query_devices != nullptr &&
        query_devices(1, &device, &n) == EGL_TRUE && n > 0)
      display = get_display(EGL_PLATFORM_DEVICE_EXT, device, nullptr);
    if (display == EGL_NO_DISPLAY && get_display != nullptr)
      display = get_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    if (display == EGL_NO_DISPLAY || eglInitialize(display, nullptr, nullptr) != EGL_TRUE)
      return false;
    eglBindAPI(EGL_OPENGL_ES_API);
    const EGLint config_attrs[] = {EGL_RENDERABLE_TYPE,
                                   EGL_OPENGL_ES3_BIT,
                                   EGL_SURFACE_TYPE,
                                   EGL_PBUFFER_BIT,
                                   EGL_RED_SIZE,
                                   8,
                                   EGL_NONE};
    EGLConfig config = nullptr;
    if (eglChooseConfig(display, config_attrs, &config, 1, &n) != EGL_TRUE || n == 0) return false;
    const EGLint pbuffer_attrs[] = {EGL_WIDTH, 512, EGL_HEIGHT, 512, EGL_NONE};
    surface = eglCreatePbufferSurface(display, config, pbuffer_attrs);
    const EGLint context_attrs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 0,
                                    EGL_NONE};
    context = eglCreateContext(display, config, EGL_NO_CONTEXT, context_attrs);
    return surface != EGL_NO_SURFACE && context != EGL_NO_CONTEXT &&
           eglMakeCurrent(display, surface, surface, context) == EGL_TRUE;
  }
};

int fail(const char* what, const std::string& why) {
  std::fprintf(stderr, "gl_attach: %s: %s\n", what, why.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Program p;
  if (!p.create()) {
    std::fprintf(stderr, "gl_attach: no EGL display with a GLES 3 pbuffer context\n");
    return 3;
  }
  const auto clear_color = reinterpret_cast<ClearColorFn>(eglGetProcAddress("glClearColor"));
  const auto clear = reinterpret_cast<ClearFn>(eglGetProcAddress("glClear"));
  const auto finish = reinterpret_cast<FinishFn>(eglGetProcAddress("glFinish"));
  const auto fence_sync = reinterpret_cast<FenceSyncFn>(eglGetProcAddress("glFenceSync"));
  const auto client_wait =
      reinterpret_cast<ClientWaitSyncFn>(eglGetProcAddress("glClientWaitSync"));
  const auto delete_sync = reinterpret_cast<DeleteSyncFn>(eglGetProcAddress("glDeleteSync"));
  constexpr int kFrames = 24;
  constexpr int kInFlight = 2;  // the program keeps two frames on the GPU
  void* fences[kInFlight] = {nullptr, nullptr};

  // latlab: the context current on this thread, its profiler and clock sync
  auto gpu = latlab::gl::attach_current({.name = "gles", .frames_in_flight = kInFlight});
  if (!gpu) return fail("attach", gpu.error().message);
  if (argc > 1) {
    if (auto t = (*gpu)->trace(argv[1]); !t) return fail("trace", t.error().message);  // latlab
  }
  latlab::GlContext* gl = (*gpu)->context();  // latlab: the stream zones take

  for (int frame = 0; frame < kFrames; ++frame) {
    if (void*& f = fences[frame % kInFlight]; f != nullptr) {
      client_wait(f, kSyncFlush, ~0ull);
      delete_sync(f);
      f = nullptr;
    }
    {
      LATLAB_GPU_ZONE(*gpu, gl, "frame");  // latlab
      {
        LATLAB_GPU_ZONE(*gpu, gl, "clear x1");  // latlab
        clear_color(0.2f, 0.3f, 0.4f, 1.0f);
        clear(kColorBufferBit);
      }
      {
        LATLAB_GPU_ZONE(*gpu, gl, "clear x8");  // latlab
        for (int i = 0; i < 8; ++i) {
          clear_color(0.1f * static_cast<float>(i), 0.3f, 0.4f, 1.0f);
          clear(kColorBufferBit);
        }
      }
    }
    fences[frame % kInFlight] = fence_sync(kSyncGpuCommandsDone, 0);
    eglSwapBuffers(p.display, p.surface);  // a pbuffer: flushes, shows nothing
    (*gpu)->frame();                       // latlab: collects what is ready, never waits
  }
  finish();
  for (void* f : fences) {
    if (f != nullptr) delete_sync(f);
  }
  // latlab: the last frames, now that the GPU is done; closes the trace
  if (auto done = (*gpu)->finish(); !done) return fail("trace", done.error().message);
  std::printf("%s", (*gpu)->stat_table().c_str());  // latlab
  const latlab::ClockSync& clock = (*gpu)->clock();  // latlab
  std::printf("renderer: %s; clock: %s\n", gl->report().renderer.c_str(),
              clock.available() ? clock.method().c_str() : clock.reason().c_str());
  if (argc > 1) std::printf("trace: %s (%zu spans)\n", argv[1], (*gpu)->trace_spans());
  // latlab: every zone timed
  return (*gpu)->counters().zones_ok == 3u * kFrames ? 0 : fail("zones", "not every zone was timed");
}
