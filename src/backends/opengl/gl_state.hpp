// The OpenGL backend's private state: EGL handles and the GL entry points,
// loaded once per context through eglGetProcAddress (core functions too:
// EGL_KHR_get_all_proc_addresses), so desktop GL and GLES share one table
// and nothing binds to libGL's or libGLESv2's symbols at link time.
#pragma once

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/glcorearb.h>

#include <mutex>
#include <string>

#include "latlab/opengl.hpp"

// GL_EXT_disjoint_timer_query (GLES); not in glcorearb.h.
#ifndef GL_GPU_DISJOINT_EXT
#define GL_GPU_DISJOINT_EXT 0x8FBB
#endif

namespace latlab::gl {

// The entry points latlab uses. Every one is required (create fails naming
// the first absent one), except the KHR_debug ones (debug_callback may be null).
struct Api {
  PFNGLGETSTRINGPROC GetString = nullptr;
  PFNGLGETSTRINGIPROC GetStringi = nullptr;
  PFNGLGETINTEGERVPROC GetIntegerv = nullptr;
  PFNGLGETINTEGER64VPROC GetInteger64v = nullptr;
  PFNGLGETERRORPROC GetError = nullptr;
  PFNGLFLUSHPROC Flush = nullptr;
  PFNGLFINISHPROC Finish = nullptr;
  PFNGLGENQUERIESPROC GenQueries = nullptr;
  PFNGLDELETEQUERIESPROC DeleteQueries = nullptr;
  PFNGLQUERYCOUNTERPROC QueryCounter = nullptr;           // glQueryCounter / glQueryCounterEXT
  PFNGLBEGINQUERYPROC BeginQuery = nullptr;               // GL_TIME_ELAPSED (GLES: glBeginQueryEXT)
  PFNGLENDQUERYPROC EndQuery = nullptr;
  PFNGLGETQUERYIVPROC GetQueryiv = nullptr;               // glGetQueryiv(/EXT)
  PFNGLGETQUERYOBJECTUIVPROC GetQueryObjectuiv = nullptr; // GLES: core in 3.0
  PFNGLGETQUERYOBJECTUI64VPROC GetQueryObjectui64v = nullptr;  // GLES: glGetQueryObjectui64vEXT
  PFNGLFENCESYNCPROC FenceSync = nullptr;
  PFNGLCLIENTWAITSYNCPROC ClientWaitSync = nullptr;
  PFNGLDELETESYNCPROC DeleteSync = nullptr;
  PFNGLCREATESHADERPROC CreateShader = nullptr;
  PFNGLSHADERSOURCEPROC ShaderSource = nullptr;
  PFNGLCOMPILESHADERPROC CompileShader = nullptr;
  PFNGLGETSHADERIVPROC GetShaderiv = nullptr;
  PFNGLGETSHADERINFOLOGPROC GetShaderInfoLog = nullptr;
  PFNGLDELETESHADERPROC DeleteShader = nullptr;
  PFNGLCREATEPROGRAMPROC CreateProgram = nullptr;
  PFNGLATTACHSHADERPROC AttachShader = nullptr;
  PFNGLLINKPROGRAMPROC LinkProgram = nullptr;
  PFNGLGETPROGRAMIVPROC GetProgramiv = nullptr;
  PFNGLGETPROGRAMINFOLOGPROC GetProgramInfoLog = nullptr;
  PFNGLDELETEPROGRAMPROC DeleteProgram = nullptr;
  PFNGLUSEPROGRAMPROC UseProgram = nullptr;
  PFNGLGETUNIFORMLOCATIONPROC GetUniformLocation = nullptr;
  PFNGLUNIFORM1UIPROC Uniform1ui = nullptr;
  PFNGLUNIFORM2UIPROC Uniform2ui = nullptr;
  PFNGLUNIFORM1IPROC Uniform1i = nullptr;
  PFNGLGENBUFFERSPROC GenBuffers = nullptr;
  PFNGLDELETEBUFFERSPROC DeleteBuffers = nullptr;
  PFNGLBINDBUFFERPROC BindBuffer = nullptr;
  PFNGLBUFFERDATAPROC BufferData = nullptr;
  PFNGLBINDBUFFERBASEPROC BindBufferBase = nullptr;
  PFNGLDISPATCHCOMPUTEPROC DispatchCompute = nullptr;     // null: no compute shaders
  PFNGLMEMORYBARRIERPROC MemoryBarrier = nullptr;
  PFNGLGENTEXTURESPROC GenTextures = nullptr;
  PFNGLDELETETEXTURESPROC DeleteTextures = nullptr;
  PFNGLBINDTEXTUREPROC BindTexture = nullptr;
  PFNGLTEXSTORAGE2DPROC TexStorage2D = nullptr;
  PFNGLTEXPARAMETERIPROC TexParameteri = nullptr;
  PFNGLACTIVETEXTUREPROC ActiveTexture = nullptr;
  PFNGLGENFRAMEBUFFERSPROC GenFramebuffers = nullptr;
  PFNGLDELETEFRAMEBUFFERSPROC DeleteFramebuffers = nullptr;
  PFNGLBINDFRAMEBUFFERPROC BindFramebuffer = nullptr;
  PFNGLFRAMEBUFFERTEXTURE2DPROC FramebufferTexture2D = nullptr;
  PFNGLCHECKFRAMEBUFFERSTATUSPROC CheckFramebufferStatus = nullptr;
  PFNGLCLEARCOLORPROC ClearColor = nullptr;
  PFNGLCLEARPROC Clear = nullptr;
  PFNGLGENVERTEXARRAYSPROC GenVertexArrays = nullptr;
  PFNGLDELETEVERTEXARRAYSPROC DeleteVertexArrays = nullptr;
  PFNGLBINDVERTEXARRAYPROC BindVertexArray = nullptr;
  PFNGLVIEWPORTPROC Viewport = nullptr;
  PFNGLDRAWARRAYSPROC DrawArrays = nullptr;
  PFNGLDEBUGMESSAGECALLBACKPROC DebugMessageCallback = nullptr;  // KHR_debug; may be null
  PFNGLDEBUGMESSAGECONTROLPROC DebugMessageControl = nullptr;
  PFNGLENABLEPROC Enable = nullptr;

