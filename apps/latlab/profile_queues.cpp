// latlab profile --queues all: the reference frame spread over one queue of
// every Vulkan queue family that can time, each queue its own profiler (its
// own timestamp slots and valid bits) and its own track, all on the host
// clock through the device's one clock model.
//
// A frame is three command buffers, each timed as a whole ("cmdbuf <role>")
// and by its zones:
//   upload         upload.fill, upload.copy: fill a staging region and copy
//                  it to the frame's upload region (dedicated transfer family)
//   async compute  async.consume, async.simulate: copy the upload into its
//                  buffer and run a compute pass on it (dedicated compute
//                  family); waits for the upload through a semaphore
//   graphics       the single-queue frame's zones (latlab/core/profile_rig.hpp) on the
//                  context's queue, overlapping the two above
// A role whose family the device lacks runs on the context's queue (said in
// the output). Families that can time but have no role (e.g. video) get a
// command buffer with its timestamps only ("cmdbuf marker").
#include "profile_queues.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "command.hpp"
#include "device_list.hpp"
#include "interrupt_scope.hpp"
#include "latlab/calibrator.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/profiler_trace.hpp"
#include "latlab/vulkan.hpp"
#include "profile_queues_rig.hpp"
#include "report/profile_report.hpp"

namespace latlab::cli {

using namespace queues;

namespace {

int fail(const std::string& message, int code) {
  std::fprintf(stderr, "latlab profile: %s\n", message.c_str());
  return code;
}

// The frame on one device (`device`: an index or name substring; "" the
// default): prints its text unless --json, stores its JSON object in `out`,
// adds its spans to `trace` (may be null); returns its exit code.
int run_device(const QueuesProfileRequest& req, const std::string& device,
               const std::string& track_prefix, ChromeTraceWriter* trace, nlohmann::json& out) {
  auto ctx_r = VulkanContext::create(VulkanContextDesc{
      .device = device, .validation = req.validation, .all_timing_queues = req.all_queues});
  if (!ctx_r) {
    out = {{"device_selector", device}, {"error", ctx_r.error().message}};
    return fail(ctx_r.error().message, device_open_exit_code(device));
  }
  const VulkanContext& ctx = *ctx_r.value();
  const auto& limits = ctx.properties().limits;
  if (uint64_t{req.width} * req.height * 16 > limits.maxStorageBufferRange ||
      req.width > limits.maxFramebufferWidth || req.height > limits.maxFramebufferHeight) {
    const std::string msg =
        fmt::format("--size {}x{} exceeds {}'s limits", req.width, req.height, ctx.device_name());
    out = {{"device_selector", device}, {"device", ctx.device_name()}, {"error", msg}};
    return fail(msg, kExitUsage);
  }
  if (!req.json) {
    fmt::print("  on [{}] {}: tick {} ns\n", ctx.device_index(), ctx.device_name(),
               ctx.tick_format().period_ns());
    for (const auto& m : ctx.capabilities().missing)
      fmt::print("  missing {}: {}\n", m.name, m.reason);
  }
  Calibrator calibrator([&ctx] { return ctx.sample_calibration(); }, ctx.tick_format());
  std::string mapping;
  if (const Result<void> c = calibrator.calibrate_now(); !c) {
    mapping = "none (" + c.error().message + ")";
  } else {
    calibrator.start_periodic();
    mapping = ctx.capabilities().calibration_method +
              ", one clock model for every queue, refreshed every 1 s";
  }
  QueuesRig rig;
  rig.ctx = &ctx;
  rig.track_prefix = track_prefix;
  if (auto p = plan_queues(ctx, req, rig); !p) {
    out = {
        {"device_selector", device}, {"device", ctx.device_name()}, {"error", p.error().message}};
    return fail(p.error().message, kExitMissingCapability);
  }
  if (auto w = make_work(ctx, req, rig); !w) {
    out = {
        {"device_selector", device}, {"device", ctx.device_name()}, {"error", w.error().message}};
    return fail(w.error().message, kExitRunFailed);
  }
  if (!req.json) print_queues(ctx, rig);
  for (const auto& r : rig.roles) {
    rig.cmdbuf_spans.zone_names.push_back(kCommandBufferZonePrefix + r.label);
    rig.cmdbuf_spans.spans.emplace_back(req.frames);
  }
  for (auto& q : rig.queues) {
    q->prof->set_clock_mapper(
        queue_clock_mapper([&calibrator] { return calibrator.fit(); }, q->info->ticks));
    q->prof->set_frame_sink([trace, &rig, name = q->name](const ProfilerFrame& f) {
      rig.cmdbuf_spans.add(f);
      if (trace != nullptr) trace->add_frame(name, f);
    });
  }
  if (auto r = run_frames(req, rig, trace); !r) {
    out = {
        {"device_selector", device}, {"device", ctx.device_name()}, {"error", r.error().message}};
    return fail(r.error().message, kExitRunFailed);
  }
  for (auto& q : rig.queues) {
    q->prof->next_frame();  // closes the last frame; every result is available now
    q->prof->collect();
  }
  calibrator.stop();
  const auto fit = calibrator.fit();
  int code = kExitOk;
  warn_untimed_zones(sum_counters(rig), expected_zones(rig, req.frames));
  if (req.validation && ctx.validation_error_count() > 0) {
    for (const auto& m : ctx.validation_messages()) std::fprintf(stderr, "  %s\n", m.c_str());
    code = kExitRunFailed;
  }
  out = json_output(req, ctx, rig, mapping, fit);
  if (req.json) return code;
  print_host_mapping_line(mapping, fit);
  for (const auto& q : rig.queues) {
    fmt::print("{}\n", format_stat_table(q->name, q->prof->stats()));
    print_counters_line(q->prof->counters());
    fmt::print("\n");
  }
  fmt::print("zones named \"cmdbuf <role>\" time a whole command buffer\n");
  for (Role a : {Role::upload, Role::async_compute}) {
    const nlohmann::json o = overlap_json(rig, a, Role::graphics);
    fmt::print("overlap of {} with graphics{}: {} of {} frames, avg {} ms\n",
               o["role"].get<std::string>(), o["same_queue"].get<bool>() ? " (same queue)" : "",
               o["frames_overlapping"].get<uint64_t>(), o["frames"].get<uint64_t>(),
               o["avg_overlap_ms"].is_null()
                   ? std::string("-")
                   : fmt::format("{:.3f}", o["avg_overlap_ms"].get<double>()));
  }
  if (req.validation) fmt::print("validation errors: {}\n", ctx.validation_error_count());
  return code;
}

// The devices --device names: one selector, or, for "all" or a comma list,
// the shared device-list resolution of clocks and run (device_list.hpp).
Result<std::vector<std::string>> device_selectors(const std::string& device, bool& no_device) {
  no_device = false;
  if (!is_device_list(device)) return std::vector<std::string>{device};
  auto items = parse_device_list(device);
  if (!items) return items.error();
  auto listed = expand_device_list(Backend::vulkan, *items, no_device);
  if (!listed) return listed.error();
  std::vector<std::string> out;
  for (const ListedDevice& d : *listed) out.push_back(d.selector);
  return out;
}

}  // namespace

bool profile_names_several_devices(const std::string& device) { return is_device_list(device); }

int profile_queues(const QueuesProfileRequest& req) {
  if (!req.json) {
    fmt::print("latlab profile: reference frame spread over {}\n",
               req.all_queues ? "every Vulkan queue family that can time"
                              : "command buffers on one Vulkan queue");
    fmt::print(
        "  device {}  frames {}  complexity {}  size {}x{}  frames in flight {}  trace {}  "
        "validation {}\n",
        req.device.empty() ? "(default)" : req.device, req.frames, req.complexity, req.width,
        req.height, req.frames_in_flight, req.trace.empty() ? "(none)" : req.trace,
        req.validation ? "on" : "off");
  }
  auto devices = enumerate_vulkan_devices();
  if (devices && devices->empty()) {
    return fail(
        "no Vulkan device found; install Mesa's lavapipe (apt install mesa-vulkan-drivers) for a "
        "software device",
        kExitMissingCapability);
  }
  bool no_device = false;
  const auto selectors = device_selectors(req.device, no_device);
  if (!selectors)
    return fail(selectors.error().message, no_device ? kExitMissingCapability : kExitUsage);
  ChromeTraceWriter trace;
  ChromeTraceWriter* tracep = req.trace.empty() ? nullptr : &trace;
  if (!open_trace_file(req.trace, trace)) return kExitWriteFailed;
  std::string partial;  // why the run stopped early; "" when it did not
  const bool several = profile_names_several_devices(req.device);
  int code = kExitOk;
  nlohmann::json out;
  nlohmann::json sections = nlohmann::json::array();
  for (const std::string& sel : *selectors) {
    if (InterruptScope::flag()->load()) break;  // Ctrl-C: no further device
    if (several && !req.json) fmt::print("\n== device {}\n", sel);
    // A track group per device: "GPU [index] name"; its queues' tracks and
    // tables named "[index] vulkan queue family N (...)".
    std::string label = sel;
    for (const auto& d : devices ? *devices : std::vector<VulkanDeviceReport>{}) {
      if (std::to_string(d.index) == sel) label = sel + "] " + d.name;
    }
    if (label == sel) label += "]";
    if (several && tracep != nullptr) trace.set_gpu_group("[" + label);
    nlohmann::json one;
    const int c = run_device(req, sel, several ? "[" + sel + "] " : "", tracep, one);
    if (code == kExitOk) code = c;
    if (several) {
      sections.push_back(std::move(one));
    } else {
      out = std::move(one);
    }
  }
  if (several) out = {{"host_clock", kHostClockName}, {"devices", sections}};
  if (InterruptScope::flag()->load()) {
    partial = "interrupted";
    std::fprintf(stderr, "latlab profile: interrupted; the frames run so far are reported\n");
    if (code == kExitOk) code = kExitRunFailed;
  }
  bool trace_written = false;
  if (tracep != nullptr) {
    trace_written = close_trace_file(trace, partial);
    if (!trace_written && code == kExitOk) code = kExitWriteFailed;
    out["trace"] = profile_trace_json(req.trace, trace, trace_written, !partial.empty());
  }
  if (req.json) {
    fmt::print("{}\n", out.dump(2));
  } else if (tracep != nullptr) {
    print_trace_line(req.trace, trace, trace_written, !partial.empty());
  }
  return code;
}

}  // namespace latlab::cli
