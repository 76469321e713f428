// GlLatencyDevice: the latency engine's device interface on GL. Frame i of
// the ring is timed by slots 2i and 2i+1 and completes through a fence sync.
#include <array>
#include <optional>

#include "backends/opengl/gl_state.hpp"
#include "latlab/bench/gl_rig.hpp"
#include "latlab/host_clock.hpp"

namespace latlab {
namespace {

constexpr uint32_t kMaxFramesInFlight = 8;
constexpr uint64_t kFrameTimeoutNs = 20'000'000'000ull;  // a frame that takes longer is an error

}  // namespace

struct GlLatencyDevice::Impl {
  std::unique_ptr<GlContext> ctx;
  DeviceInfo info;
  uint32_t frames_in_flight = 4;
  std::shared_ptr<GlTimestampSlots> slots;
  std::unique_ptr<GlWorkload> workload;
  struct InFlight {
    bool used = false;
    uint64_t frame_id = 0;
    GLsync fence = nullptr;
    // The last waited frame's fence, deleted when the slot is used again:
    // the poller may still look at it after wait_frame() returned.
    GLsync retired = nullptr;
  };
  std::array<InFlight, kMaxFramesInFlight> ring{};
};

GlLatencyDevice::GlLatencyDevice(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<GlLatencyDevice>> GlLatencyDevice::create(const GlLatencyDeviceDesc& desc) {
  if (desc.frames_in_flight < 1 || desc.frames_in_flight > kMaxFramesInFlight) {
    return make_error("GlLatencyDeviceDesc::frames_in_flight must be 1..8");
  }
  auto impl = std::make_unique<Impl>();
  auto ctx = GlContext::create(desc.context);
  if (!ctx) return ctx.error();
  if (ctx.value()->durations_only()) {
    return make_error(gl_elapsed_only(
        *ctx.value(), "the latency path needs GPU begin/end on the host clock (GL_TIMESTAMP)"));
  }
  impl->ctx = std::move(ctx.value());
  impl->frames_in_flight = desc.frames_in_flight;
  const GlDeviceReport& r = impl->ctx->report();
  DeviceInfo& info = impl->info;
  info.backend = "opengl";
  info.name = r.renderer;
  info.driver = r.api + " " + r.version + " (EGL " + r.egl_version + ", " + r.egl_vendor + ")";
  info.ticks = impl->ctx->tick_format();
  info.can_time = r.timestamp_bits > 0;
  info.calibration_domain = kGlCalibrationDomain;
  info.calibration_estimated = true;
  info.missing = r.missing;
  auto slots =
      GlTimestampSlots::create(*impl->ctx, {.count = 2 * kMaxFramesInFlight, .disjoint_probe = {}});
  if (!slots) return slots.error();
  impl->slots = std::move(slots.value());
  // Frames may come from any thread: the context is made current per call.
  impl->ctx->release_current();
  return std::unique_ptr<GlLatencyDevice>(new GlLatencyDevice(std::move(impl)));
}

GlLatencyDevice::~GlLatencyDevice() {
  if (!impl_ || !impl_->ctx) return;
  ScopedGlCurrent current(*impl_->ctx);
  if (current.status().ok()) {
    const gl::Api& api = impl_->ctx->state().api;
    for (auto& f : impl_->ring) {
      if (f.fence != nullptr) {
        // Frames still in flight finish before their objects go.
        api.ClientWaitSync(f.fence, GL_SYNC_FLUSH_COMMANDS_BIT, kFrameTimeoutNs);
        api.DeleteSync(f.fence);
      }
      if (f.retired != nullptr) api.DeleteSync(f.retired);
    }
    impl_->workload.reset();
    impl_->slots.reset();
  }
}

const DeviceInfo& GlLatencyDevice::info() const { return impl_->info; }
GlContext& GlLatencyDevice::context() { return *impl_->ctx; }
const GlContext& GlLatencyDevice::context() const { return *impl_->ctx; }

Result<void> GlLatencyDevice::submit_frame(uint64_t frame_id, const FrameWorkload& work) {
  if (auto why = frame_workload_error(work)) return make_error(*why);
  Impl& m = *impl_;
  std::optional<uint32_t> slot;
  for (uint32_t i = 0; i < m.frames_in_flight; ++i) {
    if (m.ring[i].used && m.ring[i].frame_id == frame_id) {
      return make_error("frame " + std::to_string(frame_id) + " is already in flight");
    }
    if (!m.ring[i].used && !slot) slot = i;
  }
  if (!slot) {
    return make_error(std::to_string(m.frames_in_flight) +
                      " frames are in flight already; wait_frame() first");
  }
  ScopedGlCurrent current(*m.ctx);
  if (!current.status()) return current.status().error();
  const gl::Api& api = m.ctx->state().api;
  if (!m.workload || m.workload->width() != work.width || m.workload->height() != work.height ||
      m.workload->form() != work.form) {
    // GL orders the new objects after frames in flight by itself; the old
    // ones are freed once those frames are done (GL keeps them alive).
    m.workload.reset();
    auto w = GlWorkload::create(*m.ctx, work.width, work.height, work.form);
    if (!w) return w.error();
    m.workload = std::move(w.value());
  }
  const uint32_t pair = 2 * *slot;
  m.slots->reset(pair, 2, /*previous_use_done=*/true);
  m.slots->write(m.ctx.get(), pair, TimestampEdge::begin);
  for (uint32_t p = 0; p < work.passes; ++p) m.workload->record_pass(work.complexity, p);
  m.slots->write(m.ctx.get(), pair + 1, TimestampEdge::end);
  Impl::InFlight& f = m.ring[*slot];
  if (f.retired != nullptr) {
    api.DeleteSync(f.retired);
    f.retired = nullptr;
  }
  f.fence = api.FenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
  api.Flush();  // submit: the GPU starts now, not at the next wait
  if (f.fence == nullptr) {
    return make_error("glFenceSync failed: " + gl::drain_errors(api));
  }
  f.used = true;
  f.frame_id = frame_id;
  return {};
}

Result<void> GlLatencyDevice::prepare_thread() {
  const ScopedGlCurrent current(*impl_->ctx);
  if (!current.status())
    return make_error("preparing the GL context on this thread: " +
                      current.status().error().message);
  return {};
}

Result<GpuFrameTiming> GlLatencyDevice::wait_frame(uint64_t frame_id) {
  Impl& m = *impl_;
  std::optional<uint32_t> slot;
  for (uint32_t i = 0; i < m.frames_in_flight; ++i) {
    if (m.ring[i].used && m.ring[i].frame_id == frame_id) slot = i;
  }
  if (!slot) return make_error("frame " + std::to_string(frame_id) + " is not in flight");
  ScopedGlCurrent current(*m.ctx);
  if (!current.status()) return current.status().error();
  const gl::Api& api = m.ctx->state().api;
  Impl::InFlight& f = m.ring[*slot];
  // Blocking wait, no spin on Mesa (a condition variable); the flush bit
  // makes sure the fence was submitted.
  const GLenum r = api.ClientWaitSync(f.fence, GL_SYNC_FLUSH_COMMANDS_BIT, kFrameTimeoutNs);
  const int64_t wake_ns = host_now_ns();  // first thing after the wait returns
  const GLsync done = f.fence;
  f = Impl::InFlight{};
  f.retired = done;
  if (r == GL_TIMEOUT_EXPIRED) {
    return make_error("the GPU did not finish frame " + std::to_string(frame_id) + " within " +
                      std::to_string(kFrameTimeoutNs / 1'000'000'000ull) + " s");
  }
  if (r == GL_WAIT_FAILED) return make_error("glClientWaitSync failed: " + gl::drain_errors(api));
  GpuFrameTiming t;
  t.fence_status = QueryStatus::ok;
  t.fence_wake_ns = wake_ns;
  // Its fence signalled: the pair is final (read with availability; a slot
  // never written is invalid, never invented).
  SlotReading pair[2];
  m.slots->read(2 * *slot, pair);
  t.gpu_status = completed_pair_status(pair[0], pair[1], m.info.ticks);
  if (t.gpu_status == QueryStatus::ok) {
    t.gpu_begin_ticks = pair[0].ticks;
    t.gpu_end_ticks = pair[1].ticks;
  }
  return t;
}

namespace {

// glClientWaitSync with timeout 0 on a context of its own that shares the
// device's objects, current on the poller's thread for the poller's life.
class GlPoller final : public CompletionPoller {
 public:
  GlPoller(EGLDisplay display, EGLContext context, const gl::Api& api)
      : display_(display), context_(context), api_(api) {}
  ~GlPoller() override {
    eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(display_, context_);
    eglReleaseThread();
  }
  PollStatus poll(const PollTarget& target) override {
    const GLenum r = api_.ClientWaitSync(reinterpret_cast<GLsync>(target.handle), 0, 0);
    if (r == GL_ALREADY_SIGNALED || r == GL_CONDITION_SATISFIED) return PollStatus::complete;
    return r == GL_TIMEOUT_EXPIRED ? PollStatus::pending : PollStatus::failed;
  }

 private:
  EGLDisplay display_;
  EGLContext context_;
  const gl::Api& api_;
};

}  // namespace

std::optional<PollTarget> GlLatencyDevice::poll_target(uint64_t frame_id) {
  for (uint32_t i = 0; i < impl_->frames_in_flight; ++i) {
    const Impl::InFlight& f = impl_->ring[i];
    if (f.used && f.frame_id == frame_id) return PollTarget{reinterpret_cast<uint64_t>(f.fence), 0};
  }
  return std::nullopt;
}

Result<std::unique_ptr<CompletionPoller>> GlLatencyDevice::open_poller() {
  GlContext& ctx = *impl_->ctx;
  std::string why;
  const EGLContext c = gl::create_shared_context(ctx, why);
  if (c == EGL_NO_CONTEXT) return make_error("the GL poller's shared context: " + why);
  const EGLDisplay display = ctx.state().display;
  if (eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, c) != EGL_TRUE) {
    const std::string err = gl::egl_error_name(eglGetError());
    eglDestroyContext(display, c);
    return make_error("the GL poller's shared context: eglMakeCurrent failed (" + err + ")");
  }
  return std::unique_ptr<CompletionPoller>(new GlPoller(display, c, ctx.state().api));
}

Result<CalibrationPair> GlLatencyDevice::sample_calibration() {
  return impl_->ctx->sample_calibration();
}

Result<std::unique_ptr<LatencyDevice>> create_gl_latency_device(const GlLatencyDeviceDesc& desc) {
  auto dev = GlLatencyDevice::create(desc);
  if (!dev) return dev.error();
  return std::unique_ptr<LatencyDevice>(std::move(dev.value()));
}

}  // namespace latlab