  // Every entry point of the workloads (GlWorkload) was found.
  bool workload_loaded = false;

  // Loads the table for the current context; `gles`: the EXT names of the
  // timer-query functions. Error names the first missing entry point;
  // `timing_only` (a program's context): only those timing needs count.
  Result<void> load(bool gles, bool timing_only = false);
};

// A GL extension list lookup (glGetStringi), context current.
bool has_extension(const Api& api, const char* name);

// glGetError until clear; the names of what it returned ("" when none).
std::string drain_errors(const Api& api);

// The name of an EGL error code, e.g. "EGL_BAD_ACCESS".
std::string egl_error_name(EGLint code);

// Timer choice (gl_timer.cpp). `asked` unless automatic; then
// LATLAB_GL_TIMER when set (error: not auto|timestamp|elapsed).
Result<GlTimer> wished_timer(GlTimer asked);
// The timer `wish` gives on a probed device; nullopt: none it accepts.
std::optional<GlTimer> resolve_timer(const GlDeviceReport& r, GlTimer wish);
// Sets r.timer and, for GL_TIME_ELAPSED or no timer, lists "timestamps"
// first among r.missing with what that costs.
void note_timer(GlDeviceReport& r, GlTimer wish);
// The cause of GL_TIME_ELAPSED on a device: no GL_TIMESTAMP bits, or asked for.
std::string why_elapsed(const GlDeviceReport& r);

}  // namespace latlab::gl

namespace latlab {

namespace gl {
// A context sharing `ctx`'s objects (sync objects among them), of the same
// kind, current nowhere; EGL_NO_CONTEXT with why in `why`. The caller
// destroys it (eglDestroyContext).
EGLContext create_shared_context(GlContext& ctx, std::string& why);
}  // namespace gl

struct GlContext::State {
  EGLDisplay display = EGL_NO_DISPLAY;
  EGLContext context = EGL_NO_CONTEXT;
  // False for a program's context (GlContext::attach_current): latlab never
  // destroys it, makes it current or releases it.
  bool owns_context = true;
  EGLContext calib_context = EGL_NO_CONTEXT;  // sample_calibration's own context
  EGLSurface calib_surface =
      EGL_NO_SURFACE;             // its 1x1 pbuffer where the display has no surfaceless contexts
  std::string calib_unavailable;  // why there is no calibration context (attached only)
  std::mutex calib_mutex;
  gl::Api api;  // loaded with `context` current; EGL's entry points serve every context
  // The GL_TIME_ELAPSED query open on `context` (one per context in GL):
  // its slots and begin slot; null owner: none. Touched only where the
  // context is current.
  const GlTimestampSlots* elapsed_owner = nullptr;
  uint32_t elapsed_slot = 0;
};

}  // namespace latlab
