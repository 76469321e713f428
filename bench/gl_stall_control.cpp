// gl_stall_control: latlab's GL latency path without latlab (is a GL Loaded
// stall latlab's or the driver's?). A plain EGL program runs the same four-pass workload (the burn
// loop of latlab's GL workloads, compute or fragment, 1920x1080) on absolute
// deadlines 8-12 ms apart, one glFenceSync + glFlush per frame and a
// blocking glClientWaitSync, GPU begin/end by glQueryCounter(GL_TIMESTAMP).
// Nothing else runs unless asked, so a stall seen here is the driver's; each
// option adds back one thing latlab's path does:
//   --release-each-call  eglMakeCurrent before and a release after every
//                        submit and every wait (latlab's GL device does)
//   --calib-ms N         a thread with a second, unshared context samples
//                        calibration pairs every N ms as latlab's calibrator
//                        does: 8 samples, each eglMakeCurrent + 5 bracketed
//                        glGetInteger64v(GL_TIMESTAMP) + glGetError + release
//   --calib-keep-current that thread keeps its context current (no
//                        eglMakeCurrent per sample): the reads alone
//   --thread-per N       a new waiting thread every N frames (latlab's blocks),
//                        the context released when each ends
// Output: a summary on stdout; --csv FILE one row per frame; --events FILE one
// row per calibration refresh (host ns, CLOCK_MONOTONIC).
//   gl_stall_control --frames 500 --calib-ms 1000 --csv f.csv --events e.csv
// Exit: 0 ran, 1 GL/EGL failure, 2 bad arguments.
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/glcorearb.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

