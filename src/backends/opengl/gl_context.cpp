// GlContext: EGL displays without a window (EGL_EXT_platform_device, else
// EGL_MESA_platform_surfaceless), a configless surfaceless GL 4.3 core or
// GLES 3.1+ context, the device report, KHR_debug and calibration pairs.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backends/opengl/gl_calibration_pair.hpp"
#include "backends/opengl/gl_state.hpp"
#include "core/uuid_text.hpp"

namespace latlab {
namespace {

struct Candidate {
  EGLDisplay display = EGL_NO_DISPLAY;
  int index = 0;
  std::string platform;
  std::string drm_node;
  std::string device_uuid;  // EGL_EXT_device_persistent_id; "" when not offered
  bool software = false;
};

bool has_word(const char* list, const char* word) {
  if (list == nullptr) return false;
  const size_t n = std::strlen(word);
  for (const char* p = std::strstr(list, word); p != nullptr; p = std::strstr(p + 1, word)) {
    const bool starts = p == list || p[-1] == ' ';
    const bool ends = p[n] == '\0' || p[n] == ' ';
    if (starts && ends) return true;
  }
  return false;
}

// Every display latlab can use: one per EGL device, or the surfaceless one.
Result<std::vector<Candidate>> candidate_displays() {
  const char* client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  if (client == nullptr) {
    return make_error("EGL has no client extensions (" + gl::egl_error_name(eglGetError()) +
                      "): libEGL found no vendor library (install libegl-mesa0 or the GPU driver's EGL)");
  }
  auto get_display = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
  std::vector<Candidate> out;
  if (get_display != nullptr && has_word(client, "EGL_EXT_platform_device") &&
      has_word(client, "EGL_EXT_device_enumeration")) {
    auto query_devices = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    auto query_string =
        reinterpret_cast<PFNEGLQUERYDEVICESTRINGEXTPROC>(eglGetProcAddress("eglQueryDeviceStringEXT"));
    EGLDeviceEXT devices[16];
    EGLint n = 0;
    if (query_devices != nullptr && query_devices(16, devices, &n) == EGL_TRUE) {
      for (EGLint i = 0; i < n; ++i) {
        Candidate c;
        c.index = static_cast<int>(i);
        c.platform = "device";
        const char* ext = query_string != nullptr ? query_string(devices[i], EGL_EXTENSIONS) : nullptr;
        c.software = has_word(ext, "EGL_MESA_device_software");
        if (has_word(ext, "EGL_EXT_device_drm_render_node")) {
          const char* node = query_string(devices[i], EGL_DRM_RENDER_NODE_FILE_EXT);
          if (node != nullptr) c.drm_node = node;
        }
        if (c.drm_node.empty() && has_word(ext, "EGL_EXT_device_drm")) {
          const char* node = query_string(devices[i], EGL_DRM_DEVICE_FILE_EXT);
          if (node != nullptr) c.drm_node = node;
        }
        if (has_word(ext, "EGL_EXT_device_persistent_id")) {
          auto query_binary = reinterpret_cast<PFNEGLQUERYDEVICEBINARYEXTPROC>(
              eglGetProcAddress("eglQueryDeviceBinaryEXT"));
          uint8_t uuid[16] = {};
          EGLint size = 0;
          if (query_binary != nullptr &&
              query_binary(devices[i], EGL_DEVICE_UUID_EXT, 16, uuid, &size) == EGL_TRUE && size == 16)
            c.device_uuid = uuid_text(uuid);
        }
        c.display = get_display(EGL_PLATFORM_DEVICE_EXT, devices[i], nullptr);
        if (c.display != EGL_NO_DISPLAY) out.push_back(c);
      }
    }
  }
  if (out.empty() && get_display != nullptr && has_word(client, "EGL_MESA_platform_surfaceless")) {
    Candidate c;
    c.platform = "surfaceless";
    c.display = get_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    if (c.display != EGL_NO_DISPLAY) out.push_back(c);
  }
  if (out.empty()) {
    return make_error(
        "EGL offers no display without a window (neither EGL_EXT_platform_device with a device nor "
        "EGL_MESA_platform_surfaceless); client extensions: " +
        std::string(client));
  }
  return out;
}

// A context of `gles` kind on `display`, or EGL_NO_CONTEXT with why in `why`.
EGLContext create_context(EGLDisplay display, bool gles, bool debug, std::string& why,
                          EGLContext share = EGL_NO_CONTEXT) {
  if (eglBindAPI(gles ? EGL_OPENGL_ES_API : EGL_OPENGL_API) != EGL_TRUE) {
    why = std::string("eglBindAPI(") + (gles ? "OpenGL ES" : "OpenGL") + ") failed";
    return EGL_NO_CONTEXT;
  }
  const char* ext = eglQueryString(display, EGL_EXTENSIONS);
  EGLConfig config = EGL_NO_CONFIG_KHR;
  if (!has_word(ext, "EGL_KHR_no_config_context") && !has_word(ext, "EGL_MESA_configless_context")) {
    const EGLint attrs[] = {EGL_RENDERABLE_TYPE, gles ? EGL_OPENGL_ES3_BIT : EGL_OPENGL_BIT, EGL_SURFACE_TYPE,
                            EGL_PBUFFER_BIT, EGL_NONE};
    EGLint n = 0;
    if (eglChooseConfig(display, attrs, &config, 1, &n) != EGL_TRUE || n == 0) {
      why = "no EGL config for " + std::string(gles ? "GLES 3" : "desktop GL");
      return EGL_NO_CONTEXT;
    }
  }
  // Desktop: 4.3 core (drivers give their newest compatible version). GLES:
  // 3.2, then 3.1.
  const EGLint versions[][2] = {{4, 3}, {3, 2}, {3, 1}};
  for (const auto& v : versions) {
    if ((v[0] == 4) == gles) continue;
    std::vector<EGLint> a = {EGL_CONTEXT_MAJOR_VERSION, v[0], EGL_CONTEXT_MINOR_VERSION, v[1]};
    if (!gles) a.insert(a.end(), {EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT});
    if (debug) a.insert(a.end(), {EGL_CONTEXT_OPENGL_DEBUG, EGL_TRUE});
    a.push_back(EGL_NONE);
    EGLContext c = eglCreateContext(display, config, share, a.data());
    if (c != EGL_NO_CONTEXT) return c;
    why = std::string(gles ? "GLES " : "GL ") + std::to_string(v[0]) + "." + std::to_string(v[1]) +
          (gles ? "" : " core") + ": eglCreateContext failed (" + gl::egl_error_name(eglGetError()) + ")";
  }
  return EGL_NO_CONTEXT;
}

std::string gl_string(const gl::Api& api, GLenum name) {
  const auto* s = reinterpret_cast<const char*>(api.GetString(name));
  return s != nullptr ? s : "";
}

// Fills the GL part of `r` with the context current.
void probe(const gl::Api& api, bool gles, GlDeviceReport& r) {
  r.api = gles ? "OpenGL ES" : "OpenGL";
  r.renderer = gl_string(api, GL_RENDERER);
  r.vendor = gl_string(api, GL_VENDOR);
  r.version = gl_string(api, GL_VERSION);
  r.glsl_version = gl_string(api, GL_SHADING_LANGUAGE_VERSION);
  GLint major = 0, minor = 0;
  api.GetIntegerv(GL_MAJOR_VERSION, &major);
  api.GetIntegerv(GL_MINOR_VERSION, &minor);
  const int version = major * 10 + minor;
  r.compute_shaders = api.DispatchCompute != nullptr && (gles ? version >= 31 : version >= 43);
  r.khr_debug = api.DebugMessageCallback != nullptr &&
                (gles ? gl::has_extension(api, "GL_KHR_debug") || version >= 32 : true);
  r.disjoint_signal = gles && gl::has_extension(api, "GL_EXT_disjoint_timer_query");
  // The device's UUID from the context itself (GL_EXT_memory_object), where
  // EGL gave none: NVIDIA's surfaceless platform has no EGL device to ask,
  // and this UUID is the one CUDA and Vulkan report for the same GPU.
  if (r.device_uuid.empty() && gl::has_extension(api, "GL_EXT_memory_object")) {
    // GL_EXT_memory_object's names (not in the core-profile header).
    using GetUnsignedBytei = void(APIENTRYP)(GLenum target, GLuint index, GLubyte* data);
    constexpr GLenum kDeviceUuid = 0x9597;  // GL_DEVICE_UUID_EXT
    auto get_uuid = reinterpret_cast<GetUnsignedBytei>(eglGetProcAddress("glGetUnsignedBytei_vEXT"));
    uint8_t uuid[16] = {};  // GL_UUID_SIZE_EXT
    if (get_uuid != nullptr) {
      get_uuid(kDeviceUuid, 0, uuid);
      if (gl::drain_errors(api).empty() && std::any_of(std::begin(uuid), std::end(uuid), [](uint8_t b) { return b != 0; }))
        r.device_uuid = uuid_text(uuid);
    }
  }
  r.timer_query = gles ? r.disjoint_signal : version >= 33 || gl::has_extension(api, "GL_ARB_timer_query");
  GLint bits = 0;
  if (r.timer_query) api.GetQueryiv(GL_TIMESTAMP, GL_QUERY_COUNTER_BITS, &bits);
  r.timestamp_bits = bits;
  (void)gl::drain_errors(api);  // a driver that rejects the bits query has no timestamps
  if (!r.timer_query) {
    r.missing.push_back({"timestamps", gles ? "GLES without GL_EXT_disjoint_timer_query: no GPU timer queries"
                                            : "no GL 3.3 or GL_ARB_timer_query: no GPU timer queries"});
  }
  if (!r.disjoint_signal) {
    r.missing.push_back({"disjoint_detection",
                         "desktop OpenGL has no disjoint signal (GL_GPU_DISJOINT_EXT belongs to "
                         "GL_EXT_disjoint_timer_query, a GLES extension): a GPU clock change during a "
                         "timed span cannot be detected"});
  }
  r.missing.push_back({"calibrated_timestamps",
                       "GL has no calibrated timestamps: pairs are glGetInteger64v(GL_TIMESTAMP) "
                       "bracketed by host reads (estimated, bound = half the bracket)"});
  if (!r.compute_shaders) {
    r.missing.push_back({"compute_shaders", "needs GL 4.3 or GLES 3.1: the workloads use fragment passes"});
  }
  if (!r.khr_debug) r.missing.push_back({"khr_debug", "no KHR_debug: GL errors are only seen through glGetError"});
}

struct Opened {
  EGLContext context = EGL_NO_CONTEXT;
  bool gles = false;
  gl::Api api;
};

// A context on `c` of the kind `kind` asks for, current on this thread;
// r.timer says what `wish` gives on it.
Result<Opened> open_on(const Candidate& c, GlApiKind kind, GlTimer wish, bool debug, GlDeviceReport& r) {
  EGLint major = 0, minor = 0;
  if (eglInitialize(c.display, &major, &minor) != EGL_TRUE) {
    return make_error("eglInitialize failed (" + gl::egl_error_name(eglGetError()) + ")");
  }
  r.index = c.index;
  r.platform = c.platform;
  r.drm_node = c.drm_node;
  r.device_uuid = c.device_uuid;
  r.software = c.software;
  const char* vendor = eglQueryString(c.display, EGL_VENDOR);
  r.egl_vendor = vendor != nullptr ? vendor : "";
  r.egl_version = std::to_string(major) + "." + std::to_string(minor);
  if (!has_word(eglQueryString(c.display, EGL_EXTENSIONS), "EGL_KHR_surfaceless_context")) {
    return make_error("EGL display has no EGL_KHR_surfaceless_context");
  }
  // With both APIs allowed: desktop GL with timestamps, then GLES, then
  // desktop GL after all (GL_TIME_ELAPSED, or nothing to time with).
  struct Attempt {
    bool gles;
    bool need_timestamps;
  };
  std::vector<Attempt> attempts;
  const bool prefer_timestamps = kind == GlApiKind::automatic && wish != GlTimer::elapsed;
  if (kind != GlApiKind::gles) attempts.push_back({false, prefer_timestamps});
  if (kind != GlApiKind::desktop) attempts.push_back({true, false});
  if (prefer_timestamps) attempts.push_back({false, false});
  std::string why;
  for (const auto [gles, need_timestamps] : attempts) {
    Opened o;
    o.gles = gles;
    o.context = create_context(c.display, gles, debug, why);
    if (o.context == EGL_NO_CONTEXT) continue;
    if (eglMakeCurrent(c.display, EGL_NO_SURFACE, EGL_NO_SURFACE, o.context) != EGL_TRUE) {
      why = "eglMakeCurrent failed (" + gl::egl_error_name(eglGetError()) + ")";
      eglDestroyContext(c.display, o.context);
      continue;
    }
    if (auto l = o.api.load(gles); !l) {
      why = l.error().message;
      eglMakeCurrent(c.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      eglDestroyContext(c.display, o.context);
      continue;
    }
    GlDeviceReport probed = r;
    probe(o.api, gles, probed);
    // Desktop GL without timestamps: GLES may still have them.
    if (need_timestamps && probed.timestamp_bits <= 0) {
      why = "desktop GL has no timestamps";
      eglMakeCurrent(c.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      eglDestroyContext(c.display, o.context);
      continue;
    }
    gl::note_timer(probed, wish);
    r = probed;
    return o;
  }
  return make_error(why.empty() ? "no context could be created" : why);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return s;
}

void APIENTRY debug_callback(GLenum /*source*/, GLenum type, GLuint /*id*/, GLenum severity, GLsizei length,
                               const GLchar* message, const void* user) {
  if (type != GL_DEBUG_TYPE_ERROR && severity != GL_DEBUG_SEVERITY_HIGH) return;
  auto* ctx = static_cast<GlContext*>(const_cast<void*>(user));
  std::string text(message, length >= 0 ? static_cast<size_t>(length) : std::strlen(message));
  ctx->note_debug_error((type == GL_DEBUG_TYPE_ERROR ? "GL error: " : "GL high severity: ") + text);
}

// A context for calibration pairs on a program's `display`, of its API
// (`gles`), current nowhere: surfaceless where the display allows it, else
// with a 1x1 pbuffer in `surface`. Any version with GL_TIMESTAMP will do.
// EGL_NO_CONTEXT with why in `why`. The thread's bound API is kept.
EGLContext create_calibration_context(EGLDisplay display, bool gles, EGLSurface& surface,
                                      std::string& why) {
  const EGLenum bound = eglQueryAPI();
  struct RestoreApi {
    EGLenum api;
    ~RestoreApi() { eglBindAPI(api); }
  } restore{bound};
  if (eglBindAPI(gles ? EGL_OPENGL_ES_API : EGL_OPENGL_API) != EGL_TRUE) {
    why = std::string("eglBindAPI(") + (gles ? "OpenGL ES" : "OpenGL") + ") failed";
    return EGL_NO_CONTEXT;
  }
  const char* ext = eglQueryString(display, EGL_EXTENSIONS);
  const bool surfaceless = has_word(ext, "EGL_KHR_surfaceless_context");
  const bool configless =
      has_word(ext, "EGL_KHR_no_config_context") || has_word(ext, "EGL_MESA_configless_context");
  EGLConfig config = EGL_NO_CONFIG_KHR;
  if (!surfaceless || !configless) {
    const EGLint attrs[] = {EGL_RENDERABLE_TYPE, gles ? EGL_OPENGL_ES3_BIT : EGL_OPENGL_BIT,
                            EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_NONE};
    EGLint n = 0;
    if (eglChooseConfig(display, attrs, &config, 1, &n) != EGL_TRUE || n == 0) {
      why = std::string("no calibration context: the program's EGL display has ") +
            (surfaceless ? "no EGL_KHR_no_config_context" : "no EGL_KHR_surfaceless_context") +
            " and no pbuffer config for " + (gles ? "GLES 3" : "desktop GL");
      return EGL_NO_CONTEXT;
    }
  }
  // Desktop: core 4.3, core 3.3, then whatever the driver gives; GLES 3.2 to 3.0.
  struct Version {
    bool gles;
    EGLint major, minor;  // 0: no version asked
    bool core;
  };
  constexpr Version kVersions[] = {{false, 4, 3, true}, {false, 3, 3, true}, {false, 0, 0, false},
                                   {true, 3, 2, false}, {true, 3, 1, false}, {true, 3, 0, false}};
  EGLContext c = EGL_NO_CONTEXT;
  for (const Version& v : kVersions) {
    if (v.gles != gles) continue;
    std::vector<EGLint> a;
    if (v.major != 0) a = {EGL_CONTEXT_MAJOR_VERSION, v.major, EGL_CONTEXT_MINOR_VERSION, v.minor};
    if (v.core)
      a.insert(a.end(), {EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT});
    a.push_back(EGL_NONE);
    c = eglCreateContext(display, config, EGL_NO_CONTEXT, a.data());
    if (c != EGL_NO_CONTEXT) break;
  }
  if (c == EGL_NO_CONTEXT) {
    why = "no calibration context: eglCreateContext failed on the program's display (" +
          gl::egl_error_name(eglGetError()) + ")";
    return EGL_NO_CONTEXT;
  }
  if (!surfaceless) {
    const EGLint pbuffer[] = {EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE};
    surface = eglCreatePbufferSurface(display, config, pbuffer);
    if (surface == EGL_NO_SURFACE) {
      why = "no calibration context: eglCreatePbufferSurface failed (" +
            gl::egl_error_name(eglGetError()) + ")";
      eglDestroyContext(display, c);
      return EGL_NO_CONTEXT;
    }
  }
  return c;
}

// The candidates in the order they are tried: hardware before software.
std::vector<const Candidate*> hardware_first(const std::vector<Candidate>& cands) {
  std::vector<const Candidate*> order;
  for (const auto& c : cands) {
    if (!c.software) order.push_back(&c);
  }
  for (const auto& c : cands) {
    if (c.software) order.push_back(&c);
  }
  return order;
}

// No candidate gave a context with the timer wished: what was asked and what
// each device said (`tried`).
Error no_context_error(GlTimer wish, const std::string& device, const std::string& tried) {
  return Error{std::string("no OpenGL context with GPU timer queries") +
               (wish == GlTimer::timestamp ? " and GL_TIMESTAMP" : "") +
               (device.empty() ? std::string() : " on a device matching '" + device + "'") +
               " (needs desktop GL 4.3 core with timer queries, or GLES 3.1 with "
               "GL_EXT_disjoint_timer_query); EGL devices:" +
               (tried.empty() ? std::string(" none") : tried)};
}

}  // namespace

Result<std::vector<GlDeviceReport>> enumerate_gl_devices(GlApiKind api) {
  const auto wish = gl::wished_timer(GlTimer::automatic);
  if (!wish) return wish.error();
  auto cands = candidate_displays();
  if (!cands) return cands.error();
  std::vector<GlDeviceReport> out;
  for (const Candidate& c : *cands) {
    GlDeviceReport r;
    auto o = open_on(c, api, *wish, false, r);
    if (!o) {
      r.index = c.index;
      r.platform = c.platform;
      r.missing.push_back({"context", o.error().message});
    } else {
      eglMakeCurrent(c.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      eglDestroyContext(c.display, o->context);
    }
    out.push_back(std::move(r));
  }
  eglReleaseThread();
  return out;
}

namespace gl {
EGLContext create_shared_context(GlContext& ctx, std::string& why) {
  const GlContext::State& s = ctx.state();
  const EGLContext c = create_context(s.display, ctx.gles(), false, why, s.context);
  eglBindAPI(ctx.gles() ? EGL_OPENGL_ES_API : EGL_OPENGL_API);
  return c;
}
}  // namespace gl

GlContext::GlContext() : state_(std::make_unique<State>()) {}

Result<std::unique_ptr<GlContext>> GlContext::create(const GlContextDesc& desc) {
  const auto wish = gl::wished_timer(desc.timer);
  if (!wish) return wish.error();
  auto cands = candidate_displays();
  if (!cands) return cands.error();
  // Selection: an index, a name substring, or the first with timestamps.
  const std::vector<const Candidate*> order = hardware_first(*cands);
  const bool by_index = !desc.device.empty() && std::all_of(desc.device.begin(), desc.device.end(), ::isdigit);
  std::string tried;
  std::unique_ptr<GlContext> ctx(new GlContext());
  for (const Candidate* c : order) {
    if (by_index && std::to_string(c->index) != desc.device) continue;
    GlDeviceReport r;
    auto o = open_on(*c, desc.api, *wish, desc.debug, r);
    if (!o) {
      tried += "\n  [" + std::to_string(c->index) + "] " + c->platform + ": " + o.error().message;
      continue;
    }
    const bool name_ok = desc.device.empty() || by_index ||
                         lower(r.renderer + " " + r.egl_vendor + " " + r.vendor).find(lower(desc.device)) !=
                             std::string::npos;
    const auto timer = gl::resolve_timer(r, *wish);
    if (!name_ok || !timer) {
      tried += "\n  [" + std::to_string(c->index) + "] " + r.renderer + ": " +
               (!name_ok ? "name does not match" : r.missing.front().reason);
      eglMakeCurrent(c->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      eglDestroyContext(c->display, o->context);
      continue;
    }
    State& s = *ctx->state_;
    s.display = c->display;
    s.context = o->context;
    s.api = o->api;
    ctx->gles_ = o->gles;
    ctx->timer_ = *timer;
    ctx->report_ = std::move(r);
    break;
  }
  if (ctx->state_->context == EGL_NO_CONTEXT) return no_context_error(*wish, desc.device, tried);
  State& s = *ctx->state_;
  if (desc.debug && ctx->report_.khr_debug) {
    s.api.Enable(GL_DEBUG_OUTPUT);
    s.api.Enable(GL_DEBUG_OUTPUT_SYNCHRONOUS);  // messages on the calling thread, in order
    s.api.DebugMessageCallback(debug_callback, ctx.get());
    s.api.DebugMessageControl(GL_DONT_CARE, GL_DONT_CARE, GL_DONT_CARE, 0, nullptr, GL_TRUE);
  }
  // The calibration context: its own, so pairs can be taken from any thread
  // while the frame context is current elsewhere.
  std::string why;
  const EGLContext current = s.context;
  s.calib_context = create_context(s.display, ctx->gles_, false, why);
  eglBindAPI(ctx->gles_ ? EGL_OPENGL_ES_API : EGL_OPENGL_API);
  if (s.calib_context == EGL_NO_CONTEXT) return make_error("the calibration context: " + why);
  (void)current;
  return ctx;
}

Result<std::unique_ptr<GlContext>> GlContext::attach_current(const GlAttachDesc& desc) {
  const auto wish = gl::wished_timer(desc.timer);
  if (!wish) return wish.error();
  const EGLContext current = eglGetCurrentContext();
  const EGLDisplay display = eglGetCurrentDisplay();
  if (current == EGL_NO_CONTEXT || display == EGL_NO_DISPLAY) {
    return make_error(
        "GlContext::attach_current: no EGL context is current on this thread (make the program's "
        "context current first; GLX contexts are not supported)");
  }
  EGLint client = 0;
  if (eglQueryContext(display, current, EGL_CONTEXT_CLIENT_TYPE, &client) != EGL_TRUE) {
    return make_error("GlContext::attach_current: eglQueryContext failed (" +
                      gl::egl_error_name(eglGetError()) + ")");
  }
  const bool gles = client == EGL_OPENGL_ES_API;
  std::unique_ptr<GlContext> ctx(new GlContext());
  State& s = *ctx->state_;
  s.display = display;
  s.context = current;
  s.owns_context = false;
  if (auto l = s.api.load(gles, /*timing_only=*/true); !l) return l.error();
  GlDeviceReport r;
  r.platform = "attached";
  const char* vendor = eglQueryString(display, EGL_VENDOR);
  const char* version = eglQueryString(display, EGL_VERSION);
  r.egl_vendor = vendor != nullptr ? vendor : "";
  r.egl_version = version != nullptr ? version : "";
  probe(s.api, gles, r);
  GLint major = 0, minor = 0;
  s.api.GetIntegerv(GL_MAJOR_VERSION, &major);
  s.api.GetIntegerv(GL_MINOR_VERSION, &minor);
  (void)gl::drain_errors(s.api);
  // Fence syncs (GlFrameRing) and 64-bit query results need GL 3.2 / GLES 3.0.
  if (gles ? major < 3 : major * 10 + minor < 32) {
    return make_error("GlContext::attach_current: '" + r.renderer + "' is " + r.version +
                      "; latlab needs desktop GL 3.3 (or 3.2 with GL_ARB_timer_query) or GLES 3.0");
  }
  gl::note_timer(r, *wish);
  const auto timer = gl::resolve_timer(r, *wish);
  if (!timer) {
    return make_error(
        "GlContext::attach_current: '" + r.renderer + "': " +
        (r.missing.empty() ? std::string("no GPU timer queries") : r.missing.front().reason));
  }
  ctx->gles_ = gles;
  ctx->timer_ = *timer;
  if (*timer == GlTimer::timestamp) {
    s.calib_context =
        create_calibration_context(display, gles, s.calib_surface, s.calib_unavailable);
    if (s.calib_context == EGL_NO_CONTEXT) {
      r.missing.push_back(
          {"calibration", s.calib_unavailable + ": GPU times cannot be placed on the host clock"});
    }
  }
  ctx->report_ = std::move(r);
  return ctx;
}

bool GlContext::attached() const { return !state_->owns_context; }

GlContext::~GlContext() {
  State& s = *state_;
  if (s.display == EGL_NO_DISPLAY) return;
  if (!s.owns_context) {
    if (s.calib_context != EGL_NO_CONTEXT) eglDestroyContext(s.display, s.calib_context);
    if (s.calib_surface != EGL_NO_SURFACE) eglDestroySurface(s.display, s.calib_surface);
    return;
  }
  if (eglGetCurrentContext() == s.context) {
    if (report_.khr_debug && s.api.DebugMessageCallback != nullptr) s.api.DebugMessageCallback(nullptr, nullptr);
    eglMakeCurrent(s.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  }
  if (s.context != EGL_NO_CONTEXT) eglDestroyContext(s.display, s.context);
  if (s.calib_context != EGL_NO_CONTEXT) eglDestroyContext(s.display, s.calib_context);
  // No eglTerminate: the display is shared by every context on the device in
  // this process (EGL displays are per device, not per owner).
}

Result<void> GlContext::make_current() {
  State& s = *state_;
  if (eglGetCurrentContext() == s.context) return {};
  if (!s.owns_context) {
    return make_error(
        "the program's GL context is not current on this thread: the program makes it current "
        "(with its surfaces), latlab does not");
  }
  if (eglMakeCurrent(s.display, EGL_NO_SURFACE, EGL_NO_SURFACE, s.context) != EGL_TRUE) {
    const EGLint e = eglGetError();
    return make_error("eglMakeCurrent failed (" + gl::egl_error_name(e) + ")" +
                      (e == EGL_BAD_ACCESS ? ": the GL context is current on another thread; "
                                             "release_current() there first"
                                           : ""));
  }
  return {};
}

void GlContext::release_current() {
  State& s = *state_;
  if (!s.owns_context) return;
  if (eglGetCurrentContext() == s.context) eglMakeCurrent(s.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
}

bool GlContext::is_current() const { return eglGetCurrentContext() == state_->context; }

std::vector<std::string> GlContext::debug_messages() const {
  std::lock_guard lock(debug_mutex_);
  return debug_messages_;
}

void GlContext::note_debug_error(std::string text) {
  debug_errors_.fetch_add(1);
  std::lock_guard lock(debug_mutex_);
  if (debug_messages_.size() < 32) debug_messages_.push_back(std::move(text));
}

uint32_t GlContext::drain_gl_errors(const char* where) {
  const std::string e = gl::drain_errors(state_->api);
  if (e.empty()) return 0;
  note_debug_error(std::string(where) + ": " + e);
  return 1;
}

Result<CalibrationPair> GlContext::sample_calibration(uint32_t brackets) {
  if (durations_only()) return make_error(gl_elapsed_only(*this, "no device clock to pair with the host clock"));
  State& s = *state_;
  if (s.calib_context == EGL_NO_CONTEXT) return make_error("calibration: " + s.calib_unavailable);
  std::lock_guard lock(s.calib_mutex);
  // Whatever this thread had current comes back afterwards.
  const EGLContext prev = eglGetCurrentContext();
  const EGLDisplay prev_display = eglGetCurrentDisplay();
  const EGLSurface prev_draw = eglGetCurrentSurface(EGL_DRAW);
  const EGLSurface prev_read = eglGetCurrentSurface(EGL_READ);
  if (eglMakeCurrent(s.display, s.calib_surface, s.calib_surface, s.calib_context) != EGL_TRUE) {
    return make_error("calibration: eglMakeCurrent failed (" + gl::egl_error_name(eglGetError()) + ")");
  }
  const CalibrationPair best = gl::narrowest_bracket(
      [&s] {
        GLint64 ticks = 0;
        s.api.GetInteger64v(GL_TIMESTAMP, &ticks);
        return static_cast<uint64_t>(ticks);
      },
      tick_format().mask(), brackets);
  const std::string errors = gl::drain_errors(s.api);
  if (prev != EGL_NO_CONTEXT) {
    eglMakeCurrent(prev_display, prev_draw, prev_read, prev);
  } else {
    eglMakeCurrent(s.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  }
  if (!errors.empty()) return make_error("calibration: glGetInteger64v(GL_TIMESTAMP) failed: " + errors);
  return best;
}

std::unique_ptr<ClockSync> start_clock_sync(GlContext& ctx, const CalibratorDesc& desc) {
  if (ctx.durations_only())
    return ClockSync::unavailable(
        gl_elapsed_only(ctx, "no device clock to pair with the host clock"));
  const GlContext::State& s = ctx.state();
  if (s.calib_context == EGL_NO_CONTEXT)
    return ClockSync::unavailable(ctx.report().renderer + ": " + s.calib_unavailable);
  return ClockSync::start([&ctx] { return ctx.sample_calibration(); }, ctx.tick_format(),
                          kGlCalibrationDomain, desc);
}

ScopedGlCurrent::ScopedGlCurrent(GlContext& ctx) : ctx_(ctx) {
  if (ctx.is_current()) return;
  status_ = ctx.make_current();
  made_ = status_.ok();
}

ScopedGlCurrent::~ScopedGlCurrent() {
  if (made_) ctx_.release_current();
}

}  // namespace latlab
