// latlab profile: a multi-pass reference frame loop on Vulkan, timed by the
// scoped GPU profiler (nested zones, frames in flight). Prints the `stat gpu`
// table and the newest frame's zone tree, and writes a Chrome trace (Perfetto,
// chrome://tracing) with CPU and GPU tracks on the host clock.
//
// The frame:  frame
//               simulate            compute pass, complexity C
//               lighting
//                 lighting.direct   compute pass, 2C
//                 lighting.indirect compute pass, C
//               post
//                 post.bloom        full-screen fragment pass, C
//                 post.tonemap      full-screen fragment pass, C
// `--backend cuda` runs its CUDA counterpart (profile_cuda.cpp), `--backend gl`
// its OpenGL one (profile_gl.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli_checks.hpp"
#include "cli_values.hpp"
#include "command.hpp"
#include "file_plan.hpp"
#include "latlab/calibrator.hpp"
#include "latlab/host_clock.hpp"
// This command exists to show the profiler: its zones stay in whatever
// LATLAB_ENABLE_PROFILER the build chose for user code.
#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "interrupt_scope.hpp"
#include "latlab/bench/vulkan_rig.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_trace.hpp"
#include "latlab/profiler_vulkan.hpp"
#include "latlab/vulkan.hpp"
#include "profile_cuda.hpp"
#include "profile_gl.hpp"
#include "profile_queues.hpp"
#include "profile_report.hpp"

