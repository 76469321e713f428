// Loading the GL entry points through eglGetProcAddress; GL and EGL error names.
#include <cstring>
#include <string>

#include "backends/opengl/gl_state.hpp"

namespace latlab::gl {
namespace {

template <class Fn>
bool load_one(Fn& fn, const char* name, const char* alt = nullptr) {
  fn = reinterpret_cast<Fn>(eglGetProcAddress(name));
  if (fn == nullptr && alt != nullptr) fn = reinterpret_cast<Fn>(eglGetProcAddress(alt));
  return fn != nullptr;
}

// Keeps the first name whose entry point was missing.
void note_missing(const char*& missing, bool ok, const char* name) {
  if (!ok && missing == nullptr) missing = name;
}

// The entry points every use needs; the first missing one, or null.
const char* load_core(Api& api) {
  const char* missing = nullptr;
#define LATLAB_GL_LOAD(fn) note_missing(missing, load_one(api.fn, "gl" #fn), "gl" #fn)
  LATLAB_GL_LOAD(GetString);
  LATLAB_GL_LOAD(GetStringi);
  LATLAB_GL_LOAD(GetIntegerv);
  LATLAB_GL_LOAD(GetInteger64v);
  LATLAB_GL_LOAD(GetError);
  LATLAB_GL_LOAD(Flush);
  LATLAB_GL_LOAD(Finish);
  LATLAB_GL_LOAD(GenQueries);
  LATLAB_GL_LOAD(DeleteQueries);
  LATLAB_GL_LOAD(GetQueryObjectuiv);
  LATLAB_GL_LOAD(FenceSync);
  LATLAB_GL_LOAD(ClientWaitSync);
  LATLAB_GL_LOAD(DeleteSync);
  LATLAB_GL_LOAD(Enable);
#undef LATLAB_GL_LOAD
  return missing;
}

// The workloads' entry points: required of latlab's own contexts, optional
// on a program's (timing needs none of them). The first missing one, or null.
const char* load_workload(Api& api) {
  const char* missing = nullptr;
#define LATLAB_GL_LOAD(fn) note_missing(missing, load_one(api.fn, "gl" #fn), "gl" #fn)
  LATLAB_GL_LOAD(CreateShader);
  LATLAB_GL_LOAD(ShaderSource);
  LATLAB_GL_LOAD(CompileShader);
  LATLAB_GL_LOAD(GetShaderiv);
  LATLAB_GL_LOAD(GetShaderInfoLog);
  LATLAB_GL_LOAD(DeleteShader);
  LATLAB_GL_LOAD(CreateProgram);
  LATLAB_GL_LOAD(AttachShader);
  LATLAB_GL_LOAD(LinkProgram);
  LATLAB_GL_LOAD(GetProgramiv);
  LATLAB_GL_LOAD(GetProgramInfoLog);
  LATLAB_GL_LOAD(DeleteProgram);
  LATLAB_GL_LOAD(UseProgram);
  LATLAB_GL_LOAD(GetUniformLocation);
  LATLAB_GL_LOAD(Uniform1ui);
  LATLAB_GL_LOAD(Uniform2ui);
  LATLAB_GL_LOAD(Uniform1i);
  LATLAB_GL_LOAD(GenBuffers);
  LATLAB_GL_LOAD(DeleteBuffers);
  LATLAB_GL_LOAD(BindBuffer);
  LATLAB_GL_LOAD(BufferData);
  LATLAB_GL_LOAD(BindBufferBase);
  LATLAB_GL_LOAD(GenTextures);
  LATLAB_GL_LOAD(DeleteTextures);
  LATLAB_GL_LOAD(BindTexture);
  LATLAB_GL_LOAD(TexStorage2D);
  LATLAB_GL_LOAD(TexParameteri);
  LATLAB_GL_LOAD(ActiveTexture);
  LATLAB_GL_LOAD(GenFramebuffers);
  LATLAB_GL_LOAD(DeleteFramebuffers);
  LATLAB_GL_LOAD(BindFramebuffer);
  LATLAB_GL_LOAD(FramebufferTexture2D);
  LATLAB_GL_LOAD(CheckFramebufferStatus);
  LATLAB_GL_LOAD(ClearColor);
  LATLAB_GL_LOAD(Clear);
  LATLAB_GL_LOAD(GenVertexArrays);
  LATLAB_GL_LOAD(DeleteVertexArrays);
  LATLAB_GL_LOAD(BindVertexArray);
  LATLAB_GL_LOAD(Viewport);
  LATLAB_GL_LOAD(DrawArrays);
#undef LATLAB_GL_LOAD
  return missing;
}

// Timer queries: core in desktop GL 3.3; EXT_disjoint_timer_query on GLES.
// The first missing one, or null.
const char* load_timer_queries(Api& api, bool gles) {
  const char* missing = nullptr;
  auto need = [&missing](bool ok, const char* name) { note_missing(missing, ok, name); };
  if (gles) {
    need(load_one(api.QueryCounter, "glQueryCounterEXT"), "glQueryCounterEXT");
    need(load_one(api.BeginQuery, "glBeginQueryEXT", "glBeginQuery"), "glBeginQueryEXT");
    need(load_one(api.EndQuery, "glEndQueryEXT", "glEndQuery"), "glEndQueryEXT");
    need(load_one(api.GetQueryiv, "glGetQueryivEXT", "glGetQueryiv"), "glGetQueryivEXT");
    need(load_one(api.GetQueryObjectui64v, "glGetQueryObjectui64vEXT"), "glGetQueryObjectui64vEXT");
  } else {
    need(load_one(api.QueryCounter, "glQueryCounter"), "glQueryCounter");
    need(load_one(api.BeginQuery, "glBeginQuery"), "glBeginQuery");
    need(load_one(api.EndQuery, "glEndQuery"), "glEndQuery");
    need(load_one(api.GetQueryiv, "glGetQueryiv"), "glGetQueryiv");
    need(load_one(api.GetQueryObjectui64v, "glGetQueryObjectui64v"), "glGetQueryObjectui64v");
  }
  return missing;
}

// Optional: compute (GL 4.3 / GLES 3.1) and KHR_debug.
void load_optional(Api& api, bool gles) {
  load_one(api.DispatchCompute, "glDispatchCompute");
  load_one(api.MemoryBarrier, "glMemoryBarrier");
  load_one(api.DebugMessageCallback, "glDebugMessageCallback",
           gles ? "glDebugMessageCallbackKHR" : nullptr);
  load_one(api.DebugMessageControl, "glDebugMessageControl",
           gles ? "glDebugMessageControlKHR" : nullptr);
}

}  // namespace

Result<void> Api::load(bool gles, bool timing_only) {
  const char* missing = load_core(*this);
  const char* missing_workload = load_workload(*this);
  const char* missing_timer = load_timer_queries(*this, gles);
  if (missing == nullptr) missing = missing_timer;
  load_optional(*this, gles);
  if (missing == nullptr && missing_workload != nullptr && !timing_only) missing = missing_workload;
  if (missing != nullptr) return make_error(std::string("the GL driver has no ") + missing);
  workload_loaded = missing_workload == nullptr;
  return {};
}

bool has_extension(const Api& api, const char* name) {
  GLint n = 0;
  api.GetIntegerv(GL_NUM_EXTENSIONS, &n);
  for (GLint i = 0; i < n; ++i) {
    const auto* e = reinterpret_cast<const char*>(api.GetStringi(GL_EXTENSIONS, static_cast<GLuint>(i)));
    if (e != nullptr && std::strcmp(e, name) == 0) return true;
  }
  return false;
}

std::string drain_errors(const Api& api) {
  std::string out;
  for (int i = 0; i < 16; ++i) {  // bounded: a lost context may report errors forever
    const GLenum e = api.GetError();
    if (e == GL_NO_ERROR) break;
    const char* name = e == GL_INVALID_ENUM                    ? "GL_INVALID_ENUM"
                       : e == GL_INVALID_VALUE                 ? "GL_INVALID_VALUE"
                       : e == GL_INVALID_OPERATION             ? "GL_INVALID_OPERATION"
                       : e == GL_OUT_OF_MEMORY                 ? "GL_OUT_OF_MEMORY"
                       : e == GL_INVALID_FRAMEBUFFER_OPERATION ? "GL_INVALID_FRAMEBUFFER_OPERATION"
                                                               : "GL error";
    out += (out.empty() ? "" : ", ") + std::string(name);
  }
  return out;
}

std::string egl_error_name(EGLint code) {
  switch (code) {
    case EGL_SUCCESS: return "EGL_SUCCESS";
    case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED";
    case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS";
    case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC";
    case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE";
    case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG";
    case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT";
    case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY";
    case EGL_BAD_MATCH: return "EGL_BAD_MATCH";
    case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER";
    case EGL_BAD_SURFACE: return "EGL_BAD_SURFACE";
    case EGL_CONTEXT_LOST: return "EGL_CONTEXT_LOST";
    default: return "EGL error " + std::to_string(code);
  }
}

}  // namespace latlab::gl
