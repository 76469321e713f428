// `latlab profile --queues all`'s driver (profile_queues_run.hpp).
// This driver exists to show the profiler: its zones stay in whatever
// LATLAB_ENABLE_PROFILER the build chose for user code (defined before the
// profiler's header is first included).
#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/bench/profile_queues_run.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "latlab/calibrator.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_queues.hpp"
#include "profile_frame.hpp"

namespace latlab {
namespace {

// Zones per frame of each role: its command buffer and the zones inside.
uint64_t role_zones(QueueRole role) {
  switch (role) {
    case QueueRole::upload:
      return 3;
    case QueueRole::async_compute:
      return 3;
    case QueueRole::graphics:
      return 9;  // cmdbuf + the 8 of the reference frame
    case QueueRole::marker:
      return 1;
  }
  return 0;
}

// Each role's command-buffer span on the host clock, per frame, from the
// profilers' frame sinks.
struct CommandBufferSpans {
  struct Span {
    bool mapped = false;
    int64_t begin_ns = 0;
    int64_t end_ns = 0;
  };
  std::vector<std::string> zone_names;   // "cmdbuf <role>", per role
  std::vector<std::vector<Span>> spans;  // [role][frame]

  void add(const ProfilerFrame& f) {
    for (const ProfilerZone& z : f.zones) {
      if (!z.ok() || !z.host_mapped || !is_command_buffer_zone(z.name)) continue;
      for (size_t r = 0; r < zone_names.size(); ++r) {
        if (zone_names[r] != z.name || f.frame_id >= spans[r].size()) continue;
        spans[r][f.frame_id] = {true, z.gpu_begin_host_ns, z.gpu_end_host_ns};
      }
    }
  }
};

// One device's run in progress: the rig's queues with their profilers.
struct DeviceRun {
  QueuesProfileRig* rig = nullptr;
  std::vector<std::unique_ptr<GpuProfiler>> profilers;  // per rig queue
  CommandBufferSpans spans;
};

// Records role `r`'s command buffer: its zone and its steps.
Result<void> record_role(DeviceRun& run, size_t r, GpuCommandStream s, uint32_t slot,
                         uint64_t frame, uint32_t c) {
  QueuesProfileRig& rig = *run.rig;
  const QueueRoleInfo& role = rig.roles()[r];
  GpuProfiler& prof = *run.profilers[role.queue];
  auto step = [&](QueueStep st) { return rig.record_step(s, st, slot, frame, c); };
  switch (role.role) {
    case QueueRole::upload: {
      LATLAB_GPU_COMMAND_BUFFER(prof, s, "upload");
      {
        LATLAB_GPU_ZONE(prof, s, "upload.fill");
        if (auto e = step(QueueStep::upload_fill); !e) return e;
      }
      LATLAB_GPU_ZONE(prof, s, "upload.copy");
      return step(QueueStep::upload_copy);
    }
    case QueueRole::async_compute: {
      LATLAB_GPU_COMMAND_BUFFER(prof, s, "async compute");
      {
        LATLAB_GPU_ZONE(prof, s, "async.consume");
        if (auto e = step(QueueStep::async_consume); !e) return e;
      }
      LATLAB_GPU_ZONE(prof, s, "async.simulate");
      return step(QueueStep::async_simulate);
    }
    case QueueRole::graphics: {
      LATLAB_GPU_COMMAND_BUFFER(prof, s, "graphics");
      return profile_detail::record_reference_frame(
          prof, s, c, true, [&](ProfilePass p, uint32_t pc) { return rig.record_pass(s, p, pc); });
    }
    case QueueRole::marker: {
      LATLAB_GPU_COMMAND_BUFFER(prof, s, "marker");
      return {};
    }
  }
  return {};
}

// Records and submits every role's command buffer of one frame into `slot`.
Result<void> run_frame(DeviceRun& run, uint32_t slot, uint64_t frame, uint32_t complexity,
                       ChromeTraceWriter* trace) {
  QueuesProfileRig& rig = *run.rig;
  for (size_t r = 0; r < rig.roles().size(); ++r) {
    const int64_t r0 = host_now_ns();
    auto s = rig.begin(r, slot);
    if (!s) return s.error();
    if (auto rec = record_role(run, r, s.value(), slot, frame, complexity); !rec) return rec;
    const int64_t s0 = host_now_ns();
    if (auto sub = rig.submit(r, slot); !sub) return sub;
    if (trace != nullptr) {
      const std::string& label = rig.roles()[r].label;
      trace->add_span("CPU main", "record " + label, r0, s0);
      trace->add_span("CPU main", "submit " + label, s0, host_now_ns());
    }
  }
  return {};
}

// The plan's frames, frames_in_flight at once, then waits for all and
// collects. An interrupt stops it after the frame it is in.
Result<void> run_frames(const QueuesProfilePlan& plan, DeviceRun& run, ChromeTraceWriter* trace,
                        const std::atomic<bool>* stop) {
  for (uint64_t frame = 0; frame < plan.frames && (stop == nullptr || !stop->load()); ++frame) {
    const auto slot = static_cast<uint32_t>(frame % plan.frames_in_flight);
    const int64_t w0 = host_now_ns();
    auto waited = run.rig->wait_slot(slot);
    if (!waited) return waited.error();
    if (waited.value() && trace != nullptr)
      trace->add_span("CPU main", "fence wait", w0, host_now_ns());
    if (frame > 0) {
      for (auto& p : run.profilers) p->next_frame();
    }
    if (auto f = run_frame(run, slot, frame, plan.complexity, trace); !f) return f;
  }
  if (auto w = run.rig->wait_all(); !w) return w;
  for (auto& p : run.profilers) {
    p->next_frame();  // closes the last frame; every result is available now
    p->collect();
  }
  return {};
}

// A profiler per queue on the rig's slots, mapped through `cal`, feeding
// the command-buffer spans and the trace.
Result<void> make_profilers(const QueuesProfilePlan& plan, DeviceRun& run, const Calibrator& cal,
                            ChromeTraceWriter* trace) {
  const auto& queues = run.rig->queues();
  for (size_t q = 0; q < queues.size(); ++q) {
    const GpuProfilerDesc desc{.name = queues[q].track,
                               .max_zones_per_frame = 64,
                               .frames_in_flight = plan.frames_in_flight,
                               .stat_window_frames = plan.frames,
                               .cpu_zone_times = !plan.trace.empty()};
    auto slots = run.rig->make_slots(q, GpuProfiler::slots_needed(desc));
    if (!slots) return slots.error();
    auto prof = GpuProfiler::create(slots.value(), desc);
    if (!prof) return prof.error();
    const Calibrator* c = &cal;
    prof.value()->set_clock_mapper(queue_clock_mapper([c] { return c->fit(); }, queues[q].ticks));
    prof.value()->set_frame_sink([trace, &run, name = desc.name](const ProfilerFrame& f) {
      run.spans.add(f);
      if (trace != nullptr) trace->add_frame(name, f);
    });
    run.profilers.push_back(std::move(prof.value()));
  }
  return {};
}

size_t role_index(const QueuesProfileRig& rig, QueueRole role) {
  const auto& roles = rig.roles();
  for (size_t i = 0; i < roles.size(); ++i) {
    if (roles[i].role == role) return i;
  }
  return roles.size();
}

QueuesOverlap overlap(const DeviceRun& run, QueueRole a, QueueRole b) {
  const size_t ia = role_index(*run.rig, a), ib = role_index(*run.rig, b);
  const auto& sa = run.spans.spans[ia];
  const auto& sb = run.spans.spans[ib];
  QueuesOverlap out{.role = run.rig->roles()[ia].label,
                    .with = run.rig->roles()[ib].label,
                    .same_queue = run.rig->roles()[ia].family == run.rig->roles()[ib].family,
                    .frames = 0,
                    .frames_overlapping = 0,
                    .avg_overlap_ms = std::nullopt};
  double sum_ns = 0;
  for (size_t f = 0; f < sa.size() && f < sb.size(); ++f) {
    if (!sa[f].mapped || !sb[f].mapped) continue;
    ++out.frames;
    const int64_t o =
        std::min(sa[f].end_ns, sb[f].end_ns) - std::max(sa[f].begin_ns, sb[f].begin_ns);
    if (o > 0) {
      ++out.frames_overlapping;
      sum_ns += static_cast<double>(o);
    }
  }
  if (out.frames > 0) out.avg_overlap_ms = sum_ns / static_cast<double>(out.frames) / 1e6;
  return out;
}

QueuesSemaphoreOrder semaphore_order(const DeviceRun& run, int64_t error_ns) {
  const auto& up = run.spans.spans[role_index(*run.rig, QueueRole::upload)];
  const auto& as = run.spans.spans[role_index(*run.rig, QueueRole::async_compute)];
  QueuesSemaphoreOrder out{
      .frames = 0, .async_began_before_upload_ended = 0, .tolerance_ns = error_ns};
  for (size_t f = 0; f < up.size() && f < as.size(); ++f) {
    if (!up[f].mapped || !as[f].mapped) continue;
    ++out.frames;
    if (as[f].begin_ns + error_ns < up[f].end_ns) ++out.async_began_before_upload_ended;
  }
  return out;
}

// The figures of a device whose frames ran.
void summarize(const QueuesProfilePlan& plan, const DeviceRun& run, QueuesDeviceResult& out) {
  for (size_t q = 0; q < run.profilers.size(); ++q) {
    const GpuProfiler& p = *run.profilers[q];
    const ProfilerCounters c = p.counters();
    out.queues.push_back({run.rig->queues()[q], p.stats(), c});
    out.counters.frames_collected += c.frames_collected;
    out.counters.frames_without_queries += c.frames_without_queries;
    out.counters.zones_ok += c.zones_ok;
    out.counters.zones_dropped += c.zones_dropped;
    out.counters.zones_invalid += c.zones_invalid;
  }
  for (const auto& r : out.roles) out.zones_expected += role_zones(r.role) * plan.frames;
  out.overlap = {overlap(run, QueueRole::upload, QueueRole::graphics),
                 overlap(run, QueueRole::async_compute, QueueRole::graphics)};
  out.semaphore_order = semaphore_order(run, out.fit ? 2 * out.fit->base_error_ns : 0);
  out.rig = run.rig->report();
}

void fail(QueuesDeviceResult& out, const Error& e, ProfileFailureKind kind) {
  out.failure = ProfileFailure{e.message, kind, out.device};
}

// The frame on one opened device.
void run_rig(const QueuesProfilePlan& plan, const QueuesDevice& device, QueuesProfileRig& rig,
             ChromeTraceWriter* trace, const std::atomic<bool>* stop, QueuesDeviceResult& out) {
  const ProfileClock clock = rig.clock();
  Calibrator calibrator(clock.sample, clock.ticks);
  if (const Result<void> c = calibrator.calibrate_now(); !c) {
    out.mapping = "none (" + c.error().message + ")";
  } else {
    calibrator.start_periodic();
    out.mapping = clock.domain + ", one clock model for every queue, refreshed every 1 s";
  }
  DeviceRun run{.rig = &rig, .profilers = {}, .spans = {}};
  if (auto p = rig.plan(plan.frames_in_flight, device.track_prefix); !p)
    return fail(out, p.error(), ProfileFailureKind::missing_capability);
  if (auto p = make_profilers(plan, run, calibrator, trace); !p)
    return fail(out, p.error(), ProfileFailureKind::missing_capability);
  if (auto w = rig.build(plan.frames_in_flight); !w)
    return fail(out, w.error(), ProfileFailureKind::run_failed);
  out.planned = true;
  out.roles = rig.roles();
  out.unavailable = rig.unavailable();
  for (const auto& r : rig.roles()) {
    run.spans.zone_names.push_back(kCommandBufferZonePrefix + r.label);
    run.spans.spans.emplace_back(plan.frames);
  }
  if (auto r = run_frames(plan, run, trace, stop); !r)
    return fail(out, r.error(), ProfileFailureKind::run_failed);
  calibrator.stop();
  out.fit = calibrator.fit();
  summarize(plan, run, out);
}

QueuesDeviceResult run_device(const QueuesProfilePlan& plan, ProfileRigDesc desc,
                              const QueuesDevice& device, OpenQueuesProfileRig open,
                              const QueuesHooks& hooks, ChromeTraceWriter* trace) {
  QueuesDeviceResult out;
  out.selector = device.selector;
  desc.device = device.selector;
  desc.on_line = hooks.on_line;
  ProfileFailure failure;
  const std::unique_ptr<QueuesProfileRig> rig = open(desc, plan.all_queues, failure);
  if (!rig) {
    out.failure = failure;
    return out;
  }
  out.device = rig->device_name();
  run_rig(plan, device, *rig, trace, hooks.interrupt, out);
  return out;
}

}  // namespace

QueuesProfileResult run_profile_queues(const QueuesProfilePlan& plan, const ProfileRigDesc& rig,
                                       const std::vector<QueuesDevice>& devices,
                                       OpenQueuesProfileRig open, const QueuesHooks& hooks) {
  QueuesProfileResult out;
  if (!plan.trace.empty()) {
    out.trace = std::make_unique<ChromeTraceWriter>();
    if (auto o = out.trace->open(plan.trace); !o) {
      out.trace_not_opened = o.error().message;
      return out;
    }
  }
  const auto stopped = [&] { return hooks.interrupt != nullptr && hooks.interrupt->load(); };
  for (const QueuesDevice& d : devices) {
    if (stopped()) break;  // no further device
    if (hooks.device_start) hooks.device_start(d);
    if (out.trace && !d.trace_group.empty()) out.trace->set_gpu_group(d.trace_group);
    out.devices.push_back(run_device(plan, rig, d, open, hooks, out.trace.get()));
    if (hooks.device_done) hooks.device_done(out.devices.back());
  }
  if (stopped()) out.partial = "interrupted";
  profile_detail::close_trace(out);
  return out;
}

}  // namespace latlab