void sleep_until(int64_t t) {
  timespec ts{static_cast<time_t>(t / 1'000'000'000), static_cast<long>(t % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

[[noreturn]] void die(const std::string& what, int code = 1) {
  std::fprintf(stderr, "gl_stall_control: %s\n", what.c_str());
  std::exit(code);
}

#define GL_FUNCS(X)                                          \
  X(PFNGLGETSTRINGPROC, GetString)                           \
  X(PFNGLGETINTEGER64VPROC, GetInteger64v)                   \
  X(PFNGLGETERRORPROC, GetError)                             \
  X(PFNGLFLUSHPROC, Flush)                                   \
  X(PFNGLFINISHPROC, Finish)                                 \
  X(PFNGLGENQUERIESPROC, GenQueries)                         \
  X(PFNGLQUERYCOUNTERPROC, QueryCounter)                     \
  X(PFNGLGETQUERYOBJECTUIVPROC, GetQueryObjectuiv)           \
  X(PFNGLGETQUERYOBJECTUI64VPROC, GetQueryObjectui64v)       \
  X(PFNGLFENCESYNCPROC, FenceSync)                           \
  X(PFNGLCLIENTWAITSYNCPROC, ClientWaitSync)                 \
  X(PFNGLDELETESYNCPROC, DeleteSync)                         \
  X(PFNGLCREATESHADERPROC, CreateShader)                     \
  X(PFNGLSHADERSOURCEPROC, ShaderSource)                     \
  X(PFNGLCOMPILESHADERPROC, CompileShader)                   \
  X(PFNGLGETSHADERIVPROC, GetShaderiv)                       \
  X(PFNGLGETSHADERINFOLOGPROC, GetShaderInfoLog)             \
  X(PFNGLCREATEPROGRAMPROC, CreateProgram)                   \
  X(PFNGLATTACHSHADERPROC, AttachShader)                     \
  X(PFNGLLINKPROGRAMPROC, LinkProgram)                       \
  X(PFNGLGETPROGRAMIVPROC, GetProgramiv)                     \
  X(PFNGLUSEPROGRAMPROC, UseProgram)                         \
  X(PFNGLGETUNIFORMLOCATIONPROC, GetUniformLocation)         \
  X(PFNGLUNIFORM1UIPROC, Uniform1ui)                         \
  X(PFNGLUNIFORM2UIPROC, Uniform2ui)                         \
  X(PFNGLUNIFORM1IPROC, Uniform1i)                           \
  X(PFNGLGENBUFFERSPROC, GenBuffers)                         \
  X(PFNGLBINDBUFFERPROC, BindBuffer)                         \
  X(PFNGLBUFFERDATAPROC, BufferData)                         \
  X(PFNGLBINDBUFFERBASEPROC, BindBufferBase)                 \
  X(PFNGLDISPATCHCOMPUTEPROC, DispatchCompute)               \
  X(PFNGLMEMORYBARRIERPROC, MemoryBarrier)                   \
  X(PFNGLGENTEXTURESPROC, GenTextures)                       \
  X(PFNGLBINDTEXTUREPROC, BindTexture)                       \
  X(PFNGLTEXSTORAGE2DPROC, TexStorage2D)                     \
  X(PFNGLTEXPARAMETERIPROC, TexParameteri)                   \
  X(PFNGLACTIVETEXTUREPROC, ActiveTexture)                   \
  X(PFNGLGENFRAMEBUFFERSPROC, GenFramebuffers)               \
  X(PFNGLBINDFRAMEBUFFERPROC, BindFramebuffer)               \
  X(PFNGLFRAMEBUFFERTEXTURE2DPROC, FramebufferTexture2D)     \
  X(PFNGLCHECKFRAMEBUFFERSTATUSPROC, CheckFramebufferStatus) \
  X(PFNGLCLEARCOLORPROC, ClearColor)                         \
  X(PFNGLCLEARPROC, Clear)                                   \
  X(PFNGLGENVERTEXARRAYSPROC, GenVertexArrays)               \
  X(PFNGLBINDVERTEXARRAYPROC, BindVertexArray)               \
  X(PFNGLVIEWPORTPROC, Viewport)                             \
  X(PFNGLDRAWARRAYSPROC, DrawArrays)

struct Gl {
#define DECLARE(type, name) type name = nullptr;
  GL_FUNCS(DECLARE)
#undef DECLARE
  void load() {
#define LOAD(type, name)                                        \
  name = reinterpret_cast<type>(eglGetProcAddress("gl" #name)); \
  if (name == nullptr) die("no gl" #name);
    GL_FUNCS(LOAD)
#undef LOAD
  }
};

// The burn loop of latlab's GL workloads (src/backends/opengl/gl_workload.cpp).
constexpr const char* kBurn = R"(#version 430 core
vec4 burn(vec4 x, uint complexity, uint pass_index) {
  vec4 c = vec4(0.137, 0.291, 0.413, 0.577) + float(pass_index) * 0.01;
  for (uint k = 0u; k < complexity; ++k) {
    x = fract(x * 1.618034 + c);
    x = x * x * 0.5 + 0.25;
  }
  return x;
}
)";
constexpr const char* kCompute = R"(
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(std430, binding = 0) buffer Data { vec4 v[]; } data;
uniform uvec2 size;
uniform uint complexity;
uniform uint pass_index;
void main() {
  uvec2 p = gl_GlobalInvocationID.xy;
  if (p.x >= size.x || p.y >= size.y) return;
  uint i = p.y * size.x + p.x;
  data.v[i] = burn(data.v[i], complexity, pass_index);
}
)";
constexpr const char* kVertex = R"(#version 430 core
out vec2 uv;
void main() {
  uv = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
  gl_Position = vec4(uv * 2.0 - 1.0, 0.0, 1.0);
}
)";
constexpr const char* kFragment = R"(
in vec2 uv;
out vec4 color;
uniform sampler2D previous;
uniform uint complexity;
uniform uint pass_index;
void main() {
  color = burn(texture(previous, uv) * 0.5 + 0.25, complexity, pass_index);
}
)";

struct Options {
  uint32_t frames = 500;
  uint32_t warmup = 100;
  uint64_t seed = 1;
  double min_ms = 8, max_ms = 12;
  bool fragment = false;
  uint32_t width = 1920, height = 1080;
  uint32_t complexity = 0;  // 0: calibrate to target_ms
  double target_ms = 8.333333;
  bool release_each_call = false;
  double calib_ms = 0;
  bool calib_keep_current = false;
  uint32_t thread_per = 0;
  std::string csv, events;
};

struct Egl {
  EGLDisplay display = EGL_NO_DISPLAY;
  EGLConfig config = nullptr;
  std::string renderer;
};

bool has_word(const char* list, const char* word) {
  if (list == nullptr) return false;
  const size_t n = std::strlen(word);
  for (const char* p = std::strstr(list, word); p != nullptr; p = std::strstr(p + 1, word)) {
    if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ')) return true;
  }
  return false;
}

Egl open_display() {
  Egl e;
  auto get_display = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
      eglGetProcAddress("eglGetPlatformDisplayEXT"));
  auto query_devices =
      reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
  auto query_string = reinterpret_cast<PFNEGLQUERYDEVICESTRINGEXTPROC>(
      eglGetProcAddress("eglQueryDeviceStringEXT"));
  if (get_display == nullptr || query_devices == nullptr) die("no EGL_EXT_platform_device");
  EGLDeviceEXT devices[16];
  EGLint n = 0;
  if (query_devices(16, devices, &n) != EGL_TRUE || n == 0) die("no EGL device");
  EGLint pick = 0;  // the first hardware device, else the first
  for (EGLint i = n - 1; i >= 0; --i) {
    const char* ext = query_string != nullptr ? query_string(devices[i], EGL_EXTENSIONS) : nullptr;
    if (!has_word(ext, "EGL_MESA_device_software")) pick = i;
  }
  e.display = get_display(EGL_PLATFORM_DEVICE_EXT, devices[pick], nullptr);
  EGLint major = 0, minor = 0;
  if (e.display == EGL_NO_DISPLAY || eglInitialize(e.display, &major, &minor) != EGL_TRUE)
    die("eglInitialize failed");
  const char* ext = eglQueryString(e.display, EGL_EXTENSIONS);
  if (!has_word(ext, "EGL_KHR_no_config_context") &&
      !has_word(ext, "EGL_MESA_configless_context")) {
    const EGLint attrs[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_SURFACE_TYPE, EGL_PBUFFER_BIT,
                            EGL_NONE};
    EGLint got = 0;
    if (eglChooseConfig(e.display, attrs, &e.config, 1, &got) != EGL_TRUE || got == 0)
      die("no EGL config");
  }
  return e;
}

EGLContext create_context(const Egl& e) {
  eglBindAPI(EGL_OPENGL_API);
  const EGLint attrs[] = {EGL_CONTEXT_MAJOR_VERSION,
                          4,
                          EGL_CONTEXT_MINOR_VERSION,
                          3,
                          EGL_CONTEXT_OPENGL_PROFILE_MASK,
                          EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                          EGL_NONE};
  EGLContext c = eglCreateContext(e.display, e.config, EGL_NO_CONTEXT, attrs);
  if (c == EGL_NO_CONTEXT) die("eglCreateContext (GL 4.3 core) failed");
  return c;
}

void make_current(const Egl& e, EGLContext c) {
  if (eglMakeCurrent(e.display, EGL_NO_SURFACE, EGL_NO_SURFACE, c) != EGL_TRUE)
    die("eglMakeCurrent failed");
}

GLuint compile(const Gl& gl, GLenum type, const std::string& src) {
  const GLuint sh = gl.CreateShader(type);
  const char* text = src.c_str();
  gl.ShaderSource(sh, 1, &text, nullptr);
  gl.CompileShader(sh);
  GLint ok = 0;
  gl.GetShaderiv(sh, GL_COMPILE_STATUS, &ok);
  if (ok == 0) {
    char log[4096] = {};
    gl.GetShaderInfoLog(sh, sizeof log, nullptr, log);
    die(std::string("GLSL: ") + log);
  }
  return sh;
}

struct Workload {
  GLuint program = 0, buffer = 0, vao = 0;
  GLuint textures[2] = {}, fbos[2] = {};
  GLint loc_complexity = -1, loc_pass = -1, loc_size = -1;
};

Workload create_workload(const Gl& gl, const Options& o) {
  Workload w;
  w.program = gl.CreateProgram();
  if (o.fragment) {
    gl.AttachShader(w.program, compile(gl, GL_VERTEX_SHADER, kVertex));
    gl.AttachShader(w.program, compile(gl, GL_FRAGMENT_SHADER, std::string(kBurn) + kFragment));
  } else {
    gl.AttachShader(w.program, compile(gl, GL_COMPUTE_SHADER, std::string(kBurn) + kCompute));
  }
  gl.LinkProgram(w.program);
  GLint ok = 0;
  gl.GetProgramiv(w.program, GL_LINK_STATUS, &ok);
  if (ok == 0) die("GLSL link failed");
  if (o.fragment) {
    gl.GenVertexArrays(1, &w.vao);
    gl.GenTextures(2, w.textures);
    gl.GenFramebuffers(2, w.fbos);
    for (int i = 0; i < 2; ++i) {
      gl.BindTexture(GL_TEXTURE_2D, w.textures[i]);
      gl.TexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA32F, static_cast<GLsizei>(o.width),
                      static_cast<GLsizei>(o.height));
      gl.TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
      gl.TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
      gl.BindFramebuffer(GL_FRAMEBUFFER, w.fbos[i]);
      gl.FramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, w.textures[i],
                              0);
      if (gl.CheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
        die("framebuffer incomplete");
      gl.ClearColor(0.5f, 0.5f, 0.5f, 0.5f);
      gl.Clear(GL_COLOR_BUFFER_BIT);
    }
    gl.BindFramebuffer(GL_FRAMEBUFFER, 0);
    gl.BindTexture(GL_TEXTURE_2D, 0);
    gl.UseProgram(w.program);
    gl.Uniform1i(gl.GetUniformLocation(w.program, "previous"), 0);
    gl.UseProgram(0);
  } else {
    const size_t n = size_t{o.width} * o.height * 4;
    std::vector<float> init(n, 0.5f);
    gl.GenBuffers(1, &w.buffer);
    gl.BindBuffer(GL_SHADER_STORAGE_BUFFER, w.buffer);
    gl.BufferData(GL_SHADER_STORAGE_BUFFER, static_cast<GLsizeiptr>(n * sizeof(float)), init.data(),
                  GL_DYNAMIC_COPY);
    gl.BindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
    w.loc_size = gl.GetUniformLocation(w.program, "size");
  }
  w.loc_complexity = gl.GetUniformLocation(w.program, "complexity");
  w.loc_pass = gl.GetUniformLocation(w.program, "pass_index");
  if (gl.GetError() != GL_NO_ERROR) die("GL error creating the workload");
  return w;
}

