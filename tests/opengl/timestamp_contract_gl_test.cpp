// The timestamp contract suite on OpenGL (llvmpipe through EGL on CI),
// KHR_debug on, in each context kind and timer: desktop GL or GLES 3.x,
// GL_TIMESTAMP pairs or the GL_TIME_ELAPSED fallback (durations only).
#include "conformance/timestamp_contract.hpp"
#include "one_mesa_worker.hpp"
#include "opengl/gl_fixture.hpp"

namespace latlab::test {
namespace {

// One context kind and timer: the rig's type parameter.
template <GlApiKind Api, GlTimer Timer>
struct GlMode {
  static constexpr GlApiKind kApi = Api;
  static constexpr GlTimer kTimer = Timer;
};

// Passes issued into the current context; a fence per frame. GL has no way
// to hold submitted work from the host.
template <class Mode>
class GlRig {
 public:
  static constexpr bool kGles = Mode::kApi == GlApiKind::gles;
  static constexpr bool kElapsed = Mode::kTimer == GlTimer::elapsed;
  // elapsed: GL_TIME_ELAPSED, forced where GL_TIMESTAMP exists (llvmpipe has both).
  static constexpr const char* kName = kGles ? (kElapsed ? "gl_gles_elapsed" : "gl_gles")
                                             : (kElapsed ? "gl_elapsed" : "gl_desktop_or_auto");
  // About 16 ms here: llvmpipe's scheduling delays of a few ms on a busy
  // 2-core machine do not hide it.
  static constexpr uint32_t kScaleBase = 1024;

  std::optional<std::string> open(const RigOptions& opts) {
    if (opts.one_worker) use_one_mesa_worker();
    auto ctx = GlContext::create(
        {.device = gl_test_device(), .api = Mode::kApi, .debug = true, .timer = Mode::kTimer});
    if (!ctx) return "no GL context with timer queries here: " + ctx.error().message;
    ctx_ = std::move(ctx.value());
    EXPECT_TRUE(ctx_->is_current());
    if (kGles) {
      EXPECT_TRUE(ctx_->gles());
    }
    EXPECT_EQ(ctx_->durations_only(), kElapsed);
    // llvmpipe's GL_TIME_ELAPSED counts rasterizer time only: a compute
    // dispatch reads 1 ns (docs/usage.md). Fragment passes are timed by
    // every driver.
    const WorkloadForm form = ctx_->report().compute_shaders && !kElapsed ? WorkloadForm::compute
                                                                          : WorkloadForm::fragment;
    auto w = GlWorkload::create(*ctx_, opts.work_side, opts.work_side, form);
    if (!w) {
      ADD_FAILURE() << w.error().message;
      return std::nullopt;
    }
    work_ = std::move(w.value());
    return std::nullopt;
  }
  void close() {
    if (!ctx_) return;
    for (uint32_t s = 0; s < kRigInFlight; ++s) drop_fence(s);
    work_.reset();
    if (ctx_->is_current()) ctx_->drain_gl_errors("end of test");
    std::string all;
    for (const auto& m : ctx_->debug_messages()) all += m + "\n";
    EXPECT_EQ(ctx_->debug_error_count(), 0u) << all;
    ctx_.reset();
  }
  Result<std::unique_ptr<TimestampQueryPool>> make_pool(const QueryPoolDesc& desc) {
    return create_gl_query_pool(*ctx_, desc);
  }
  TickFormat expected_ticks() {
    if (kElapsed) return TickFormat{1, 1, 64};  // GL_TIME_ELAPSED: ns spans, no clock to wrap
    GLint bits = 0;
    api().GetQueryiv(GL_TIMESTAMP, GL_QUERY_COUNTER_BITS, &bits);
    return TickFormat{1, 1, static_cast<uint32_t>(bits)};
  }
  // llvmpipe charges a frame's first timestamp with flushing the previous
  // scene (about 4 ms here): an untimed pass leads each frame.
  void begin(uint32_t slot) {
    ASSERT_NO_FATAL_FAILURE(wait(slot));
    work_->record_pass(1, 0);
  }
  GpuCommandStream stream(uint32_t /*slot*/) { return ctx_.get(); }
  void barrier(uint32_t /*slot*/) {}
  void work(uint32_t /*slot*/, uint32_t complexity, uint32_t index) {
    work_->record_pass(complexity, index);
  }
  void submit(uint32_t slot) {
    fences_[slot] = api().FenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    api().Flush();
  }
  void wait(uint32_t slot) {
    if (fences_[slot] == nullptr) return;
    const GLenum r =
        api().ClientWaitSync(fences_[slot], GL_SYNC_FLUSH_COMMANDS_BIT, 20'000'000'000ull);
    drop_fence(slot);
    ASSERT_TRUE(r == GL_CONDITION_SATISFIED || r == GL_ALREADY_SIGNALED)
        << "fence of frame slot " << slot;
  }
  std::optional<std::string> cannot_hold() {
    return "GL has no host-controlled wait to hold submitted work";
  }
  void hold(uint32_t /*slot*/) { ADD_FAILURE() << "GL cannot hold work"; }
  void release() {}
  std::optional<std::string> cannot_write_late() {
    return "GL cannot hold work: nothing can land late";
  }
  std::optional<std::string> reads_may_wait() { return std::nullopt; }
  std::optional<std::string> dispose_needs_no_wait() {
    return "glDeleteQueries of a query in flight is defined (the driver keeps it until done)";
  }
  // 16x apart: a 4 ms scheduling delay in every frame of one run once hid the
  // step; 256x apart is what survives a busy 2-core machine.
  bool separates_small_work() { return false; }
  // The GLES and elapsed variants run the cases that time work in frames.
  std::optional<std::string> skips(ContractCase c) {
    if (!kGles && !kElapsed) return std::nullopt;
    switch (c) {
      case ContractCase::pairs_ordered:
      case ContractCase::results_map:
      case ContractCase::more_work:
      case ContractCase::tiny_pool:
        return std::nullopt;
      default:
        return std::string("the gl_desktop_or_auto rig runs it; ") + kName +
               " changes only the context kind or timer";
    }
  }

 private:
  const gl::Api& api() { return ctx_->state().api; }
  void drop_fence(uint32_t slot) {
    if (fences_[slot] == nullptr) return;
    api().DeleteSync(fences_[slot]);
    fences_[slot] = nullptr;
  }
  std::unique_ptr<GlContext> ctx_;
  std::unique_ptr<GlWorkload> work_;
  GLsync fences_[kRigInFlight] = {};
};

using GlRigs = ::testing::Types<GlRig<GlMode<GlApiKind::automatic, GlTimer::automatic>>,
                                GlRig<GlMode<GlApiKind::gles, GlTimer::automatic>>,
                                GlRig<GlMode<GlApiKind::automatic, GlTimer::elapsed>>,
                                GlRig<GlMode<GlApiKind::gles, GlTimer::elapsed>>>;
INSTANTIATE_TYPED_TEST_SUITE_P(Gl, TimestampContract, GlRigs, RigName);

}  // namespace
}  // namespace latlab::test
