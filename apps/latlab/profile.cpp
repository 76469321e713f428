// latlab profile: a multi-pass reference frame (latlab/core/profile_rig.hpp)
// timed by the scoped GPU profiler (nested zones, frames in flight). Prints
// the `stat gpu` table and the newest frame's zone tree, and streams a Chrome
// trace (Perfetto, chrome://tracing) with CPU and GPU tracks on the host clock.
//
// Options -> a checked plan -> the backend's rig (its row of latlab/bench/backend.hpp) ->
// run_profile (latlab/bench/profile_run.hpp) -> the reporters
// (report/profile_report.hpp). `--queues all` and device lists run
// profile_queues.cpp.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cli_options.hpp"
#include "cli_values.hpp"
#include "command.hpp"
#include "latlab/bench/interrupt_scope.hpp"
#include "latlab/bench/profile_run.hpp"
#include "profile_queues.hpp"
#include "report/reporters/reporters.hpp"

namespace latlab::cli {
namespace {

constexpr uint32_t kMaxSide = 4096;

struct ProfileOptions {
  ProfilePlan plan;
  ProfileRigDesc rig;            // width and height from `size`
  std::string size = "128x128";  // work size of every pass
  Backend backend = Backend::vulkan;
  bool json = false;
  // one: the context's queue; all: every Vulkan queue family that can time
  // (profile_queues.cpp)
  std::string queues = "one";
};

int fail(const std::string& message, int code) {
  std::fprintf(stderr, "latlab profile: %s\n", message.c_str());
  return code;
}

int exit_code(const ProfileFailure& f, const std::string& device) {
  switch (f.kind) {
    case ProfileFailureKind::usage:
      return kExitUsage;
    case ProfileFailureKind::device_not_opened:
      return device_open_exit_code(device);
    case ProfileFailureKind::missing_capability:
      return kExitMissingCapability;
    case ProfileFailureKind::run_failed:
      return kExitRunFailed;
  }
  return kExitRunFailed;
}

void print_settings(const ProfileOptions& opt, const BackendInfo& be) {
  const ProfilePlan& plan = opt.plan;
  const ProfileRigDesc& rig = opt.rig;
  fmt::print("latlab profile: reference frame on {}, scoped GPU zones{}\n", be.api,
             be.profile_zones_note);
  std::string validation;
  if (!be.validation.empty())
    validation = fmt::format("  validation {}", rig.validation ? be.validation_on : "off");
  fmt::print("  device {}  frames {}  complexity {}  size {}x{}  frames in flight {}  trace {}{}\n",
             rig.device.empty() ? "(default)" : rig.device, plan.frames, plan.complexity, rig.width,
             rig.height, plan.frames_in_flight, plan.trace.empty() ? "(none)" : plan.trace,
             validation);
}

// The exit code of a run that produced a result.
int result_code(const ProfilePlan& plan, const ProfileResult& r) {
  if (r.rig.failed) return kExitRunFailed;
  if (!plan.trace.empty() && !r.trace_written) return kExitWriteFailed;
  return r.partial.empty() ? kExitOk : kExitRunFailed;
}

// The profile on one rig, then its output.
int profile_on(const ProfileOptions& opt, ProfileRig& rig) {
  const ProfileResult r = run_profile(opt.plan, rig, InterruptScope::flag());
  switch (r.stop) {
    case ProfileStop::none:
      break;
    case ProfileStop::build_failed:
      return fail(r.failure.message, exit_code(r.failure, ""));
    case ProfileStop::trace_not_opened:
      return fail(r.failure.message, kExitWriteFailed);
    case ProfileStop::frames_failed:
      return fail(r.failure.message, kExitRunFailed);
  }
  print_profile_findings(r);
  if (opt.json) {
    print_profile_json(opt.plan, opt.rig, opt.backend, r);
  } else {
    print_profile_text(opt.plan, r);
  }
  return result_code(opt.plan, r);
}

// The options that CLI11 cannot check alone, and the trace file: kExitOk,
// or kExitUsage after saying why.
int check_profile(const ProfileOptions& opt) {
  const std::string& trace = opt.plan.trace;
  // --trace is checked before any device is opened: a run never ends in a
  // trace that cannot be written.
  if (names_stdout(trace)) {
    return fail(
        "--trace: standard output carries the profile's table; name a file, a FIFO or /dev/null",
        kExitUsage);
  }
  FilePlan files;
  files.output("--trace", trace);
  if (Result<void> r = files.check(); !r) return fail(r.error().message, kExitUsage);
  if (!parse_profile_size(opt.size, kMaxSide)) {
    return fail(
        fmt::format("--size must be WxH with W and H in 1..{} (got \"{}\")", kMaxSide, opt.size),
        kExitUsage);
  }
  const BackendInfo& be = backend_info(opt.backend);
  if (opt.rig.validation && be.validation.empty())
    return fail(std::string(be.no_validation), kExitUsage);
  if (opt.rig.gl_timer != "auto" && opt.backend != Backend::gl) {
    return fail("--gl-timer is an OpenGL option; use --backend gl", kExitUsage);
  }
  if (opt.queues == "all" && !be.queue_families) {
    return fail("--queues all is a Vulkan option (queue families); use --backend vulkan",
                kExitUsage);
  }
  if (profile_names_several_devices(opt.rig.device) && !be.queue_families) {
    return fail("--device all or a list is a Vulkan option of profile; use --backend vulkan",
                kExitUsage);
  }
  return kExitOk;
}

int profile_queues_of(const ProfileOptions& opt) {
  const ProfilePlan& plan = opt.plan;
  const ProfileRigDesc& rig = opt.rig;
  return profile_queues({.frames = plan.frames,
                         .trace = plan.trace,
                         .device = rig.device,
                         .complexity = plan.complexity,
                         .width = rig.width,
                         .height = rig.height,
                         .frames_in_flight = plan.frames_in_flight,
                         .json = opt.json,
                         .validation = rig.validation,
                         .all_queues = opt.queues == "all"});
}

// Runs the profile check_profile() accepted.
int profile(ProfileOptions opt) {
  const auto size = parse_profile_size(opt.size, kMaxSide);
  if (!size) return kExitUsage;  // check_profile said why
  opt.rig.width = size->first;
  opt.rig.height = size->second;
  opt.rig.trace = !opt.plan.trace.empty();
  // Installed before the settings are echoed: Ctrl-C from then on stops the
  // frames and writes what was captured (a partial trace), exit 1.
  InterruptScope interrupt;
  if (opt.queues == "all" || profile_names_several_devices(opt.rig.device)) {
    return profile_queues_of(opt);
  }
  const BackendInfo& be = backend_info(opt.backend);
  if (!be.built) return fail(std::string(be.not_built), kExitMissingCapability);
  if (!opt.json) {
    print_settings(opt, be);
    opt.rig.on_line = [](const std::string& line) { fmt::print("{}\n", line); };
  }
  ProfileFailure failure;
  const std::unique_ptr<ProfileRig> rig = be.open_profile_rig(opt.rig, failure);
  if (!rig) return fail(failure.message, exit_code(failure, opt.rig.device));
  return profile_on(opt, *rig);
}

CommandRunner setup(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "profile", "Profile a multi-pass reference frame with scoped GPU zones (Vulkan, CUDA, GL)");
  auto opt = std::make_shared<ProfileOptions>();
  ProfilePlan& plan = opt->plan;
  ProfileRigDesc& rig = opt->rig;
  add_backend_option(sub, opt->backend, BackendUse::profile,
                     "GPU backend: vulkan, cuda (a CUDA stream) or gl (OpenGL through EGL, no "
                     "window)");
  sub->add_option("--queues", opt->queues,
                  "Vulkan queues: one (the device's graphics/compute queue) or all (one queue of "
                  "every family that can time: upload, async compute and graphics command "
                  "buffers, each queue its own track)")
      ->capture_default_str()
      ->check(CLI::IsMember({"one", "all"}));
  sub->add_option("--frames", plan.frames, "Frames to record")
      ->capture_default_str()
      ->transform(unsigned_in(1, 1000000));
  sub->add_option("--trace", plan.trace,
                  "Write a Chrome trace (JSON for Perfetto / chrome://tracing) to this file");
  sub->add_option("--device", rig.device,
                  "Device index or name substring (Vulkan default: first discrete GPU, else "
                  "first; CUDA: 0; GL: the first EGL device with timer queries, hardware first); "
                  "Vulkan: all or a comma list profiles each device in turn (the --queues frame)");
  sub->add_option("--complexity", plan.complexity,
                  "Arithmetic iterations per element and pass (1..4096)")
      ->capture_default_str()
      ->transform(unsigned_in(1, 4096));
  sub->add_option("--size", opt->size, "Work size WxH of every pass")->capture_default_str();
  sub->add_option("--frames-in-flight", plan.frames_in_flight,
                  "Frames on the device at once (1..8)")
      ->capture_default_str()
      ->transform(unsigned_in(1, 8));
  sub->add_flag("--json", opt->json, "Print the zone table and counters as JSON");
  sub->add_flag(
      "--validation", rig.validation,
      "Enable the Khronos validation layer (gl: a KHR_debug context); errors fail the run");
  sub->add_option("--gl-timer", rig.gl_timer,
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