// The four passes, as GlWorkload::record_pass records them.
void record(const Gl& gl, const Workload& w, const Options& o, uint32_t complexity) {
  for (uint32_t pass = 0; pass < 4; ++pass) {
    gl.UseProgram(w.program);
    gl.Uniform1ui(w.loc_complexity, complexity);
    gl.Uniform1ui(w.loc_pass, pass);
    if (!o.fragment) {
      gl.Uniform2ui(w.loc_size, o.width, o.height);
      gl.BindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, w.buffer);
      gl.MemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
      gl.DispatchCompute((o.width + 7) / 8, (o.height + 7) / 8, 1);
    } else {
      const uint32_t src = pass % 2;
      gl.BindFramebuffer(GL_FRAMEBUFFER, w.fbos[1 - src]);
      gl.Viewport(0, 0, static_cast<GLsizei>(o.width), static_cast<GLsizei>(o.height));
      gl.ActiveTexture(GL_TEXTURE0);
      gl.BindTexture(GL_TEXTURE_2D, w.textures[src]);
      gl.BindVertexArray(w.vao);
      gl.DrawArrays(GL_TRIANGLES, 0, 3);
      gl.BindVertexArray(0);
      gl.BindTexture(GL_TEXTURE_2D, 0);
      gl.BindFramebuffer(GL_FRAMEBUFFER, 0);
    }
    gl.UseProgram(0);
  }
}

