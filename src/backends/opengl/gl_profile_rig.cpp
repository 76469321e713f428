// The profile rig on OpenGL (latlab/core/profile_rig.hpp): the reference
// frame on a context through EGL (no window). A context without compute
// shaders runs fragment passes for all five. Every zone edge is
// glQueryCounter(GL_TIMESTAMP); with GL_TIME_ELAPSED (--gl-timer elapsed, or
// a driver without timestamp bits) only "frame" is timed, the zones inside
// it are overlapped, and nothing is host mapped, so a trace is refused.
// Frames in flight: a fence sync after each frame (GlFrameRing); waiting for
// a slot waits for the fence of the frame that used it, then retires that
// frame. Everything GL runs on the opening thread, where the context is
// current; only calibration uses the context's own second one.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "latlab/bench/gl_rig.hpp"
#include "latlab/core/profile_rig.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/opengl.hpp"

namespace latlab {
namespace {

// The context and the objects of the reference frame. Members go in
// reverse: the ring (waits for its fences), the workloads, the slots, then
// the context (current on this thread throughout).
class GlProfileRig final : public ProfileRig {
 public:
  GlProfileRig(std::unique_ptr<GlContext> ctx, const ProfileRigDesc& desc)
      : ctx_(std::move(ctx)), desc_(desc) {}

  std::string queue_name() const override {
    return "gl context (EGL device " + std::to_string(ctx_->report().index) + ")";
  }
  ProfileClock clock() override;
  Result<std::shared_ptr<TimestampSlots>> make_slots(uint32_t count) override {
    auto slots = GlTimestampSlots::create(*ctx_, {.count = count, .disjoint_probe = {}});
    if (!slots) return slots.error();
    slots_ = slots.value();  // held for their write_errors()
    return std::shared_ptr<TimestampSlots>(slots_);
  }
  Result<void> build(uint32_t frames_in_flight) override;

  Result<ProfileSlotWait> wait_slot(uint32_t slot) override;
  Result<GpuCommandStream> begin(uint32_t /*slot*/) override {
    return GpuCommandStream{ctx_.get()};
  }
  Result<void> record_pass(GpuCommandStream /*stream*/, ProfilePass pass, uint32_t c) override {
    switch (pass) {
      case ProfilePass::simulate:
        compute_->record_pass(c, 0);
        break;
      case ProfilePass::lighting_direct:
        compute_->record_pass(c, 1);
        break;
      case ProfilePass::lighting_indirect:
        compute_->record_pass(c, 2);
        break;
      case ProfilePass::bloom:
        fragment_->record_pass(c, 0);
        break;
      case ProfilePass::tonemap:
        fragment_->record_pass(c, 1);
        break;
    }
    return {};
  }
  Result<void> submit(uint32_t slot, uint64_t frame_id) override {
    if (auto s = ring_->submit(slot); !s) return s;
    frame_of_[slot] = frame_id;
    return {};
  }
  Result<std::vector<uint64_t>> wait_all() override;
  ProfileRigReport report() override;

