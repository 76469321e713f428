// latlab profile --backend gl: the reference frame of profile.cpp on an
// OpenGL context (EGL, no window), timed by the scoped GPU profiler
// (create_gl_profiler's slots), with the same zone table, frame tree, JSON
// and Chrome trace.
//
// The frame:  frame
//               simulate            compute pass, complexity C
//               lighting
//                 lighting.direct   compute pass, 2C
//                 lighting.indirect compute pass, C
//               post
//                 post.bloom        full-screen fragment pass, C
//                 post.tonemap      full-screen fragment pass, C
// (A context without compute shaders runs fragment passes for all five.)
// Every zone edge is glQueryCounter(GL_TIMESTAMP); with GL_TIME_ELAPSED
// (--gl-timer elapsed, or a driver without timestamp bits) only "frame" is
// timed, the zones inside it are overlapped, and nothing is host mapped, so
// --trace is refused (exit 3). Frames in flight: a fence
// sync after each frame (GlFrameRing); the loop waits for the fence of the
// frame that used the slot `frames in flight` ago, then retires that frame in
// the profiler. Everything GL runs on this (the main) thread, where the
// context is current; only calibration uses the context's own second one.
#include "profile_gl.hpp"

#include <cstdio>

#include "command.hpp"

#if LATLAB_HAVE_OPENGL

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "latlab/bench/gl_rig.hpp"
#include "latlab/calibrator.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/opengl.hpp"
// This command exists to show the profiler: its zones stay in whatever
// LATLAB_ENABLE_PROFILER the build chose for user code.
#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "interrupt_scope.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_opengl.hpp"
#include "latlab/profiler_trace.hpp"
#include "profile_report.hpp"

