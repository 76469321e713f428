// latlab attached to GL contexts the test makes itself, as a program would:
// an EGL pbuffer with a GLES 3 context, and a desktop GL core context
// without a surface. The program's own KHR_debug callback counts GL errors;
// any fails the test, as does a GL error left behind.
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/glcorearb.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/clock_sync.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/opengl.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_opengl.hpp"

namespace latlab::test {
namespace {

// The program's EGL display, context and surface, with no latlab involved.
class ProgramGl {
 public:
  enum class Kind { gles3_pbuffer, gl_core_surfaceless };

  static std::unique_ptr<ProgramGl> create(Kind kind, std::string& error) {
    std::unique_ptr<ProgramGl> p(new ProgramGl());
    if (!p->init(kind, error)) return nullptr;
    return p;
  }
  ~ProgramGl() {
    if (display == EGL_NO_DISPLAY) return;
    eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (surface != EGL_NO_SURFACE) eglDestroySurface(display, surface);
    if (context != EGL_NO_CONTEXT) eglDestroyContext(display, context);
  }

  uint64_t errors() const { return errors_; }
  std::string messages() const { return messages_; }
  // glGetError until clear, each counted.
  void drain() {
    for (int i = 0; i < 16 && get_error() != GL_NO_ERROR; ++i) ++errors_;
  }

  EGLDisplay display = EGL_NO_DISPLAY;
  EGLContext context = EGL_NO_CONTEXT;
  EGLSurface surface = EGL_NO_SURFACE;
  PFNGLCLEARPROC clear = nullptr;
  PFNGLCLEARCOLORPROC clear_color = nullptr;
  PFNGLFINISHPROC finish = nullptr;
  PFNGLGETERRORPROC get_error = nullptr;

 private:
  ProgramGl() = default;

  static void APIENTRY on_debug(GLenum, GLenum type, GLuint, GLenum severity, GLsizei,
                                const GLchar* message, const void* user) {
    if (type != GL_DEBUG_TYPE_ERROR && severity != GL_DEBUG_SEVERITY_HIGH) return;
    auto* self = static_cast<ProgramGl*>(const_cast<void*>(user));
    ++self->errors_;
    self->messages_ += std::string(message) + "\n";
  }

