// One device: Loaded's workload, the latency blocks (with the present path
// when there is one), Performance, and the typed result.
#include <utility>

#include "latlab/bench/run_engine.hpp"
#include "latlab/bench/vulkan_rig.hpp"
#include "latlab/vulkan.hpp"
#if LATLAB_HAVE_OPENGL
#include "latlab/bench/gl_rig.hpp"
#include "latlab/opengl.hpp"
#endif

namespace latlab {
namespace {

// Performance alone (mode performance).
RunOutcome run_performance_only(const RunPlan& plan, LatencyDevice& device, RunMeta meta,
                                uint64_t first_frame_id, const RunHooks& hooks) {
  RunOutcome out;
  PerformanceDesc pd;
  pd.first_frame_id = first_frame_id;
  pd.interrupt = hooks.interrupt;
  Result<PerformanceReport> perf = run_performance(device, plan.perf_work, plan.perf_frames, pd);
  if (!perf) {
    out.stop = RunStop::failed;
    out.why = "performance mode failed: " + perf.error().message;
    return out;
  }
  if (!perf->partial_reason.empty() && perf->frames == 0) {  // nothing measured, nothing written
    out.stop = RunStop::nothing_measured;
    out.why = perf->partial_reason;
    return out;
  }
  out.result.meta = std::move(meta);
  out.result.device = device.info();
  out.result.performance.asked = true;
  out.result.performance.report = std::move(perf.value());
  return out;
}

// Performance after the latency blocks (mode all), when they completed.
PerformanceOutcome run_performance_after(const RunPlan& plan, const LatencyRun& run,
                                         LatencyDevice& device, const RunHooks& hooks) {
  PerformanceOutcome out;
  out.asked = plan.want_perf;
  if (!plan.want_perf) return out;
  if (run.partial) {
    out.unavailable = "not run: the latency run stopped early";
    return out;
  }
  PerformanceDesc pd;
  pd.first_frame_id = run.next_frame_id;
  pd.interrupt = hooks.interrupt;
  Result<PerformanceReport> perf = run_performance(device, plan.perf_work, plan.perf_frames, pd);
  if (perf && perf->frames == 0 && !perf->partial_reason.empty()) {
    out.unavailable = out.interrupted = perf->partial_reason;
  } else if (perf) {
    out.interrupted = perf->partial_reason;
    out.report = std::move(perf.value());
  } else {
    out.unavailable = "performance mode failed: " + perf.error().message;
  }
  return out;
}

// The latency blocks of plan.desc on `env`, with the process memory around
// them in `meta`.
Result<LatencyRun> run_latency_blocks(const RunPlan& plan, const RunDeviceEnv& env,
                                      const RunHooks& hooks, RunMeta& meta) {
  LatencyRunEnv le;
  le.device = env.device;
  le.mapper = env.mapper;
  le.time = env.time;
  le.interrupt = hooks.interrupt;
  le.present = env.present != nullptr ? env.present->path.get() : nullptr;
  if (hooks.progress) le.on_progress = hooks.progress;
  meta.memory_before = read_process_memory();
  Result<LatencyRun> result = run_latency(plan.desc, le);
  meta.memory_after = read_process_memory();
  if (hooks.progress_done) hooks.progress_done();
  return result;
}

}  // namespace

RunMeta make_run_meta(const RunPlan& plan, std::string command_line) {
  RunMeta meta;
  meta.mode = plan.mode;
  meta.backend = std::string(backend_name(plan.backend));
  meta.device = plan.device;
  meta.command_line = std::move(command_line);
  meta.created_utc = utc_now_iso8601();
  meta.machine = collect_machine_info();
  return meta;
}

std::optional<ValidationReport> validation_findings(const LatencyDevice& device, bool on) {
  if (!on) return std::nullopt;
#if LATLAB_HAVE_OPENGL
  // GL: KHR_debug's errors and high-severity messages.
  if (const auto* gl = dynamic_cast<const GlLatencyDevice*>(&device); gl != nullptr) {
    return ValidationReport{gl->context().debug_error_count(), gl->context().debug_messages()};
  }
#endif
  const auto* vk = dynamic_cast<const VulkanLatencyDevice*>(&device);
  if (vk == nullptr) return std::nullopt;
  return ValidationReport{vk->context().validation_error_count(),
                          vk->context().validation_messages()};
}

void note_present_unavailable(const PresentSetup& setup, LatencyRun& run) {
  if (!setup.asked) return;
  if (!setup.path) {
    run.unavailable.push_back({"present", setup.unavailable});
    run.unavailable.push_back({"screen", "no present path: " + setup.unavailable});
    return;
  }
  if (!run.present) return;
  if (!run.present->present_wait)
    run.unavailable.push_back({"present_complete", run.present->present_wait_reason});
  bool any = false;
  for (const ScreenObserverInfo& ob : run.present->observers) {
    if (ob.available) {
      any = true;
    } else {
      run.unavailable.push_back({"screen." + ob.name, ob.reason});
    }
  }
  if (!any) run.unavailable.push_back({"screen", "no screen observer could run"});
}

RunOutcome run_on_device(RunPlan& plan, const RunDeviceEnv& env, RunMeta meta,
                         const RunHooks& hooks) {
  RunOutcome out;
  LatencyDevice& device = *env.device;
  LoadedOutcome loaded = prepare_loaded(plan, device, hooks);
  if (!loaded.interrupted.empty()) {  // interrupted during calibration: before any measured frame
    out.stop = RunStop::nothing_measured;
    out.why = loaded.interrupted;
    return out;
  }
  if (plan.want_loaded && !loaded.runs && !plan.want_baseline && !plan.want_perf) {
    out.stop = RunStop::loaded_unavailable;
    out.why = loaded.unavailable;
    return out;
  }
  set_latency_modes(plan, loaded);
  if (!plan.want_latency()) {
    return run_performance_only(plan, device, std::move(meta), loaded.next_frame_id, hooks);
  }
  Result<LatencyRun> run = run_latency_blocks(plan, env, hooks, meta);
  if (!run) {
    out.stop = RunStop::bad_settings;
    out.why = run.error().message;
    return out;
  }
  if (env.present != nullptr) note_present_unavailable(*env.present, run.value());
  if (run->measured_frames_run() == 0 && run->partial) {
    out.stop = RunStop::nothing_measured;
    out.why = run->partial_reason;
    return out;
  }
  RunResult& r = out.result;
  r.performance = run_performance_after(plan, *run, device, hooks);
  meta.validation = validation_findings(device, plan.validation);
  r.meta = std::move(meta);
  r.device = run->device;
  r.latency = std::move(run.value());
  r.loaded = std::move(loaded);
  if (plan.per_frame) r.per_frame = per_frame_of(*r.latency);
  return out;
}

}  // namespace latlab