namespace latlab::cli {

// The zones of one reference frame (the tree in the header comment); also
// the graphics command buffer of --queues all (profile_queues.cpp).
void record_reference_frame(VulkanGpuProfiler& prof, VulkanComputeWorkload& compute,
                            VulkanFragmentWorkload& fragment, VkCommandBuffer cmd, uint32_t c) {
  const uint32_t c2 = std::min<uint32_t>(4096, 2 * c);
  LATLAB_GPU_ZONE(prof, cmd, "frame");
  {
    LATLAB_GPU_ZONE(prof, cmd, "simulate");
    compute.record_pass(cmd, c, 0);
  }
  {
    LATLAB_GPU_ZONE(prof, cmd, "lighting");
    {
      LATLAB_GPU_ZONE(prof, cmd, "lighting.direct");
      compute.record_pass(cmd, c2, 1);
    }
    {
      LATLAB_GPU_ZONE(prof, cmd, "lighting.indirect");
      compute.record_pass(cmd, c, 2);
    }
  }
  {
    LATLAB_GPU_ZONE(prof, cmd, "post");
    {
      LATLAB_GPU_ZONE(prof, cmd, "post.bloom");
      fragment.record_pass(cmd, c, 0);
    }
    {
      LATLAB_GPU_ZONE(prof, cmd, "post.tonemap");
      fragment.record_pass(cmd, c, 1);
    }
  }
}

namespace {

constexpr uint32_t kMaxSide = 4096;

struct ProfileOptions {
  uint32_t frames = 120;          // frames to record
  std::string trace;              // Chrome trace path; empty: none
  std::string device;             // index or name substring; empty = default device
  uint32_t complexity = 8;        // arithmetic iterations per element / pixel of the base pass
  std::string size = "128x128";   // work size of every pass
  uint32_t frames_in_flight = 3;  // command buffers on the device at once
  bool json = false;
  bool validation = false;
  std::string gl_timer = "auto";  // --backend gl: auto, timestamp or elapsed
  // vulkan (this file), cuda (profile_cuda.cpp) or gl (profile_gl.cpp)
  std::string backend = "vulkan";
  // one: the context's queue (this file); all: every Vulkan queue family
  // that can time (profile_queues.cpp)
  std::string queues = "one";
};

int fail(const char* what, const std::string& message, int code) {
  std::fprintf(stderr, "latlab profile: %s%s\n", what, message.c_str());
  return code;
}

void print_settings(const ProfileOptions& opt, std::pair<uint32_t, uint32_t> size) {
  fmt::print("latlab profile: reference frame on Vulkan, scoped GPU zones\n");
  fmt::print(
      "  device {}  frames {}  complexity {}  size {}x{}  frames in flight {}  trace {}  "
      "validation {}\n",
      opt.device.empty() ? "(default)" : opt.device, opt.frames, opt.complexity, size.first,
      size.second, opt.frames_in_flight, opt.trace.empty() ? "(none)" : opt.trace,
      opt.validation ? "on" : "off");
}

// The profiler and the objects of the reference frame. Members are destroyed
// in reverse: the ring, the workloads, the profiler, then its timestamp slots.
struct Rig {
  std::shared_ptr<VulkanTimestampSlots> slots;
  std::unique_ptr<VulkanGpuProfiler> prof;
  std::unique_ptr<VulkanComputeWorkload> compute;
  std::unique_ptr<VulkanFragmentWorkload> fragment;
  std::unique_ptr<VulkanFrameRing> ring;
};

// Creates the rig on `ctx`; on failure prints why and returns the exit code.
int make_rig(VulkanContext& ctx, const GpuProfilerDesc& pdesc, std::pair<uint32_t, uint32_t> size,
             Rig& rig) {
  auto slots_r = VulkanTimestampSlots::create(
      ctx, {.count = GpuProfiler::slots_needed(pdesc), .require_host_reset = true});
  if (!slots_r) return fail("", slots_r.error().message, kExitMissingCapability);
  rig.slots = slots_r.value();
  auto prof_r = VulkanGpuProfiler::create(rig.slots, pdesc);
  if (!prof_r) return fail("", prof_r.error().message, kExitRunFailed);
  rig.prof = std::move(prof_r.value());
  auto compute_r = VulkanComputeWorkload::create(ctx, {size.first, size.second});
  if (!compute_r) return fail("", compute_r.error().message, kExitRunFailed);
  rig.compute = std::move(compute_r.value());
  auto fragment_r = VulkanFragmentWorkload::create(ctx, {size.first, size.second});
  if (!fragment_r) return fail("", fragment_r.error().message, kExitRunFailed);
  rig.fragment = std::move(fragment_r.value());
  auto ring_r = VulkanFrameRing::create(ctx, pdesc.frames_in_flight);
  if (!ring_r) return fail("", ring_r.error().message, kExitRunFailed);
  rig.ring = std::move(ring_r.value());
  return kExitOk;
}

// The zones of one reference frame.
void record_frame(Rig& rig, VkCommandBuffer cmd, uint32_t c) {
  record_reference_frame(*rig.prof, *rig.compute, *rig.fragment, cmd, c);
}

// Records and submits --frames frames, frames_in_flight at once, then waits
// for all; CPU spans go to `trace` when it is not null. An interrupt stops
// it after the frame it is in; `frames_run` counts those recorded.
Result<void> run_frames(const ProfileOptions& opt, Rig& rig, ChromeTraceWriter* trace,
                        uint64_t& frames_run) {
  VulkanFrameRing& ring = *rig.ring;
  const std::atomic<bool>* stop = InterruptScope::flag();
  for (uint64_t frame = 0; frame < opt.frames && !stop->load(); ++frame, ++frames_run) {
    const auto slot = static_cast<uint32_t>(frame % opt.frames_in_flight);
    if (ring.in_flight(slot)) {
      const int64_t w0 = host_now_ns();
      auto waited = ring.wait(slot);  // the frame that used this slot: frames_in_flight ago
      if (!waited) return waited.error();
      if (trace != nullptr) trace->add_span("CPU main", "fence wait", w0, host_now_ns());
    }
    if (frame > 0) rig.prof->next_frame();  // closes the previous frame, collects what is ready
    const int64_t r0 = host_now_ns();
    auto cmd_r = ring.begin(slot);
    if (!cmd_r) return cmd_r.error();
    record_frame(rig, cmd_r.value(), opt.complexity);
    const int64_t s0 = host_now_ns();
    if (auto s = ring.submit(slot); !s) return s.error();
    if (trace != nullptr) {
      trace->add_span("CPU main", "record", r0, s0);
      trace->add_span("CPU main", "submit", s0, host_now_ns());
    }
  }
  return ring.wait_all();
}

// What the run produced, for the report.
struct ProfileSummary {
  std::string queue_name;               // the profiler's name
  std::string mapping;                  // how device ticks map to the host clock
  std::shared_ptr<const ClockFit> fit;  // null: no clock model
  ProfilerCounters counters;
  std::vector<ZoneStat> stats;
  const ChromeTraceWriter* trace = nullptr;  // null without --trace
  bool trace_written = false;
  std::string partial;  // why the run stopped early; "" when it did not
  uint64_t frames_run = 0;
};

// Warns about zones without a time, writes the trace, prints validation
// messages; returns the exit code.
int check_run(const ProfileOptions& opt, const VulkanContext& ctx, ChromeTraceWriter& trace,
              ProfileSummary& sum) {
  constexpr uint32_t kZonesPerFrame = 8;
  const ProfilerCounters& counters = sum.counters;
  const uint64_t expected_zones = sum.frames_run * kZonesPerFrame;
  int code = sum.partial.empty() ? kExitOk : kExitRunFailed;
  if (!sum.partial.empty()) std::fprintf(stderr, "latlab profile: %s\n", sum.partial.c_str());
  warn_untimed_zones(counters, expected_zones);
  if (!opt.trace.empty()) {
    sum.trace = &trace;
    if (!close_trace_file(trace, sum.partial)) code = kExitWriteFailed;
  }
  if (opt.validation && ctx.validation_error_count() > 0) {
    for (const auto& m : ctx.validation_messages()) std::fprintf(stderr, "  %s\n", m.c_str());
    code = kExitRunFailed;
  }
  // As reported before the split: a validation failure hides a failed write.
  sum.trace_written = code != kExitWriteFailed;
  return code;
}

void print_json(const ProfileOptions& opt, const VulkanContext& ctx, const ProfileSummary& sum) {
  nlohmann::json out = {
      {"device", ctx.device_name()},
      {"host_clock", kHostClockName},
      {"settings",
       {{"frames", opt.frames},
        {"complexity", opt.complexity},
        {"size", opt.size},
        {"frames_in_flight", opt.frames_in_flight},
        {"validation", opt.validation}}},
      {"host_mapping", sum.mapping},
      {"clock_fit", profile_clock_fit_json(sum.fit)},
      {"zones", profile_stats_json(sum.stats)},
      {"counters", profile_counters_json(sum.counters)},
      {"validation_errors", ctx.validation_error_count()},
  };
  if (sum.trace != nullptr) {
    out["trace"] =
        profile_trace_json(opt.trace, *sum.trace, sum.trace_written, !sum.partial.empty());
  }
  fmt::print("{}\n", out.dump(2));
}

void print_text(const ProfileOptions& opt, const VulkanContext& ctx, const GpuProfiler& prof,
                const ProfileSummary& sum) {
  print_host_mapping_line(sum.mapping, sum.fit);
  fmt::print("{}\n", format_stat_table(sum.queue_name, sum.stats));
  print_newest_frame_tree(prof, sum.queue_name);
  print_counters_line(sum.counters);
  if (ctx.capabilities().query_reads_wait_idle) {
    fmt::print(
        "note: this driver waits for the device to go idle inside vkGetQueryPoolResults; "
        "collection\n"
        "      never asks it to wait, but stalls here anyway while frames are in flight\n");
  }
  if (sum.trace != nullptr)
    print_trace_line(opt.trace, *sum.trace, sum.trace_written, !sum.partial.empty());
  if (opt.validation) fmt::print("validation errors: {}\n", ctx.validation_error_count());
}

// Opens the device --device names; on failure prints why and returns null
// with the exit code in `code`.
std::unique_ptr<VulkanContext> open_context(const ProfileOptions& opt, int& code) {
  auto devices = enumerate_vulkan_devices();
  if (devices && devices->empty()) {
    code = fail(
        "",
        "no Vulkan device found; install Mesa's lavapipe (apt install mesa-vulkan-drivers) for a "
        "software device",
        kExitMissingCapability);
    return nullptr;
  }
  auto ctx_r =
      VulkanContext::create(VulkanContextDesc{.device = opt.device, .validation = opt.validation});
  if (!ctx_r) {
    code = fail("", ctx_r.error().message, device_open_exit_code(opt.device));
    return nullptr;
  }
  VulkanContext& ctx = *ctx_r.value();
  if (!opt.json) {
    const auto& caps = ctx.capabilities();
    fmt::print("  on [{}] {}: tick {} ns, {} valid bits\n", ctx.device_index(), ctx.device_name(),
               ctx.tick_format().period_ns(), caps.timestamp_valid_bits);
    for (const auto& m : caps.missing) fmt::print("  missing {}: {}\n", m.name, m.reason);
  }
  return std::move(ctx_r.value());
}

// Device ticks -> host clock: the clock model, fed by a calibrator that
// refreshes on its own thread (never in the frame loop). Returns how ticks
// are mapped.
std::string start_clock_model(Calibrator& calibrator, const VulkanCapabilities& caps) {
  const Result<void> c = calibrator.calibrate_now();
  if (!c) return "none (" + c.error().message + ")";
  calibrator.start_periodic();
  return caps.calibration_method + ", clock model refreshed every 1 s";
}

// The options that CLI11 cannot check alone, and the trace file: kExitOk,
// or kExitUsage after saying why.
int check_profile(const ProfileOptions& opt) {
  // --trace is checked before any device is opened: a run never ends in a
  // trace that cannot be written.
  if (names_stdout(opt.trace)) {
    return fail("",
                "--trace: standard output carries the profile's table; name a file, a FIFO or "
                "/dev/null",
                kExitUsage);
  }
  FilePlan files;
  files.output("--trace", opt.trace);
  if (Result<void> r = files.check(); !r) return fail("", r.error().message, kExitUsage);
  if (!parse_profile_size(opt.size, kMaxSide)) {
    return fail(
        "",
        fmt::format("--size must be WxH with W and H in 1..{} (got \"{}\")", kMaxSide, opt.size),
        kExitUsage);
  }
  if (opt.validation && opt.backend == "cuda") {
    return fail("",
                "--validation is a Vulkan option (the Khronos validation layer; on gl: KHR_debug); "
                "CUDA has no counterpart",
                kExitUsage);
  }
  if (opt.gl_timer != "auto" && opt.backend != "gl") {
    return fail("", "--gl-timer is an OpenGL option; use --backend gl", kExitUsage);
  }
  if (opt.queues == "all" && opt.backend != "vulkan") {
    return fail("", "--queues all is a Vulkan option (queue families); use --backend vulkan",
                kExitUsage);
  }
  if (profile_names_several_devices(opt.device) && opt.backend != "vulkan") {
    return fail("", "--device all or a list is a Vulkan option of profile; use --backend vulkan",
                kExitUsage);
  }
  return kExitOk;
}

// Runs the profile check_profile() accepted.
int profile(const ProfileOptions& opt) {
  const auto size = parse_profile_size(opt.size, kMaxSide);
  if (!size) return kExitUsage;  // check_profile said why
  // Installed before the settings are echoed: Ctrl-C from then on stops the
  // frames and writes what was captured (a partial trace), exit 1.
  InterruptScope interrupt;
  if (opt.queues == "all" || profile_names_several_devices(opt.device)) {
    return profile_queues({.frames = opt.frames,
                           .trace = opt.trace,
                           .device = opt.device,
                           .complexity = opt.complexity,
                           .width = size->first,
                           .height = size->second,
                           .frames_in_flight = opt.frames_in_flight,
                           .json = opt.json,
                           .validation = opt.validation,
                           .all_queues = opt.queues == "all"});
  }
  if (opt.backend == "gl") {
    return profile_gl({.frames = opt.frames,
                       .trace = opt.trace,
                       .device = opt.device,
                       .complexity = opt.complexity,
                       .width = size->first,
                       .height = size->second,
                       .frames_in_flight = opt.frames_in_flight,
                       .json = opt.json,
                       .debug = opt.validation,
                       .timer = opt.gl_timer});
  }
  if (opt.backend == "cuda") {
    return profile_cuda({.frames = opt.frames,
                         .trace = opt.trace,
                         .device = opt.device,
                         .complexity = opt.complexity,
                         .width = size->first,
                         .height = size->second,
                         .frames_in_flight = opt.frames_in_flight,
                         .json = opt.json});
  }
  if (!opt.json) print_settings(opt, *size);
  int code = kExitOk;
  const std::unique_ptr<VulkanContext> ctx_owner = open_context(opt, code);
  if (!ctx_owner) return code;
  VulkanContext& ctx = *ctx_owner;
  const auto& limits = ctx.properties().limits;
  if (uint64_t{size->first} * size->second * 16 > limits.maxStorageBufferRange ||
      size->first > limits.maxFramebufferWidth || size->second > limits.maxFramebufferHeight) {
    return fail("",
                fmt::format("--size {}x{} exceeds {}'s limits", size->first, size->second,
                            ctx.device_name()),
                kExitUsage);
  }
  Calibrator calibrator([&ctx] { return ctx.sample_calibration(); }, ctx.tick_format());
  ProfileSummary sum;
  sum.mapping = start_clock_model(calibrator, ctx.capabilities());
  const GpuProfilerDesc pdesc{.name = "vulkan queue " + std::to_string(ctx.queue_family()),
                              .max_zones_per_frame = 64,
                              .frames_in_flight = opt.frames_in_flight,
                              .stat_window_frames = opt.frames,
                              .cpu_zone_times = !opt.trace.empty()};
  Rig rig;
  if (const int rc = make_rig(ctx, pdesc, *size, rig); rc != kExitOk) return rc;
  VulkanGpuProfiler& prof = *rig.prof;
  prof.set_clock_mapper([&calibrator](uint64_t t) -> std::optional<MappedTime> {
    const auto fit = calibrator.fit();
    if (!fit) return std::nullopt;
    return fit->map(t);
  });
  ChromeTraceWriter trace;
  if (!open_trace_file(opt.trace, trace)) return kExitWriteFailed;
  if (!opt.trace.empty())
    prof.set_frame_sink([&](const ProfilerFrame& f) { trace.add_frame(pdesc.name, f); });
  if (auto r = run_frames(opt, rig, opt.trace.empty() ? nullptr : &trace, sum.frames_run); !r) {
    return fail("", r.error().message, kExitRunFailed);
  }
  sum.partial = profile_interrupted(InterruptScope::flag(), sum.frames_run, opt.frames);
  prof.next_frame();  // closes the last frame; every result is available now
  prof.collect();
  calibrator.stop();
  sum.queue_name = pdesc.name;
  sum.fit = calibrator.fit();
  sum.counters = prof.counters();
  sum.stats = prof.stats();
  code = check_run(opt, ctx, trace, sum);
  if (opt.json) {
    print_json(opt, ctx, sum);
  } else {
    print_text(opt, ctx, prof, sum);
  }
  return code;
}

CommandRunner setup(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "profile", "Profile a multi-pass reference frame with scoped GPU zones (Vulkan, CUDA, GL)");
  auto opt = std::make_shared<ProfileOptions>();
  sub->add_option("--backend", opt->backend,
                  "GPU backend: vulkan, cuda (a CUDA stream) or gl (OpenGL through EGL, no window)")
      ->capture_default_str()
      ->check(CLI::IsMember({"vulkan", "cuda", "gl"}));
  sub->add_option("--queues", opt->queues,
                  "Vulkan queues: one (the device's graphics/compute queue) or all (one queue of "
                  "every family that can time: upload, async compute and graphics command "
                  "buffers, each queue its own track)")
      ->capture_default_str()
      ->check(CLI::IsMember({"one", "all"}));
  sub->add_option("--frames", opt->frames, "Frames to record")
      ->capture_default_str()
      ->transform(unsigned_in(1, 1000000));
  sub->add_option("--trace", opt->trace,
                  "Write a Chrome trace (JSON for Perfetto / chrome://tracing) to this file");
  sub->add_option("--device", opt->device,
                  "Device index or name substring (Vulkan default: first discrete GPU, else "
                  "first; CUDA: 0; GL: the first EGL device with timer queries, hardware first); "
                  "Vulkan: all or a comma list profiles each device in turn (the --queues frame)");
  sub->add_option("--complexity", opt->complexity,
                  "Arithmetic iterations per element and pass (1..4096)")
      ->capture_default_str()
      ->transform(unsigned_in(1, 4096));
  sub->add_option("--size", opt->size, "Work size WxH of every pass")->capture_default_str();
  sub->add_option("--frames-in-flight", opt->frames_in_flight,
                  "Frames on the device at once (1..8)")
      ->capture_default_str()
      ->transform(unsigned_in(1, 8));
  sub->add_flag("--json", opt->json, "Print the zone table and counters as JSON");
  sub->add_flag(
      "--validation", opt->validation,
      "Enable the Khronos validation layer (gl: a KHR_debug context); errors fail the run");
  sub->add_option("--gl-timer", opt->gl_timer,
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