  bool init(Kind kind, std::string& error) {
    const bool gles = kind == Kind::gles3_pbuffer;
    auto get_display = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
        eglGetProcAddress("eglGetPlatformDisplayEXT"));
    auto query_devices =
        reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    if (get_display != nullptr && query_devices != nullptr) {
      EGLDeviceEXT devices[8];
      EGLint n = 0;
      if (query_devices(8, devices, &n) == EGL_TRUE && n > 0)
        display = get_display(EGL_PLATFORM_DEVICE_EXT, devices[0], nullptr);
    }
    if (display == EGL_NO_DISPLAY && get_display != nullptr)
      display = get_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    if (display == EGL_NO_DISPLAY || eglInitialize(display, nullptr, nullptr) != EGL_TRUE) {
      error = "no EGL display without a window";
      display = EGL_NO_DISPLAY;
      return false;
    }
    if (eglBindAPI(gles ? EGL_OPENGL_ES_API : EGL_OPENGL_API) != EGL_TRUE) {
      error = "eglBindAPI failed";
      return false;
    }
    const EGLint config_attrs[] = {EGL_RENDERABLE_TYPE,
                                   gles ? EGL_OPENGL_ES3_BIT : EGL_OPENGL_BIT,
                                   EGL_SURFACE_TYPE,
                                   EGL_PBUFFER_BIT,
                                   EGL_RED_SIZE,
                                   8,
                                   EGL_NONE};
    EGLConfig config = nullptr;
    EGLint n = 0;
    if (eglChooseConfig(display, config_attrs, &config, 1, &n) != EGL_TRUE || n == 0) {
      error = std::string("no EGL pbuffer config for ") + (gles ? "GLES 3" : "desktop GL");
      return false;
    }
    const EGLint gles_attrs[] = {EGL_CONTEXT_MAJOR_VERSION,
                                 3,
                                 EGL_CONTEXT_MINOR_VERSION,
                                 0,
                                 EGL_CONTEXT_OPENGL_DEBUG,
                                 EGL_TRUE,
                                 EGL_NONE};
    const EGLint core_attrs[] = {EGL_CONTEXT_MAJOR_VERSION,
                                 3,
                                 EGL_CONTEXT_MINOR_VERSION,
                                 3,
                                 EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                 EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                 EGL_CONTEXT_OPENGL_DEBUG,
                                 EGL_TRUE,
                                 EGL_NONE};
    context = eglCreateContext(display, config, EGL_NO_CONTEXT, gles ? gles_attrs : core_attrs);
    if (context == EGL_NO_CONTEXT) {
      error = std::string("eglCreateContext failed for ") + (gles ? "GLES 3.0" : "GL 3.3 core");
      return false;
    }
    if (gles) {
      const EGLint pbuffer[] = {EGL_WIDTH, 1024, EGL_HEIGHT, 1024, EGL_NONE};
      surface = eglCreatePbufferSurface(display, config, pbuffer);
      if (surface == EGL_NO_SURFACE) {
        error = "eglCreatePbufferSurface failed";
        return false;
      }
    }
    if (eglMakeCurrent(display, surface, surface, context) != EGL_TRUE) {
      error = "eglMakeCurrent failed (no surfaceless contexts?)";
      return false;
    }
    clear = reinterpret_cast<PFNGLCLEARPROC>(eglGetProcAddress("glClear"));
    clear_color = reinterpret_cast<PFNGLCLEARCOLORPROC>(eglGetProcAddress("glClearColor"));
    finish = reinterpret_cast<PFNGLFINISHPROC>(eglGetProcAddress("glFinish"));
    get_error = reinterpret_cast<PFNGLGETERRORPROC>(eglGetProcAddress("glGetError"));
    auto enable = reinterpret_cast<PFNGLENABLEPROC>(eglGetProcAddress("glEnable"));
    auto callback = reinterpret_cast<PFNGLDEBUGMESSAGECALLBACKPROC>(
        eglGetProcAddress(gles ? "glDebugMessageCallbackKHR" : "glDebugMessageCallback"));
    if (callback == nullptr)
      callback = reinterpret_cast<PFNGLDEBUGMESSAGECALLBACKPROC>(
          eglGetProcAddress("glDebugMessageCallback"));
    if (callback != nullptr) {
      enable(GL_DEBUG_OUTPUT);
      enable(GL_DEBUG_OUTPUT_SYNCHRONOUS);
      callback(&on_debug, this);
    }
    drain();
    errors_ = 0;
    return true;
  }