namespace latlab::cli {
namespace {

constexpr uint32_t kZonesPerFrame = 8;

int fail(const std::string& message, int code) {
  std::fprintf(stderr, "latlab profile: %s\n", message.c_str());
  return code;
}

// The profiler and the objects of the reference frame, on one context.
// Members go in reverse: the ring (waits for its fences), the workloads, the
// profiler, then its slots; the context outlives the rig and is current.
struct GlRig {
  std::shared_ptr<GlTimestampSlots> slots;
  std::unique_ptr<GlGpuProfiler> prof;
  std::unique_ptr<GlWorkload> compute;   // compute passes (fragment without compute shaders)
  std::unique_ptr<GlWorkload> fragment;  // full-screen fragment passes
  std::unique_ptr<GlFrameRing> ring;
  std::vector<std::optional<uint64_t>> frame_of;  // per ring slot: the profiler frame in it
};

// Builds the rig; on failure prints why and returns the exit code.
int make_rig(GlContext& ctx, const GpuProfilerDesc& pdesc, const GlProfileRequest& req,
             GlRig& rig) {
  // create_gl_profiler's slots, held here too for their write_errors().
  auto slots = GlTimestampSlots::create(
      ctx, {.count = GpuProfiler::slots_needed(pdesc), .disjoint_probe = {}});
  if (!slots) return fail(slots.error().message, kExitMissingCapability);
  rig.slots = slots.value();
  auto prof = GlGpuProfiler::create(rig.slots, pdesc);
  if (!prof) return fail(prof.error().message, kExitRunFailed);
  rig.prof = std::move(prof.value());
  const WorkloadForm first =
      ctx.report().compute_shaders ? WorkloadForm::compute : WorkloadForm::fragment;
  auto compute = GlWorkload::create(ctx, req.width, req.height, first);
  if (!compute) return fail(compute.error().message, kExitRunFailed);
  rig.compute = std::move(compute.value());
  auto fragment = GlWorkload::create(ctx, req.width, req.height, WorkloadForm::fragment);
  if (!fragment) return fail(fragment.error().message, kExitRunFailed);
  rig.fragment = std::move(fragment.value());
  auto ring = GlFrameRing::create(ctx, req.frames_in_flight);
  if (!ring) return fail(ring.error().message, kExitRunFailed);
  rig.ring = std::move(ring.value());
  rig.frame_of.assign(req.frames_in_flight, std::nullopt);
  return kExitOk;
}

// The zones of one reference frame (the tree in the header comment).
void record_frame(GlRig& rig, GlContext* stream, uint32_t c) {
  GlGpuProfiler& prof = *rig.prof;
  const uint32_t c2 = std::min<uint32_t>(4096, 2 * c);
  LATLAB_GPU_ZONE(prof, stream, "frame");
  {
    LATLAB_GPU_ZONE(prof, stream, "simulate");
    rig.compute->record_pass(c, 0);
  }
  {
    LATLAB_GPU_ZONE(prof, stream, "lighting");
    {
      LATLAB_GPU_ZONE(prof, stream, "lighting.direct");
      rig.compute->record_pass(c2, 1);
    }
    {
      LATLAB_GPU_ZONE(prof, stream, "lighting.indirect");
      rig.compute->record_pass(c, 2);
    }
  }
  {
    LATLAB_GPU_ZONE(prof, stream, "post");
    {
      LATLAB_GPU_ZONE(prof, stream, "post.bloom");
      rig.fragment->record_pass(c, 0);
    }
    {
      LATLAB_GPU_ZONE(prof, stream, "post.tonemap");
      rig.fragment->record_pass(c, 1);
    }
  }
}

// Waits for the frame that used `slot` (if any) and retires it in the profiler.
Result<void> wait_slot(GlRig& rig, uint32_t slot, ChromeTraceWriter* trace) {
  if (!rig.ring->in_flight(slot)) return {};
  const int64_t w0 = host_now_ns();
  auto waited = rig.ring->wait(slot);
  if (!waited) return waited.error();
  if (!waited.value()) {
    return make_error(fmt::format("the GPU did not finish a frame within {} s",
                                  GlFrameRing::kDefaultTimeoutNs / 1'000'000'000ull));
  }
  if (trace != nullptr) trace->add_span("CPU main", "fence wait", w0, host_now_ns());
  if (auto& frame = rig.frame_of[slot]) {
    rig.prof->retire_frame(*frame);  // its fence signalled: a query never written now never will be
    frame.reset();
  }
  return {};
}

// Records and submits --frames frames, frames_in_flight at once, then waits
// for all and collects; CPU spans go to `trace` when it is not null. An
// interrupt stops it after the frame it is in; `frames_run` counts those recorded.
Result<void> run_frames(const GlProfileRequest& req, GlContext& ctx, GlRig& rig,
                        ChromeTraceWriter* trace, uint64_t& frames_run) {
  const std::atomic<bool>* stop = InterruptScope::flag();
  for (uint64_t frame = 0; frame < req.frames && !stop->load(); ++frame, ++frames_run) {
    const auto slot = static_cast<uint32_t>(frame % req.frames_in_flight);
    if (auto w = wait_slot(rig, slot, trace); !w) return w;
    if (frame > 0) rig.prof->next_frame();  // closes the previous frame, collects what is ready
    const int64_t r0 = host_now_ns();
    const uint64_t id = rig.prof->current_frame_id();
    record_frame(rig, &ctx, req.complexity);
    const int64_t s0 = host_now_ns();
    if (auto s = rig.ring->submit(slot); !s) return s;
    rig.frame_of[slot] = id;
    if (trace != nullptr) {
      trace->add_span("CPU main", "record", r0, s0);
      trace->add_span("CPU main", "submit", s0, host_now_ns());
    }
  }
  for (uint32_t slot = 0; slot < req.frames_in_flight; ++slot) {
    if (auto w = wait_slot(rig, slot, nullptr); !w) return w;
  }
  rig.prof->next_frame();  // closes the last frame; every result is available now
  rig.prof->collect();
  return {};
}

struct GlRunInfo {
  std::string queue_name;  // the profiler's name
  std::string mapping;     // how device ticks reach the host clock
  std::shared_ptr<const ClockFit> fit;
  uint64_t write_errors = 0;
  uint64_t frames_run = 0;
  std::string partial;  // why the run stopped early; "" when it did not
};

nlohmann::json debug_errors_json(const GlProfileRequest& req, const GlContext& ctx) {
  // Not asked for: not measured, so null (never 0).
  return req.debug ? nlohmann::json(ctx.debug_error_count()) : nlohmann::json();
}

void print_json(const GlProfileRequest& req, const GlContext& ctx, const GlRunInfo& run,
                const GpuProfiler& prof, const ChromeTraceWriter& trace, bool trace_written) {
  const GlDeviceReport& d = ctx.report();
  nlohmann::json out = {
      {"backend", "gl"},
      {"device", d.renderer},
      {"api", d.api + " " + d.version},
      {"timer", d.timer},
      {"host_clock", kHostClockName},
      {"settings",
       {{"frames", req.frames},
        {"complexity", req.complexity},
        {"size", fmt::format("{}x{}", req.width, req.height)},
        {"frames_in_flight", req.frames_in_flight},
        {"validation", req.debug}}},
      {"host_mapping", run.mapping},
      {"clock_fit", profile_clock_fit_json(run.fit)},
      {"zones", profile_stats_json(prof.stats())},
      {"counters", profile_counters_json(prof.counters())},
      {"timestamp_write_errors", run.write_errors},
      {"validation_errors", debug_errors_json(req, ctx)},
  };
  if (!req.trace.empty()) {
    out["trace"] = profile_trace_json(req.trace, trace, trace_written, !run.partial.empty());
  }
  fmt::print("{}\n", out.dump(2));
}

void print_text(const GlProfileRequest& req, const GlContext& ctx, const GlRunInfo& run,
                const GpuProfiler& prof, const ChromeTraceWriter& trace, bool trace_written) {
  print_host_mapping_line(run.mapping, run.fit);
  fmt::print("{}\n", format_stat_table(run.queue_name, prof.stats()));
  print_newest_frame_tree(prof, run.queue_name);
  print_counters_line(prof.counters());
  if (ctx.durations_only()) {
    fmt::print(
        "note: GL_TIME_ELAPSED times one span at a time per context: only outermost zones have a "
        "time, the zones inside them are overlapped (not timed)\n");
  } else {
    fmt::print(
        "note: GL_TIMESTAMP is written once every earlier command has completed: zones never "
        "overlap\n");
  }
  if (run.write_errors > 0) fmt::print("timestamp writes refused: {}\n", run.write_errors);
  print_trace_line(req.trace, trace, trace_written, !run.partial.empty());
  if (req.debug) fmt::print("KHR_debug errors: {}\n", ctx.debug_error_count());
}

// After the frames: the missing-zone warning, the trace file, KHR_debug
// findings, the output; returns the exit code.
int report(const GlProfileRequest& req, GlContext& ctx, const GlRunInfo& run,
           const GpuProfiler& prof, ChromeTraceWriter& trace) {
  int code = run.partial.empty() ? kExitOk : kExitRunFailed;
  if (!run.partial.empty()) std::fprintf(stderr, "latlab profile: %s\n", run.partial.c_str());
  const ProfilerCounters counters = prof.counters();
  const uint64_t expected_zones = run.frames_run * kZonesPerFrame;
  warn_untimed_zones(counters, expected_zones);
  const bool want_trace = !req.trace.empty();
  if (want_trace && !close_trace_file(trace, run.partial)) code = kExitWriteFailed;
  const bool trace_written = want_trace && code != kExitWriteFailed;
  if (req.debug) {
    ctx.drain_gl_errors("end of profile");
    if (ctx.debug_error_count() > 0) {
      for (const auto& m : ctx.debug_messages()) std::fprintf(stderr, "  %s\n", m.c_str());
      code = kExitRunFailed;
    }
  }
  if (req.json) {
    print_json(req, ctx, run, prof, trace, trace_written);
  } else {
    print_text(req, ctx, run, prof, trace, trace_written);
  }
  return code;
}

}  // namespace

int profile_gl(const GlProfileRequest& req) {
  if (!req.json) {
    fmt::print("latlab profile: reference frame on OpenGL (EGL), scoped GPU zones\n");
    fmt::print(
        "  device {}  frames {}  complexity {}  size {}x{}  frames in flight {}  trace {}  "
        "validation {}\n",
        req.device.empty() ? "(default)" : req.device, req.frames, req.complexity, req.width,
        req.height, req.frames_in_flight, req.trace.empty() ? "(none)" : req.trace,
        req.debug ? "on (KHR_debug)" : "off");
  }
  const auto timer = parse_gl_timer(req.timer);
  if (!timer)
    return fail("--gl-timer must be auto, timestamp or elapsed (got \"" + req.timer + "\")",
                kExitUsage);
  auto ctx_r = GlContext::create(
      {.device = req.device, .api = GlApiKind::automatic, .debug = req.debug, .timer = *timer});
  if (!ctx_r) return fail(ctx_r.error().message, device_open_exit_code(req.device));
  GlContext& ctx = *ctx_r.value();  // current on this thread from here on
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
    return fail("--trace: " + gl_elapsed_only(ctx, "zones cannot be placed on the host clock"),
                kExitMissingCapability);
  }
  // Device ticks -> host clock: the clock model, fed by a calibrator that
  // refreshes on its own thread on the context's calibration context.
  Calibrator calibrator([&ctx] { return ctx.sample_calibration(); }, ctx.tick_format());
  GlRunInfo run;
  if (ctx.durations_only()) {
    run.mapping = "none (" + gl_elapsed_only(ctx, "no device clock to calibrate") + ")";
  } else if (const Result<void> c = calibrator.calibrate_now(); !c) {
    run.mapping = "none (" + c.error().message + ")";
  } else {
    calibrator.start_periodic();
    run.mapping = std::string(kGlCalibrationDomain) + ", clock model refreshed every 1 s";
  }
  run.queue_name = "gl context (EGL device " + std::to_string(d.index) + ")";
  const GpuProfilerDesc pdesc{.name = run.queue_name,
                              .max_zones_per_frame = 64,
                              .frames_in_flight = req.frames_in_flight,
                              .stat_window_frames = req.frames,
                              .cpu_zone_times = !req.trace.empty()};
  int code = kExitOk;
  {
    GlRig rig;
    if (const int rc = make_rig(ctx, pdesc, req, rig); rc != kExitOk) return rc;
    GpuProfiler& prof = *rig.prof;
    prof.set_clock_mapper([&calibrator](uint64_t t) -> std::optional<MappedTime> {
      const auto fit = calibrator.fit();
      if (!fit) return std::nullopt;
      return fit->map(t);
    });
    ChromeTraceWriter trace;
    if (!open_trace_file(req.trace, trace)) return kExitWriteFailed;
    if (!req.trace.empty())
      prof.set_frame_sink([&](const ProfilerFrame& f) { trace.add_frame(pdesc.name, f); });
    if (auto r = run_frames(req, ctx, rig, req.trace.empty() ? nullptr : &trace, run.frames_run);
        !r) {
      calibrator.stop();
      return fail(r.error().message, kExitRunFailed);
    }
    run.partial = profile_interrupted(InterruptScope::flag(), run.frames_run, req.frames);
    calibrator.stop();
    run.fit = calibrator.fit();
    // A refused write (no context current, another context) is counted; its
    // zone reads invalid after retire_frame, never given a time.
    run.write_errors = rig.slots->write_errors();
    code = report(req, ctx, run, prof, trace);
  }  // the rig goes while the context is current
  return code;
}

}  // namespace latlab::cli

#else  // !LATLAB_HAVE_OPENGL

namespace latlab::cli {

int profile_gl(const GlProfileRequest& /*request*/) {
  std::fprintf(stderr,
               "latlab profile: backend gl is not built (configure with libegl-dev and "
               "libopengl-dev present)\n");
  return kExitMissingCapability;
}

}  // namespace latlab::cli

#endif  // LATLAB_HAVE_OPENGL