struct Frame {
  int64_t deadline = 0, start = 0, submit_end = 0, wake = 0;
  uint64_t gpu_begin = 0, gpu_end = 0;
  bool behind = false, gpu_ok = false;
};

// A bracketed GL_TIMESTAMP read on the current context: (ticks, host mid);
// `slowest`: the longest of the 5 reads (ns), when given.
std::pair<int64_t, int64_t> pair_now(const Gl& gl, int64_t* slowest = nullptr) {
  int64_t best_w = -1, ticks = 0, host = 0;
  for (int i = 0; i < 5; ++i) {
    GLint64 t = 0;
    const int64_t a = now_ns();
    gl.GetInteger64v(GL_TIMESTAMP, &t);
    const int64_t b = now_ns();
    if (slowest != nullptr) *slowest = std::max(*slowest, b - a);
    if (best_w < 0 || b - a < best_w) {
      best_w = b - a;
      ticks = t;
      host = a + (b - a) / 2;
    }
  }
  return {ticks, host};
}

// latlab's calibrator, by hand: every `period` 8 samples, each (unless
// keep_current) eglMakeCurrent of its own context, 5 bracketed reads,
// glGetError, release. Records each refresh's host window.
struct Window {
  int64_t start = 0, end = 0;
  int64_t slowest_make_current = 0;  // ns, of the refresh's eglMakeCurrent calls
  int64_t slowest_read = 0;          // ns, of its GL_TIMESTAMP reads
};
struct Calib {
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<Window> windows;
};