 private:
  // Declared first, so it goes last: the rig's objects go while it is current.
  std::unique_ptr<GlContext> ctx_;
  ProfileRigDesc desc_;
  std::shared_ptr<GlTimestampSlots> slots_;
  std::unique_ptr<GlWorkload> compute_;   // compute passes (fragment without compute shaders)
  std::unique_ptr<GlWorkload> fragment_;  // full-screen fragment passes
  std::unique_ptr<GlFrameRing> ring_;
  std::vector<std::optional<uint64_t>> frame_of_;  // per ring slot: the profiler frame in it
};

ProfileClock GlProfileRig::clock() {
  GlContext& ctx = *ctx_;
  if (ctx.durations_only()) {
    return {.sample = {},
            .ticks = ctx.tick_format(),
            .domain = {},
            .unavailable = gl_elapsed_only(ctx, "no device clock to calibrate")};
  }
  // The calibrator samples on the context's own calibration context.
  return {.sample = [&ctx] { return ctx.sample_calibration(); },
          .ticks = ctx.tick_format(),
          .domain = kGlCalibrationDomain,
          .unavailable = {}};
}

Result<void> GlProfileRig::build(uint32_t frames_in_flight) {
  GlContext& ctx = *ctx_;
  const WorkloadForm first =
      ctx.report().compute_shaders ? WorkloadForm::compute : WorkloadForm::fragment;
  auto compute = GlWorkload::create(ctx, desc_.width, desc_.height, first);
  if (!compute) return compute.error();
  compute_ = std::move(compute.value());
  auto fragment = GlWorkload::create(ctx, desc_.width, desc_.height, WorkloadForm::fragment);
  if (!fragment) return fragment.error();
  fragment_ = std::move(fragment.value());
  auto ring = GlFrameRing::create(ctx, frames_in_flight);
  if (!ring) return ring.error();
  ring_ = std::move(ring.value());
  frame_of_.assign(frames_in_flight, std::nullopt);
  return {};
}

Result<ProfileSlotWait> GlProfileRig::wait_slot(uint32_t slot) {
  if (!ring_->in_flight(slot)) return ProfileSlotWait{};
  ProfileSlotWait w;
  w.waited = true;
  w.begin_ns = host_now_ns();
  auto waited = ring_->wait(slot);
  if (!waited) return waited.error();
  if (!waited.value()) {
    return make_error("the GPU did not finish a frame within " +
                      std::to_string(GlFrameRing::kDefaultTimeoutNs / 1'000'000'000ull) + " s");
  }
  w.end_ns = host_now_ns();
  w.retire = frame_of_[slot];  // its fence signalled
  frame_of_[slot].reset();
  return w;
}

Result<std::vector<uint64_t>> GlProfileRig::wait_all() {
  std::vector<uint64_t> retired;
  for (uint32_t slot = 0; slot < frame_of_.size(); ++slot) {
    auto w = wait_slot(slot);
    if (!w) return w.error();
    if (w->retire) retired.push_back(*w->retire);
  }
  return retired;
}

ProfileRigReport GlProfileRig::report() {
  const GlDeviceReport& d = ctx_->report();
  ProfileRigReport r;
  r.names_backend = true;
  r.device = d.renderer;
  r.api = d.api + " " + d.version;
  r.timer = d.timer;
  r.validation = desc_.validation;
  if (desc_.validation) ctx_->drain_gl_errors("end of profile");
  // Not asked for: not measured, so null (never 0).
  r.validation_errors.present = true;
  if (desc_.validation) r.validation_errors.value = ctx_->debug_error_count();
  // A refused write is counted; its zone reads invalid after retirement.
  r.timestamp_write_errors = {.present = true, .value = slots_->write_errors()};
  if (desc_.validation && ctx_->debug_error_count() > 0) {
    r.failed = true;
    r.errors = ctx_->debug_messages();
  }
  r.notes.push_back(ctx_->durations_only()
                        ? "note: GL_TIME_ELAPSED times one span at a time per context: only "
                          "outermost zones have a time, the zones inside them are overlapped "
                          "(not timed)"
                        : "note: GL_TIMESTAMP is written once every earlier command has "
                          "completed: zones never overlap");
  if (slots_->write_errors() > 0)
    r.notes.push_back("timestamp writes refused: " + std::to_string(slots_->write_errors()));
  if (desc_.validation)
    r.footer.push_back("KHR_debug errors: " + std::to_string(ctx_->debug_error_count()));
  return r;
}

// Describes the context; a failure where a trace asks for host times that
// GL_TIME_ELAPSED cannot give.
std::optional<ProfileFailure> describe(const GlContext& ctx, const ProfileRigDesc& desc) {
  const GlDeviceReport& d = ctx.report();
  if (desc.on_line) {
    const std::string head =
        "  on [" + std::to_string(d.index) + "] " + d.renderer + ": " + d.api + " " + d.version;
    desc.on_line(ctx.durations_only() ? head + ", GL_TIME_ELAPSED (durations only)"
                                      : head + ", GL_TIMESTAMP 1 ns ticks, " +
                                            std::to_string(d.timestamp_bits) + " valid bits");
    for (const auto& m : d.missing) desc.on_line("  missing " + m.name + ": " + m.reason);
  }
  if (ctx.durations_only() && desc.trace) {
    return ProfileFailure{
        "--trace: " + gl_elapsed_only(ctx, "zones cannot be placed on the host clock"),
        ProfileFailureKind::missing_capability};
  }
  return std::nullopt;
}

}  // namespace

std::unique_ptr<ProfileRig> open_gl_profile_rig(const ProfileRigDesc& desc,
                                                ProfileFailure& failure) {
  const auto timer = parse_gl_timer(desc.gl_timer);
  if (!timer) {
    failure = {"--gl-timer must be auto, timestamp or elapsed (got \"" + desc.gl_timer + "\")",
               ProfileFailureKind::usage};
    return nullptr;
  }
  auto ctx = GlContext::create({.device = desc.device,
                                .api = GlApiKind::automatic,
                                .debug = desc.validation,
                                .timer = *timer});
  if (!ctx) {
    failure = {ctx.error().message, ProfileFailureKind::device_not_opened};
    return nullptr;
  }
  if (auto f = describe(*ctx.value(), desc)) {
    failure = std::move(*f);
    return nullptr;
  }
  return std::make_unique<GlProfileRig>(std::move(ctx.value()), desc);
}

}  // namespace latlab
