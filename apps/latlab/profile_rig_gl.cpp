// `latlab profile` on OpenGL: the reference frame (profile_rig.hpp) on a
// context through EGL (no window). A context without compute shaders runs
// fragment passes for all five. Every zone edge is
// glQueryCounter(GL_TIMESTAMP); with GL_TIME_ELAPSED (--gl-timer elapsed, or
// a driver without timestamp bits) only "frame" is timed, the zones inside
// it are overlapped, and nothing is host mapped, so --trace is refused
// (exit 3). Frames in flight: a fence sync after each frame (GlFrameRing);
// waiting for a slot waits for the fence of the frame that used it, then
// retires that frame in the profiler. Everything GL runs on this (the main)
// thread, where the context is current; only calibration uses the context's
// own second one.
#include <cstdio>

#include "command.hpp"
#include "profile_rig.hpp"

#if LATLAB_HAVE_OPENGL

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "latlab/bench/backend.hpp"
#include "latlab/bench/gl_rig.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/opengl.hpp"
// This command exists to show the profiler: its zones stay in whatever
// LATLAB_ENABLE_PROFILER the build chose for user code.
#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/profiler.hpp"
#include "latlab/profiler_opengl.hpp"

namespace latlab::cli {
namespace {

// The context, the profiler and the objects of the reference frame. Members
// go in reverse: the ring (waits for its fences), the workloads, the
// profiler, its slots, then the context (current on this thread throughout).
class GlProfileRig final : public ProfileRig {
 public:
  GlProfileRig(std::unique_ptr<GlContext> ctx, const ProfileRequest& req)
      : ctx_(std::move(ctx)), req_(req) {}