void calib_thread(const Egl& e, const Gl& gl, EGLContext c, const Options& o, Calib& k) {
  const auto period = static_cast<int64_t>(o.calib_ms * 1e6);
  if (o.calib_keep_current) make_current(e, c);
  int64_t next = now_ns() + period;
  while (!k.stop.load()) {
    sleep_until(next);
    if (k.stop.load()) break;
    Window win;
    win.start = now_ns();
    for (int s = 0; s < 8; ++s) {
      if (!o.calib_keep_current) {
        const int64_t m0 = now_ns();
        make_current(e, c);
        win.slowest_make_current = std::max(win.slowest_make_current, now_ns() - m0);
      }
      (void)pair_now(gl, &win.slowest_read);
      (void)gl.GetError();
      if (!o.calib_keep_current) {
        const int64_t m0 = now_ns();
        eglMakeCurrent(e.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        win.slowest_make_current = std::max(win.slowest_make_current, now_ns() - m0);
      }
    }
    win.end = now_ns();
    {
      std::lock_guard lock(k.mu);
      k.windows.push_back(win);
    }
    next += period;
    if (next <= now_ns()) next = now_ns() + period;
  }
  if (o.calib_keep_current)
    eglMakeCurrent(e.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  eglReleaseThread();
}

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double pct(std::vector<double> v, double p) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(
      v.size() - 1, static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())) - 1));
  return v[i];
}

void print_dist(const char* name, const std::vector<double>& v) {
  std::printf("  %-26s n=%zu p50 %.1f p90 %.1f p99 %.1f max %.1f us\n", name, v.size(), pct(v, 50),
              pct(v, 90), pct(v, 99), pct(v, 100));
}

