// latlab profile: a multi-pass reference frame (profile_rig.hpp) timed by the
// scoped GPU profiler (nested zones, frames in flight). Prints the `stat gpu`
// table and the newest frame's zone tree, and streams a Chrome trace
// (Perfetto, chrome://tracing) with CPU and GPU tracks on the host clock.
//
// One driver over every backend: the backend table (backend_table.hpp) gives
// the rig that opens the device and records a frame (profile_rig_vulkan.cpp,
// profile_rig_cuda.cpp, profile_rig_gl.cpp); this file owns the options, the
// clock model, the frame loop, Ctrl-C (a partial trace) and the output.
// `--queues all` and device lists run profile_queues.cpp.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "backend_table.hpp"
#include "cli_checks.hpp"
#include "cli_values.hpp"
#include "command.hpp"
#include "file_plan.hpp"
#include "interrupt_scope.hpp"
#include "latlab/calibrator.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_queues.hpp"
#include "latlab/profiler_trace.hpp"
#include "profile_queues.hpp"
#include "profile_rig.hpp"
#include "report/profile_report.hpp"

namespace latlab::cli {
namespace {

constexpr uint32_t kMaxSide = 4096;

struct ProfileOptions {
  ProfileRequest request;        // width and height from `size`
  std::string size = "128x128";  // work size of every pass
  Backend backend = Backend::vulkan;
  // one: the context's queue; all: every Vulkan queue family that can time
  // (profile_queues.cpp)
  std::string queues = "one";
};

int fail(const std::string& message, int code) {
  std::fprintf(stderr, "latlab profile: %s\n", message.c_str());
  return code;
}

void print_settings(const ProfileRequest& req, const CliBackend& be) {
  fmt::print("latlab profile: reference frame on {}, scoped GPU zones{}\n", backend_info(be.id).api,
             be.profile_zones_note);
  std::string validation;
  if (be.validation != nullptr)
    validation = fmt::format("  validation {}", req.validation ? be.validation_on : "off");
  fmt::print("  device {}  frames {}  complexity {}  size {}x{}  frames in flight {}  trace {}{}\n",
             req.device.empty() ? "(default)" : req.device, req.frames, req.complexity, req.width,
             req.height, req.frames_in_flight, req.trace.empty() ? "(none)" : req.trace,
             validation);
}

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

// What the run produced, for the report.
struct ProfileSummary {
  std::string queue_name;  // the profiler's name
  std::string mapping;     // how device ticks map to the host clock
  std::shared_ptr<const ClockFit> fit;
  ChromeTraceWriter trace;  // open with --trace
  bool trace_written = false;
  std::string partial;  // why the run stopped early; "" when it did not
  uint64_t frames_run = 0;
};

// Records and submits --frames frames, frames_in_flight at once, then waits
// for all and collects; CPU spans go to `trace` when it is not null. An
// interrupt stops it after the frame it is in; `frames_run` counts those recorded.
Result<void> run_frames(const ProfileRequest& req, ProfileRig& rig, ChromeTraceWriter* trace,
                        uint64_t& frames_run) {
  GpuProfiler& prof = rig.profiler();
  const std::atomic<bool>* stop = InterruptScope::flag();
  for (uint64_t frame = 0; frame < req.frames && !stop->load(); ++frame, ++frames_run) {
    const auto slot = static_cast<uint32_t>(frame % req.frames_in_flight);
    if (auto w = rig.wait_slot(slot, trace); !w) return w;
    if (frame > 0) prof.next_frame();  // closes the previous frame, collects what is ready
    const int64_t r0 = host_now_ns();
    const uint64_t id = prof.current_frame_id();
    if (auto r = rig.record(slot, req.complexity); !r) return r;
    const int64_t s0 = host_now_ns();
    if (auto s = rig.submit(slot, id); !s) return s;
    if (trace == nullptr) continue;
    if (rig.launch_span()) {
      trace->add_span("CPU main", "launch", r0, host_now_ns());
    } else {
      trace->add_span("CPU main", "record", r0, s0);
      trace->add_span("CPU main", "submit", s0, host_now_ns());
    }
  }
  if (auto w = rig.wait_all(); !w) return w;
  prof.next_frame();  // closes the last frame; every result is available now
  prof.collect();
  return {};
}

// After the frames: the partial run, the missing-zone warning, the trace
// file and the rig's own findings; returns the exit code.
int check_run(const ProfileRequest& req, ProfileRig& rig, ProfileSummary& sum) {
  int code = sum.partial.empty() ? kExitOk : kExitRunFailed;
  if (!sum.partial.empty()) std::fprintf(stderr, "latlab profile: %s\n", sum.partial.c_str());
  warn_untimed_zones(rig.profiler().counters(), sum.frames_run * rig.zones_per_frame());
  if (!req.trace.empty()) {
    sum.trace_written = close_trace_file(sum.trace, sum.partial);
    if (!sum.trace_written) code = kExitWriteFailed;
  }
  return rig.check(code);
}

void print_json(const ProfileRequest& req, ProfileRig& rig, const ProfileSummary& sum) {
  const GpuProfiler& prof = rig.profiler();
  nlohmann::json out = {
      {"host_clock", kHostClockName},
      {"settings",
       {{"frames", req.frames},
        {"complexity", req.complexity},
        {"size", fmt::format("{}x{}", req.width, req.height)},
        {"frames_in_flight", req.frames_in_flight}}},
      {"host_mapping", sum.mapping},
      {"clock_fit", profile_clock_fit_json(sum.fit)},
      {"zones", profile_stats_json(prof.stats())},
      {"counters", profile_counters_json(prof.counters())},
  };
  rig.add_json(out);
  if (!req.trace.empty()) {
    out["trace"] =
        profile_trace_json(req.trace, sum.trace, sum.trace_written, !sum.partial.empty());
  }
  fmt::print("{}\n", out.dump(2));
}

void print_text(const ProfileRequest& req, ProfileRig& rig, const ProfileSummary& sum) {
  const GpuProfiler& prof = rig.profiler();
  print_host_mapping_line(sum.mapping, sum.fit);
  fmt::print("{}\n", format_stat_table(sum.queue_name, prof.stats()));
  print_newest_frame_tree(prof, sum.queue_name);
  print_counters_line(prof.counters());
  rig.print_notes();
  print_trace_line(req.trace, sum.trace, sum.trace_written, !sum.partial.empty());
  rig.print_footer();
}

// The profile on one rig, from its clock model to the output.
int profile_on(const ProfileRequest& req, ProfileRig& rig) {
  ProfileSummary sum;
  const ProfileClock clock = rig.clock();
  const std::unique_ptr<Calibrator> calibrator = start_clock_model(clock, sum.mapping);
  sum.queue_name = rig.queue_name();
  const GpuProfilerDesc pdesc{.name = sum.queue_name,
                              .max_zones_per_frame = 64,
                              .frames_in_flight = req.frames_in_flight,
                              .stat_window_frames = req.frames,
                              .cpu_zone_times = !req.trace.empty()};
  if (auto f = rig.build(pdesc)) return fail(f->message, f->exit_code);
  GpuProfiler& prof = rig.profiler();
  Calibrator* cal = calibrator.get();
  prof.set_clock_mapper(
      queue_clock_mapper([cal] { return cal != nullptr ? cal->fit() : nullptr; }, clock.ticks));
  if (!open_trace_file(req.trace, sum.trace)) return kExitWriteFailed;
  if (!req.trace.empty()) {
    prof.set_frame_sink([&](const ProfilerFrame& f) { sum.trace.add_frame(pdesc.name, f); });
  }
  ChromeTraceWriter* trace = req.trace.empty() ? nullptr : &sum.trace;
  if (auto r = run_frames(req, rig, trace, sum.frames_run); !r) {
    return fail(r.error().message, kExitRunFailed);
  }
  sum.partial = profile_interrupted(InterruptScope::flag(), sum.frames_run, req.frames);
  if (calibrator) calibrator->stop();
  sum.fit = calibrator ? calibrator->fit() : nullptr;
  const int code = check_run(req, rig, sum);
  if (req.json) {
    print_json(req, rig, sum);
  } else {
    print_text(req, rig, sum);
  }
  return code;
}

// The options that CLI11 cannot check alone, and the trace file: kExitOk,
// or kExitUsage after saying why.
int check_profile(const ProfileOptions& opt) {
  const ProfileRequest& req = opt.request;
  // --trace is checked before any device is opened: a run never ends in a
  // trace that cannot be written.
  if (names_stdout(req.trace)) {
    return fail(
        "--trace: standard output carries the profile's table; name a file, a FIFO or /dev/null",
        kExitUsage);
  }
  FilePlan files;
  files.output("--trace", req.trace);
  if (Result<void> r = files.check(); !r) return fail(r.error().message, kExitUsage);
  if (!parse_profile_size(opt.size, kMaxSide)) {
    return fail(
        fmt::format("--size must be WxH with W and H in 1..{} (got \"{}\")", kMaxSide, opt.size),
        kExitUsage);
  }
  const CliBackend& be = cli_backend(opt.backend);
  if (req.validation && be.validation == nullptr) return fail(be.no_validation, kExitUsage);
  if (req.gl_timer != "auto" && opt.backend != Backend::gl) {
    return fail("--gl-timer is an OpenGL option; use --backend gl", kExitUsage);
  }
  if (opt.queues == "all" && !be.queue_families) {
    return fail("--queues all is a Vulkan option (queue families); use --backend vulkan",
                kExitUsage);
  }
  if (profile_names_several_devices(req.device) && !be.queue_families) {
    return fail("--device all or a list is a Vulkan option of profile; use --backend vulkan",
                kExitUsage);
  }
  return kExitOk;
}

// Runs the profile check_profile() accepted.
int profile(ProfileOptions opt) {
  const auto size = parse_profile_size(opt.size, kMaxSide);
  if (!size) return kExitUsage;  // check_profile said why
  ProfileRequest& req = opt.request;
  req.width = size->first;
  req.height = size->second;
  // Installed before the settings are echoed: Ctrl-C from then on stops the
  // frames and writes what was captured (a partial trace), exit 1.
  InterruptScope interrupt;
  if (opt.queues == "all" || profile_names_several_devices(req.device)) {
    return profile_queues({.frames = req.frames,
                           .trace = req.trace,
                           .device = req.device,
                           .complexity = req.complexity,
                           .width = req.width,
                           .height = req.height,
                           .frames_in_flight = req.frames_in_flight,
                           .json = req.json,
                           .validation = req.validation,
                           .all_queues = opt.queues == "all"});
  }
  const CliBackend& be = cli_backend(opt.backend);
  const BackendInfo& info = backend_info(opt.backend);
  if (!info.built) return fail(std::string(info.not_built), kExitMissingCapability);
  if (!req.json) print_settings(req, be);
  ProfileFailure failure;
  const std::unique_ptr<ProfileRig> rig = be.open_profile_rig(req, failure);
  if (!rig) return fail(failure.message, failure.exit_code);
  return profile_on(req, *rig);
}

CommandRunner setup(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "profile", "Profile a multi-pass reference frame with scoped GPU zones (Vulkan, CUDA, GL)");
  auto opt = std::make_shared<ProfileOptions>();
  ProfileRequest& req = opt->request;
  add_backend_option(sub, opt->backend, BackendUse::profile,
                     "GPU backend: vulkan, cuda (a CUDA stream) or gl (OpenGL through EGL, no "
                     "window)");
  sub->add_option("--queues", opt->queues,
                  "Vulkan queues: one (the device's graphics/compute queue) or all (one queue of "
                  "every family that can time: upload, async compute and graphics command "
                  "buffers, each queue its own track)")
      ->capture_default_str()
      ->check(CLI::IsMember({"one", "all"}));
  sub->add_option("--frames", req.frames, "Frames to record")
      ->capture_default_str()
      ->transform(unsigned_in(1, 1000000));
  sub->add_option("--trace", req.trace,
                  "Write a Chrome trace (JSON for Perfetto / chrome://tracing) to this file");
  sub->add_option("--device", req.device,
                  "Device index or name substring (Vulkan default: first discrete GPU, else "
                  "first; CUDA: 0; GL: the first EGL device with timer queries, hardware first); "
                  "Vulkan: all or a comma list profiles each device in turn (the --queues frame)");
  sub->add_option("--complexity", req.complexity,
                  "Arithmetic iterations per element and pass (1..4096)")
      ->capture_default_str()
      ->transform(unsigned_in(1, 4096));
  sub->add_option("--size", opt->size, "Work size WxH of every pass")->capture_default_str();
  sub->add_option("--frames-in-flight", req.frames_in_flight, "Frames on the device at once (1..8)")
      ->capture_default_str()
      ->transform(unsigned_in(1, 8));
  sub->add_flag("--json", req.json, "Print the zone table and counters as JSON");
  sub->add_flag(
      "--validation", req.validation,
      "Enable the Khronos validation layer (gl: a KHR_debug context); errors fail the run");
  sub->add_option("--gl-timer", req.gl_timer,
                  "gl: how zones are timed: auto (GL_TIMESTAMP where it has bits, else "
                  "GL_TIME_ELAPSED; LATLAB_GL_TIMER overrides), timestamp, or elapsed (durations "
                  "only: outermost zones timed, nested ones overlapped, no host mapping or trace)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "timestamp", "elapsed"}));
  return {[opt] { return check_profile(*opt); }, [opt] { return profile(*opt); }};
}

const RegisterCommand kRegister{{"profile", setup, 40}};

}  // namespace
}  // namespace latlab::cli