  uint64_t errors_ = 0;
  std::string messages_;
};

class GlAttachTest : public ::testing::TestWithParam<ProgramGl::Kind> {
 protected:
  void SetUp() override {
    std::string error;
    program_ = ProgramGl::create(GetParam(), error);
    if (!program_) GTEST_SKIP() << "the test cannot make its own GL context here: " << error;
  }
  void TearDown() override {
    if (!program_) return;
    program_->drain();
    EXPECT_EQ(program_->errors(), 0u) << program_->messages();
  }
  // Attached, or a skip where the context has no timer queries.
  std::unique_ptr<GlContext> attach(GlAttachDesc desc = {}) {
    auto ctx = GlContext::attach_current(desc);
    if (!ctx) {
      skip_ = ctx.error().message;
      return nullptr;
    }
    return std::move(ctx.value());
  }
  std::unique_ptr<ProgramGl> program_;
  std::string skip_;
};

TEST_P(GlAttachTest, AttachLeavesTheProgramsContextAsItWas) {
  auto ctx = attach();
  if (!ctx) GTEST_SKIP() << skip_;
  EXPECT_TRUE(ctx->attached());
  EXPECT_TRUE(ctx->is_current());
  EXPECT_EQ(ctx->gles(), GetParam() == ProgramGl::Kind::gles3_pbuffer);
  EXPECT_EQ(ctx->report().platform, "attached");
  EXPECT_FALSE(ctx->report().renderer.empty());
  // Calibration runs on latlab's own second context and gives the program
  // its context and surface back.
  const auto clock = start_clock_sync(*ctx);
  if (ctx->durations_only()) {
    EXPECT_FALSE(clock->available());
  } else {
    EXPECT_TRUE(clock->available()) << clock->reason();
  }
  EXPECT_EQ(eglGetCurrentContext(), program_->context);
  EXPECT_EQ(eglGetCurrentSurface(EGL_DRAW), program_->surface);
  // latlab never releases or switches the program's context.
  ctx->release_current();
  EXPECT_EQ(eglGetCurrentContext(), program_->context);
  ctx.reset();
  EXPECT_EQ(eglGetCurrentContext(), program_->context);
}

// Zones on the program's context with its own work in them, frames in
// flight through GlFrameRing, every zone timed; a zone with work takes
// longer than an empty one (the fastest of several frames each).
TEST_P(GlAttachTest, ZonesOnTheProgramsContext) {
  auto ctx = attach();
  if (!ctx) GTEST_SKIP() << skip_;
  const bool has_surface = program_->surface != EGL_NO_SURFACE;
  auto prof = create_gl_profiler(
      *ctx, {.name = "program", .max_zones_per_frame = 8, .frames_in_flight = 2});
  ASSERT_TRUE(prof) << prof.error().message;
  auto ring = GlFrameRing::create(*ctx, 2);
  ASSERT_TRUE(ring) << ring.error().message;
  constexpr int kFrames = 10;
  std::vector<uint64_t> ids;
  for (int frame = 0; frame < kFrames; ++frame) {
    const auto slot = static_cast<uint32_t>(frame % 2);
    auto waited = (*ring)->wait(slot);
    ASSERT_TRUE(waited && *waited);
    if (frame >= 2) (*prof)->retire_frame(ids[static_cast<size_t>(frame - 2)]);
    { LATLAB_GPU_ZONE(*prof, ctx.get(), "empty"); }
    {
      LATLAB_GPU_ZONE(*prof, ctx.get(), "clears");
      if (has_surface) {
        for (int i = 0; i < 8; ++i) {
          program_->clear_color(0.1f * static_cast<float>(i), 0.2f, 0.3f, 1.0f);
          program_->clear(GL_COLOR_BUFFER_BIT);
        }
      }
    }
    ASSERT_TRUE((*ring)->submit(slot));
    ids.push_back((*prof)->current_frame_id());
    (*prof)->next_frame();
  }
  ASSERT_TRUE((*ring)->wait_all());
  (*prof)->retire_frame(ids[kFrames - 2]);
  (*prof)->retire_frame(ids[kFrames - 1]);
  (*prof)->collect();
  const ProfilerCounters c = (*prof)->counters();
  EXPECT_EQ(c.zones_dropped, 0u);
  EXPECT_EQ(c.zones_invalid, 0u);
  EXPECT_EQ(c.zones_ok, 2u * kFrames);
  if (has_surface) {
    int64_t fastest_empty = std::numeric_limits<int64_t>::max();
    int64_t fastest_clears = std::numeric_limits<int64_t>::max();
    for (uint64_t id : ids) {
      const auto f = (*prof)->frame(id);
      if (!f || f->zones.size() != 2) continue;
      fastest_empty = std::min(fastest_empty, f->zones[0].duration_ns);
      fastest_clears = std::min(fastest_clears, f->zones[1].duration_ns);
    }
    ASSERT_NE(fastest_clears, std::numeric_limits<int64_t>::max());
    EXPECT_GT(fastest_clears, fastest_empty);
  }
}

// gl::attach_current: one object on the program's context; the GL loop
// closes each frame after its swap and calls frame() once more at the end,
// yet every frame in the stat window holds the zone, and the mapper places
// the zones on the host clock where the context can calibrate.
TEST_P(GlAttachTest, OneObjectOnTheProgramsContext) {
  auto gpu = gl::attach_current({.name = "program", .frames_in_flight = 2});
  if (!gpu) GTEST_SKIP() << gpu.error().message;
  constexpr int kFrames = 6;
  for (int frame = 0; frame < kFrames; ++frame) {
    { LATLAB_GPU_ZONE(*gpu, (*gpu)->context(), "frame"); }
    program_->finish();  // the frame is done: at most one on the GPU
    (*gpu)->frame();
  }
  (*gpu)->frame();  // on the open, empty frame: no empty frame is collected
  program_->finish();
  ASSERT_TRUE((*gpu)->finish());
  EXPECT_EQ((*gpu)->counters().frames_collected, static_cast<uint64_t>(kFrames));
  EXPECT_EQ((*gpu)->counters().zones_ok, static_cast<uint64_t>(kFrames));
  const auto stats = (*gpu)->stats();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].frames, static_cast<uint32_t>(kFrames));
  EXPECT_NE((*gpu)->stat_table().find("the newest 6 of 6 frames collected"), std::string::npos)
      << (*gpu)->stat_table();
  EXPECT_EQ((*gpu)->clock().available(), !(*gpu)->context()->durations_only())
      << (*gpu)->clock().reason();
  EXPECT_EQ(eglGetCurrentContext(), program_->context);
}