uint32_t parse_u32(const char* s) { return static_cast<uint32_t>(std::strtoul(s, nullptr, 10)); }

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) die("missing value after " + a, 2);
      return argv[++i];
    };
    if (a == "--frames")
      o.frames = parse_u32(next());
    else if (a == "--warmup")
      o.warmup = parse_u32(next());
    else if (a == "--seed")
      o.seed = std::strtoull(next(), nullptr, 10);
    else if (a == "--interval-ms") {
      if (std::sscanf(next(), "%lf-%lf", &o.min_ms, &o.max_ms) != 2 || o.min_ms <= 0 ||
          o.max_ms < o.min_ms)
        die("--interval-ms MIN-MAX", 2);
    } else if (a == "--form") {
      const std::string f = next();
      if (f != "compute" && f != "fragment") die("--form compute|fragment", 2);
      o.fragment = f == "fragment";
    } else if (a == "--size") {
      if (std::sscanf(next(), "%ux%u", &o.width, &o.height) != 2 || o.width == 0 || o.height == 0)
        die("--size WxH", 2);
    } else if (a == "--complexity")
      o.complexity = parse_u32(next());
    else if (a == "--target-ms")
      o.target_ms = std::strtod(next(), nullptr);
    else if (a == "--release-each-call")
      o.release_each_call = true;
    else if (a == "--calib-ms")
      o.calib_ms = std::strtod(next(), nullptr);
    else if (a == "--calib-keep-current")
      o.calib_keep_current = true;
    else if (a == "--thread-per")
      o.thread_per = parse_u32(next());
    else if (a == "--csv")
      o.csv = next();
    else if (a == "--events")
      o.events = next();
    else
      die("unknown option " + a + " (see the header of bench/gl_stall_control.cpp)", 2);
  }
  if (o.frames == 0 || o.complexity > 4096) die("--frames >= 1, --complexity <= 4096", 2);
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const Egl e = open_display();
  const EGLContext ctx = create_context(e);
  const EGLContext calib_ctx = o.calib_ms > 0 ? create_context(e) : EGL_NO_CONTEXT;
  make_current(e, ctx);
  Gl gl;
  gl.load();
  const auto* renderer = reinterpret_cast<const char*>(gl.GetString(GL_RENDERER));
  const Workload w = create_workload(gl, o);
  GLuint q[2] = {};
  gl.GenQueries(2, q);

  auto gpu_time_ms = [&](uint32_t c) {  // the fastest of 3 back-to-back frames
    double best = 1e30;
    for (int i = 0; i < 3; ++i) {
      gl.QueryCounter(q[0], GL_TIMESTAMP);
      record(gl, w, o, c);
      gl.QueryCounter(q[1], GL_TIMESTAMP);
      gl.Finish();
      GLuint64 a = 0, b = 0;
      gl.GetQueryObjectui64v(q[0], GL_QUERY_RESULT, &a);
      gl.GetQueryObjectui64v(q[1], GL_QUERY_RESULT, &b);
      best = std::min(best, static_cast<double>(b - a) / 1e6);
    }
    return best;
  };
  uint32_t complexity = o.complexity;
  if (complexity == 0) {  // proportional steps to the target (the cost is linear in complexity)
    complexity = 64;
    for (int step = 0; step < 4; ++step) {
      const double ms = gpu_time_ms(complexity);
      const double c = std::clamp(
          static_cast<double>(complexity) * o.target_ms / std::max(ms, 1e-3), 1.0, 4096.0);
      complexity = static_cast<uint32_t>(std::lround(c));
    }
  }
  const double frame_ms = gpu_time_ms(complexity);
  // Two idle pairs, start and end, map GPU ticks to the host clock.
  const auto p0 = pair_now(gl);

  Calib calib;
  std::thread calibrator;
  if (o.calib_ms > 0) calibrator = std::thread([&] { calib_thread(e, gl, calib_ctx, o, calib); });

  const uint32_t total = o.warmup + o.frames;
  std::vector<Frame> frames(total);
  uint64_t rng = o.seed;
  const auto lo = static_cast<uint64_t>(o.min_ms * 1e6), hi = static_cast<uint64_t>(o.max_ms * 1e6);
  int64_t deadline = now_ns() + 20'000'000;
  for (Frame& f : frames) {
    deadline += static_cast<int64_t>(lo + splitmix(rng) % (hi - lo + 1));
    f.deadline = deadline;
  }
  if (o.release_each_call || o.thread_per > 0)
    eglMakeCurrent(e.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);

  auto run_frames = [&](uint32_t first, uint32_t count, bool own_thread) {
    const bool release = o.release_each_call;
    if (own_thread && !release) make_current(e, ctx);
    for (uint32_t i = first; i < first + count; ++i) {
      Frame& f = frames[i];
      if (now_ns() < f.deadline) {
        sleep_until(f.deadline);
      } else {
        f.behind = true;
      }
      f.start = now_ns();
      if (release) make_current(e, ctx);
      gl.QueryCounter(q[0], GL_TIMESTAMP);
      record(gl, w, o, complexity);
      gl.QueryCounter(q[1], GL_TIMESTAMP);
      GLsync fence = gl.FenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
      gl.Flush();
      if (release) eglMakeCurrent(e.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      f.submit_end = now_ns();
      if (release) make_current(e, ctx);
      const GLenum r = gl.ClientWaitSync(fence, GL_SYNC_FLUSH_COMMANDS_BIT, 20'000'000'000ull);
      f.wake = now_ns();
      if (r == GL_TIMEOUT_EXPIRED || r == GL_WAIT_FAILED) die("glClientWaitSync failed");
      gl.DeleteSync(fence);
      GLuint avail = 0;
      gl.GetQueryObjectuiv(q[1], GL_QUERY_RESULT_AVAILABLE, &avail);
      if (avail != 0) {
        GLuint64 a = 0, b = 0;
        gl.GetQueryObjectui64v(q[0], GL_QUERY_RESULT, &a);
        gl.GetQueryObjectui64v(q[1], GL_QUERY_RESULT, &b);
        f.gpu_begin = a;
        f.gpu_end = b;
        f.gpu_ok = true;
      }
      if (release) eglMakeCurrent(e.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    }
    if (own_thread) {
      if (!release) eglMakeCurrent(e.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      eglReleaseThread();
    }
  };
  if (o.thread_per > 0) {
    for (uint32_t first = 0; first < total; first += o.thread_per) {
      std::thread t(run_frames, first, std::min(o.thread_per, total - first), true);
      t.join();
    }
  } else {
    run_frames(0, total, false);
  }
  calib.stop.store(true);
  if (calibrator.joinable()) calibrator.join();
  make_current(e, ctx);
  const auto p1 = pair_now(gl);
  const double slope = p1.first != p0.first ? static_cast<double>(p1.second - p0.second) /
                                                  static_cast<double>(p1.first - p0.first)
                                            : 1.0;
  auto to_host = [&](uint64_t t) {
    return p0.second + static_cast<int64_t>(std::llround(
                           static_cast<double>(static_cast<int64_t>(t) - p0.first) * slope));
  };

  // Per frame, and the summary over the measured ones.
  auto overlaps = [&](const Frame& f) {
    for (const Window& cw : calib.windows) {
      if (cw.start < f.wake && cw.end > f.deadline) return true;
    }
    return false;
  };
  std::vector<double> latency, submit, end_to_wake, gpu, latency_overlapped, latency_clear;
  uint32_t behind = 0, over20 = 0, overlapped = 0;
  std::FILE* csv = o.csv.empty() ? nullptr : std::fopen(o.csv.c_str(), "w");
  if (csv != nullptr)
    std::fprintf(
        csv,
        "frame,measured,deadline_ns,start_ns,submit_end_ns,gpu_begin_host_ns,gpu_end_host_ns,"
        "wake_ns,behind,latency_ns,submit_ns,gpu_ns,gpu_end_to_wake_ns,calib_overlap\n");
  for (uint32_t i = 0; i < total; ++i) {
    const Frame& f = frames[i];
    const bool measured = i >= o.warmup;
    const int64_t gb = f.gpu_ok ? to_host(f.gpu_begin) : 0, ge = f.gpu_ok ? to_host(f.gpu_end) : 0;
    const bool ov = overlaps(f);
    if (csv != nullptr) {
      std::fprintf(csv, "%u,%d,%lld,%lld,%lld,", i, measured ? 1 : 0,
                   static_cast<long long>(f.deadline), static_cast<long long>(f.start),
                   static_cast<long long>(f.submit_end));
      if (f.gpu_ok) {
        std::fprintf(csv, "%lld,%lld,", static_cast<long long>(gb), static_cast<long long>(ge));
      } else {
        std::fprintf(csv, ",,");
      }
      std::fprintf(csv, "%lld,%d,%lld,%lld,", static_cast<long long>(f.wake), f.behind ? 1 : 0,
                   static_cast<long long>(f.wake - f.deadline),
                   static_cast<long long>(f.submit_end - f.start));
      if (f.gpu_ok) {
        std::fprintf(csv, "%llu,%lld,", static_cast<unsigned long long>(f.gpu_end - f.gpu_begin),
                     static_cast<long long>(f.wake - ge));
      } else {
        std::fprintf(csv, ",,");
      }
      std::fprintf(csv, "%d\n", ov ? 1 : 0);
    }
    if (!measured) continue;
    const double lat = static_cast<double>(f.wake - f.deadline) / 1e3;
    latency.push_back(lat);
    (ov ? latency_overlapped : latency_clear).push_back(lat);
    overlapped += ov ? 1 : 0;
    submit.push_back(static_cast<double>(f.submit_end - f.start) / 1e3);
    if (f.gpu_ok) {
      gpu.push_back(static_cast<double>(f.gpu_end - f.gpu_begin) / 1e3);
      end_to_wake.push_back(static_cast<double>(f.wake - ge) / 1e3);
    }
    behind += f.behind ? 1 : 0;
    over20 += lat > 20'000 ? 1 : 0;
  }
  if (csv != nullptr) std::fclose(csv);
  if (!o.events.empty()) {
    if (std::FILE* ev = std::fopen(o.events.c_str(), "w")) {
      std::fprintf(ev, "start_ns,end_ns,duration_ns,slowest_make_current_ns,slowest_read_ns\n");
      for (const Window& cw : calib.windows)
        std::fprintf(ev, "%lld,%lld,%lld,%lld,%lld\n", static_cast<long long>(cw.start),
                     static_cast<long long>(cw.end), static_cast<long long>(cw.end - cw.start),
                     static_cast<long long>(cw.slowest_make_current),
                     static_cast<long long>(cw.slowest_read));
      std::fclose(ev);
    }
  }
  std::vector<double> windows, slowest_mc, slowest_read;
  for (const Window& cw : calib.windows) {
    windows.push_back(static_cast<double>(cw.end - cw.start) / 1e3);
    slowest_mc.push_back(static_cast<double>(cw.slowest_make_current) / 1e3);
    slowest_read.push_back(static_cast<double>(cw.slowest_read) / 1e3);
  }

  std::printf(
      "gl_stall_control: %s, %s %ux%u x4 passes, complexity %u (%.3f ms alone), %u frames after "
      "%u, "
      "%.0f-%.0f ms, seed %llu; release each call %s, calibration thread %s, thread per %u "
      "frames\n",
      renderer != nullptr ? renderer : "?", o.fragment ? "fragment" : "compute", o.width, o.height,
      complexity, frame_ms, o.frames, o.warmup, o.min_ms, o.max_ms,
      static_cast<unsigned long long>(o.seed), o.release_each_call ? "yes" : "no",
      o.calib_ms > 0
          ? (std::to_string(o.calib_ms) + " ms" + (o.calib_keep_current ? ", kept current" : ""))
                .c_str()
          : "off",
      o.thread_per);
  print_dist("latency (wake - deadline)", latency);
  print_dist("submit span", submit);
  print_dist("gpu_execution", gpu);
  print_dist("gpu_end_to_wake", end_to_wake);
  std::printf("  behind %u of %u, latency > 20 ms: %u\n", behind, o.frames, over20);
  if (o.calib_ms > 0) {
    print_dist("calibration refresh", windows);
    print_dist("its slowest make current", slowest_mc);
    print_dist("its slowest GL_TIMESTAMP", slowest_read);
    std::printf("  frames overlapping a refresh: %u\n", overlapped);
    print_dist("latency, overlapped", latency_overlapped);
    print_dist("latency, clear", latency_clear);
  }
  eglMakeCurrent(e.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  return 0;
}
