// `latlab profile`'s driver over any backend's rig (profile_run.hpp).
// This driver exists to show the profiler: its zones stay in whatever
// LATLAB_ENABLE_PROFILER the build chose for user code (defined before the
// profiler's header is first included).
#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/bench/profile_run.hpp"

#include <fmt/format.h>

#include <memory>
#include <string>
#include <utility>

#include "latlab/calibrator.hpp"
#include "latlab/core/latency_device.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_queues.hpp"
#include "profile_frame.hpp"

namespace latlab {
namespace {

// The clock model: device ticks -> host clock through a calibrator that
// refreshes on its own thread (never in the frame loop). `mapping` says how
// ticks are mapped; null without a device clock.
std::unique_ptr<Calibrator> start_clock_model(const ProfileClock& clock, std::string& mapping) {
  if (!clock.sample) {
    mapping = "none (" + clock.unavailable + ")";
    return nullptr;
  }
  auto calibrator = std::make_unique<Calibrator>(clock.sample, clock.ticks);
  if (const Result<void> c = calibrator->calibrate_now(); !c) {
    mapping = "none (" + c.error().message + ")";
    return calibrator;
  }
  calibrator->start_periodic();
  mapping = clock.domain + ", clock model refreshed every 1 s";
  return calibrator;
}

// Waits for `slot`, retires the frame the rig names, and puts the wait on
// the trace (null: none).
Result<void> wait_slot(ProfileRig& rig, GpuProfiler& prof, uint32_t slot,
                       ChromeTraceWriter* trace) {
  auto w = rig.wait_slot(slot);
  if (!w) return w.error();
  if (!w->waited) return {};
  if (trace != nullptr) trace->add_span("CPU main", rig.wait_name(), w->begin_ns, w->end_ns);
  if (w->retire) prof.retire_frame(*w->retire);
  return {};
}

// Records and submits one frame into `slot`; its CPU spans go to `trace`.
Result<void> run_frame(ProfileRig& rig, GpuProfiler& prof, uint32_t slot, uint32_t complexity,
                       ChromeTraceWriter* trace) {
  const int64_t r0 = host_now_ns();
  const uint64_t id = prof.current_frame_id();
  auto stream = rig.begin(slot);
  if (!stream) return stream.error();
  const GpuCommandStream s = stream.value();
  auto r = profile_detail::record_reference_frame(
      prof, s, complexity, rig.has_post(),
      [&](ProfilePass pass, uint32_t c) { return rig.record_pass(s, pass, c); });
  if (!r) return r;
  const int64_t s0 = host_now_ns();
  if (auto sub = rig.submit(slot, id); !sub) return sub;
  if (trace == nullptr) return {};
  if (rig.launch_span()) {
    trace->add_span("CPU main", "launch", r0, host_now_ns());
  } else {
    trace->add_span("CPU main", "record", r0, s0);
    trace->add_span("CPU main", "submit", s0, host_now_ns());
  }
  return {};
}

// Records and submits the plan's frames, frames_in_flight at once, then
// waits for all and collects. An interrupt stops it after the frame it is
// in; `frames_run` counts those recorded.
Result<void> run_frames(const ProfilePlan& plan, ProfileRig& rig, GpuProfiler& prof,
                        ChromeTraceWriter* trace, const std::atomic<bool>* stop,
                        uint64_t& frames_run) {
  for (uint64_t frame = 0; frame < plan.frames && (stop == nullptr || !stop->load());
       ++frame, ++frames_run) {
    const auto slot = static_cast<uint32_t>(frame % plan.frames_in_flight);
    if (auto w = wait_slot(rig, prof, slot, trace); !w) return w;
    if (frame > 0) prof.next_frame();  // closes the previous frame, collects what is ready
    if (auto r = run_frame(rig, prof, slot, plan.complexity, trace); !r) return r;
  }
  auto retired = rig.wait_all();
  if (!retired) return retired.error();
  for (const uint64_t id : retired.value()) prof.retire_frame(id);
  prof.next_frame();  // closes the last frame; every result is available now
  prof.collect();
  return {};
}

// The profiler on the rig's slots, mapped through `cal` (null: unmapped).
Result<void> build(const ProfilePlan& plan, ProfileRig& rig, const ProfileClock& clock,
                   const Calibrator* cal, ProfileResult& out) {
  const GpuProfilerDesc desc{.name = out.queue_name,
                             .max_zones_per_frame = 64,
                             .frames_in_flight = plan.frames_in_flight,
                             .stat_window_frames = plan.frames,
                             .cpu_zone_times = !plan.trace.empty()};
  auto slots = rig.make_slots(GpuProfiler::slots_needed(desc));
  if (!slots) {
    out.failure = {slots.error().message, ProfileFailureKind::missing_capability};
    return slots.error();
  }
  auto prof = GpuProfiler::create(slots.value(), desc);
  if (!prof) {
    out.failure = {prof.error().message, ProfileFailureKind::run_failed};
    return prof.error();
  }
  out.profiler = std::move(prof.value());
  if (auto b = rig.build(plan.frames_in_flight); !b) {
    out.failure = {b.error().message, ProfileFailureKind::run_failed};
    return b;
  }
  out.profiler->set_clock_mapper(
      queue_clock_mapper([cal] { return cal != nullptr ? cal->fit() : nullptr; }, clock.ticks));
  return {};
}

// Opens the trace and feeds it the collected frames; false when it cannot
// be opened.
bool open_trace(const ProfilePlan& plan, ProfileResult& out) {
  if (plan.trace.empty()) return true;
  out.trace = std::make_unique<ChromeTraceWriter>();
  if (auto o = out.trace->open(plan.trace); !o) {
    out.stop = ProfileStop::trace_not_opened;
    out.failure.message = o.error().message;
    return false;
  }
  ChromeTraceWriter* trace = out.trace.get();
  out.profiler->set_frame_sink(
      [trace, name = out.queue_name](const ProfilerFrame& f) { trace->add_frame(name, f); });
  return true;
}

}  // namespace

ProfileResult run_profile(const ProfilePlan& plan, ProfileRig& rig,
                          const std::atomic<bool>* interrupt) {
  ProfileResult out;
  const ProfileClock clock = rig.clock();
  const std::unique_ptr<Calibrator> calibrator = start_clock_model(clock, out.mapping);
  out.queue_name = rig.queue_name();
  if (!build(plan, rig, clock, calibrator.get(), out)) {
    out.stop = ProfileStop::build_failed;
    return out;
  }
  if (!open_trace(plan, out)) return out;
  if (auto r = run_frames(plan, rig, *out.profiler, out.trace.get(), interrupt, out.frames_run);
      !r) {
    out.stop = ProfileStop::frames_failed;
    out.failure.message = r.error().message;
    return out;
  }
  out.partial = profile_interrupted(interrupt, out.frames_run, plan.frames);
  if (calibrator) calibrator->stop();
  out.fit = calibrator ? calibrator->fit() : nullptr;
  out.zones_expected = out.frames_run * (rig.has_post() ? 8 : 5);
  profile_detail::close_trace(out);
  out.rig = rig.report();
  return out;
}

std::string profile_interrupted(const std::atomic<bool>* interrupt, uint64_t run, uint64_t frames) {
  if (interrupt == nullptr || !interrupt->load()) return "";
  return fmt::format("interrupted after {} of {} frames", run, frames);
}

}  // namespace latlab