  std::string queue_name() const override {
    return "gl context (EGL device " + std::to_string(ctx_->report().index) + ")";
  }
  uint32_t zones_per_frame() const override { return 8; }
  ProfileClock clock() override {
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
  std::optional<ProfileFailure> build(const GpuProfilerDesc& desc) override;
  GpuProfiler& profiler() override { return *prof_; }

  Result<void> wait_slot(uint32_t slot, ChromeTraceWriter* trace) override;
  Result<void> record(uint32_t slot, uint32_t complexity) override;
  Result<void> submit(uint32_t slot, uint64_t frame_id) override {
    if (auto s = ring_->submit(slot); !s) return s;
    frame_of_[slot] = frame_id;
    return {};
  }
  Result<void> wait_all() override {
    for (uint32_t slot = 0; slot < frame_of_.size(); ++slot) {
      if (auto w = wait_slot(slot, nullptr); !w) return w;
    }
    return {};
  }

  int check(int code) override {
    if (!req_.validation) return code;
    ctx_->drain_gl_errors("end of profile");
    if (ctx_->debug_error_count() == 0) return code;
    for (const auto& m : ctx_->debug_messages()) std::fprintf(stderr, "  %s\n", m.c_str());
    return kExitRunFailed;
  }
  void add_json(nlohmann::json& out) const override;
  void print_notes() const override;
  void print_footer() const override {
    if (req_.validation) fmt::print("KHR_debug errors: {}\n", ctx_->debug_error_count());
  }

 private:
  // Declared first, so it goes last: the rig's objects go while it is current.
  std::unique_ptr<GlContext> ctx_;
  ProfileRequest req_;
  // create_gl_profiler's slots, held here too for their write_errors().
  std::shared_ptr<GlTimestampSlots> slots_;
  std::unique_ptr<GlGpuProfiler> prof_;
  std::unique_ptr<GlWorkload> compute_;   // compute passes (fragment without compute shaders)
  std::unique_ptr<GlWorkload> fragment_;  // full-screen fragment passes
  std::unique_ptr<GlFrameRing> ring_;
  std::vector<std::optional<uint64_t>> frame_of_;  // per ring slot: the profiler frame in it
};

std::optional<ProfileFailure> GlProfileRig::build(const GpuProfilerDesc& desc) {
  GlContext& ctx = *ctx_;
  auto slots = GlTimestampSlots::create(
      ctx, {.count = GpuProfiler::slots_needed(desc), .disjoint_probe = {}});
  if (!slots) return ProfileFailure{slots.error().message, kExitMissingCapability};
  slots_ = slots.value();
  auto prof = GlGpuProfiler::create(slots_, desc);
  if (!prof) return ProfileFailure{prof.error().message, kExitRunFailed};
  prof_ = std::move(prof.value());
  const WorkloadForm first =
      ctx.report().compute_shaders ? WorkloadForm::compute : WorkloadForm::fragment;
  auto compute = GlWorkload::create(ctx, req_.width, req_.height, first);
  if (!compute) return ProfileFailure{compute.error().message, kExitRunFailed};
  compute_ = std::move(compute.value());
  auto fragment = GlWorkload::create(ctx, req_.width, req_.height, WorkloadForm::fragment);
  if (!fragment) return ProfileFailure{fragment.error().message, kExitRunFailed};
  fragment_ = std::move(fragment.value());
  auto ring = GlFrameRing::create(ctx, desc.frames_in_flight);
  if (!ring) return ProfileFailure{ring.error().message, kExitRunFailed};
  ring_ = std::move(ring.value());
  frame_of_.assign(desc.frames_in_flight, std::nullopt);
  return std::nullopt;
}

Result<void> GlProfileRig::wait_slot(uint32_t slot, ChromeTraceWriter* trace) {
  if (!ring_->in_flight(slot)) return {};
  const int64_t w0 = host_now_ns();
  auto waited = ring_->wait(slot);
  if (!waited) return waited.error();
  if (!waited.value()) {
    return make_error(fmt::format("the GPU did not finish a frame within {} s",
                                  GlFrameRing::kDefaultTimeoutNs / 1'000'000'000ull));
  }
  if (trace != nullptr) trace->add_span("CPU main", "fence wait", w0, host_now_ns());
  if (auto& frame = frame_of_[slot]) {
    prof_->retire_frame(*frame);  // its fence signalled: a query never written now never will be
    frame.reset();
  }
  return {};
}

Result<void> GlProfileRig::record(uint32_t /*slot*/, uint32_t c) {
  GlGpuProfiler& prof = *prof_;
  GlContext* stream = ctx_.get();
  const uint32_t c2 = std::min<uint32_t>(4096, 2 * c);
  LATLAB_GPU_ZONE(prof, stream, "frame");
  {
    LATLAB_GPU_ZONE(prof, stream, "simulate");
    compute_->record_pass(c, 0);
  }
  {
    LATLAB_GPU_ZONE(prof, stream, "lighting");
    {
      LATLAB_GPU_ZONE(prof, stream, "lighting.direct");
      compute_->record_pass(c2, 1);
    }
    {
      LATLAB_GPU_ZONE(prof, stream, "lighting.indirect");
      compute_->record_pass(c, 2);
    }
  }
  {
    LATLAB_GPU_ZONE(prof, stream, "post");
    {
      LATLAB_GPU_ZONE(prof, stream, "post.bloom");
      fragment_->record_pass(c, 0);
    }
    {
      LATLAB_GPU_ZONE(prof, stream, "post.tonemap");
      fragment_->record_pass(c, 1);
    }
  }
  return {};
}

void GlProfileRig::add_json(nlohmann::json& out) const {
  const GlDeviceReport& d = ctx_->report();
  out["backend"] = std::string(backend_name(Backend::gl));
  out["device"] = d.renderer;
  out["api"] = d.api + " " + d.version;
  out["timer"] = d.timer;
  out["settings"]["validation"] = req_.validation;
  // A refused write (no context current, another context) is counted; its
  // zone reads invalid after retire_frame, never given a time.
  out["timestamp_write_errors"] = slots_->write_errors();
  // Not asked for: not measured, so null (never 0).
  out["validation_errors"] =
      req_.validation ? nlohmann::json(ctx_->debug_error_count()) : nlohmann::json();
}

void GlProfileRig::print_notes() const {
  if (ctx_->durations_only()) {
    fmt::print(
        "note: GL_TIME_ELAPSED times one span at a time per context: only outermost zones have a "
        "time, the zones inside them are overlapped (not timed)\n");
  } else {
    fmt::print(
        "note: GL_TIMESTAMP is written once every earlier command has completed: zones never "
        "overlap\n");
  }
  if (slots_->write_errors() > 0)
    fmt::print("timestamp writes refused: {}\n", slots_->write_errors());
}

// Prints the context's line unless --json; a failure where --trace asks for
// host times that GL_TIME_ELAPSED cannot give.
std::optional<ProfileFailure> describe(const GlContext& ctx, const ProfileRequest& req) {
  const GlDeviceReport& d = ctx.report();
  if (!req.json) {
    if (ctx.durations_only()) {
      fmt::print("  on [{}] {}: {} {}, GL_TIME_ELAPSED (durations only)\n", d.index, d.renderer,
                 d.api, d.version);
    } else {
      fmt::print("  on [{}] {}: {} {}, GL_TIMESTAMP 1 ns ticks, {} valid bits\n", d.index,
                 d.renderer, d.api, d.version, d.timestamp_bits);
    }
    for (const auto& m : d.missing) fmt::print("  missing {}: {}\n", m.name, m.reason);
  }
  if (ctx.durations_only() && !req.trace.empty()) {
    return ProfileFailure{
        "--trace: " + gl_elapsed_only(ctx, "zones cannot be placed on the host clock"),
        kExitMissingCapability};
  }
  return std::nullopt;
}

}  // namespace

std::unique_ptr<ProfileRig> open_gl_profile_rig(const ProfileRequest& req,
                                                ProfileFailure& failure) {
  const auto timer = parse_gl_timer(req.gl_timer);
  if (!timer) {
    failure = {"--gl-timer must be auto, timestamp or elapsed (got \"" + req.gl_timer + "\")",
               kExitUsage};
    return nullptr;
  }
  auto ctx = GlContext::create({.device = req.device,
                                .api = GlApiKind::automatic,
                                .debug = req.validation,
                                .timer = *timer});
  if (!ctx) {
    failure = {ctx.error().message, device_open_exit_code(req.device)};
    return nullptr;
  }
  if (auto f = describe(*ctx.value(), req)) {
    failure = std::move(*f);
    return nullptr;
  }
  return std::make_unique<GlProfileRig>(std::move(ctx.value()), req);
}

}  // namespace latlab::cli

#else  // !LATLAB_HAVE_OPENGL

namespace latlab::cli {

std::unique_ptr<ProfileRig> open_gl_profile_rig(const ProfileRequest& /*request*/,
                                                ProfileFailure& failure) {
  failure = {"backend gl is not built (configure with libegl-dev and libopengl-dev present)",
             kExitMissingCapability};
  return nullptr;
}

}  // namespace latlab::cli

#endif  // LATLAB_HAVE_OPENGL