// A GL timestamp of the program's context lands on the host clock between
// the host reads around it, through the ClockSync's mapper.
TEST_P(GlAttachTest, TimestampsMapOntoTheHostClock) {
  auto ctx = attach({.timer = GlTimer::timestamp});
  if (!ctx) GTEST_SKIP() << skip_;
  const auto clock = start_clock_sync(*ctx);
  ASSERT_TRUE(clock->available()) << clock->reason();
  auto slots = GlTimestampSlots::create(*ctx, {.count = 2, .disjoint_probe = {}});
  ASSERT_TRUE(slots) << slots.error().message;
  program_->finish();
  const int64_t before = host_now_ns();
  slots.value()->write(ctx.get(), 0, TimestampEdge::end);
  program_->finish();
  const int64_t after = host_now_ns();
  SlotReading r[1];
  slots.value()->read(0, r);
  ASSERT_NE(r[0].available, 0u);
  const auto mapped = clock->mapper()(r[0].ticks);
  ASSERT_TRUE(mapped.has_value());
  EXPECT_GE(mapped->host_ns + mapped->error_ns, before);
  EXPECT_LE(mapped->host_ns - mapped->error_ns, after);
}

// GL_TIME_ELAPSED on request: durations only, and no calibration.
TEST_P(GlAttachTest, ElapsedTimerGivesDurationsOnly) {
  auto ctx = attach({.timer = GlTimer::elapsed});
  if (!ctx) GTEST_SKIP() << skip_;
  EXPECT_TRUE(ctx->durations_only());
  const auto clock = start_clock_sync(*ctx);
  EXPECT_FALSE(clock->available());
  EXPECT_NE(clock->reason().find("GL_TIME_ELAPSED"), std::string::npos) << clock->reason();
}

INSTANTIATE_TEST_SUITE_P(Contexts, GlAttachTest,
                         ::testing::Values(ProgramGl::Kind::gles3_pbuffer,
                                           ProgramGl::Kind::gl_core_surfaceless),
                         [](const auto& param_info) {
                           return param_info.param == ProgramGl::Kind::gles3_pbuffer
                                      ? std::string("Gles3Pbuffer")
                                      : std::string("GlCoreSurfaceless");
                         });

TEST(GlAttach, NoCurrentContextIsAnError) {
  eglReleaseThread();
  const auto ctx = GlContext::attach_current();
  ASSERT_FALSE(ctx);
  EXPECT_NE(ctx.error().message.find("no EGL context is current"), std::string::npos)
      << ctx.error().message;
}

}  // namespace
}  // namespace latlab::test
