// latlab profile --queues all and device lists: options -> the devices to
// run -> run_profile_queues (latlab/bench/profile_queues_run.hpp, on the
// Vulkan queues rig) -> the reporters (report/profile_report.hpp).
#include "profile_queues.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

#include "command.hpp"
#include "latlab/bench/device_list.hpp"
#include "latlab/bench/device_listing.hpp"
#include "latlab/bench/interrupt_scope.hpp"
#include "latlab/bench/profile_queues_run.hpp"
#include "latlab/bench/vulkan_rig.hpp"
#include "report/reporters/reporters.hpp"

namespace latlab::cli {
namespace {

int fail(const std::string& message, int code) {
  std::fprintf(stderr, "latlab profile: %s\n", message.c_str());
  return code;
}

void print_settings(const QueuesProfileRequest& req) {
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

// With several devices, a track group per device: "GPU [index] name"; its
// queues' tracks and tables named "[index] vulkan queue family N (...)".
std::vector<QueuesDevice> queues_devices(const std::vector<std::string>& selectors, bool several,
                                         const std::vector<std::string>& names) {
  std::vector<QueuesDevice> out;
  for (const std::string& sel : selectors) {
    std::string label = sel + "]";
    for (size_t i = 0; i < names.size(); ++i) {
      if (std::to_string(i) == sel) label = sel + "] " + names[i];
    }
    out.push_back({.selector = sel,
                   .trace_group = several ? "[" + label : "",
                   .track_prefix = several ? "[" + sel + "] " : ""});
  }
  return out;
}

int failure_code(const ProfileFailure& f, const std::string& selector) {
  switch (f.kind) {
    case ProfileFailureKind::usage:
      return kExitUsage;
    case ProfileFailureKind::device_not_opened:
      return device_open_exit_code(selector);
    case ProfileFailureKind::missing_capability:
      return kExitMissingCapability;
    case ProfileFailureKind::run_failed:
      return kExitRunFailed;
  }
  return kExitRunFailed;
}

// One device's output once it ran; its exit code.
int report_device(const QueuesDeviceResult& d, bool json) {
  if (!json && d.planned) print_queues_used(d);
  if (d.failure) return fail(d.failure->message, failure_code(*d.failure, d.selector));
  print_queues_device_findings(d);
  if (!json) print_queues_device_text(d);
  return d.rig.failed ? kExitRunFailed : kExitOk;
}

QueuesHooks hooks_for(const QueuesProfileRequest& req, bool several, int& code) {
  QueuesHooks hooks;
  hooks.interrupt = InterruptScope::flag();
  hooks.device_done = [&code, json = req.json](const QueuesDeviceResult& d) {
    const int c = report_device(d, json);
    if (code == kExitOk) code = c;
  };
  if (req.json) return hooks;
  hooks.on_line = [](const std::string& line) { fmt::print("{}\n", line); };
  if (several)
    hooks.device_start = [](const QueuesDevice& d) { fmt::print("\n== device {}\n", d.selector); };
  return hooks;
}

}  // namespace

bool profile_names_several_devices(const std::string& device) { return is_device_list(device); }

int profile_queues(const QueuesProfileRequest& req) {
  if (!req.json) print_settings(req);
  auto names = device_names(Backend::vulkan);
  if (names && names->empty()) {
    return fail(
        "no Vulkan device found; install Mesa's lavapipe (apt install mesa-vulkan-drivers) for a "
        "software device",
        kExitMissingCapability);
  }
  bool no_device = false;
  const auto selectors = device_selectors(req.device, no_device);
  if (!selectors)
    return fail(selectors.error().message, no_device ? kExitMissingCapability : kExitUsage);
  const bool several = profile_names_several_devices(req.device);
  const QueuesProfilePlan plan{.frames = req.frames,
                               .complexity = req.complexity,
                               .frames_in_flight = req.frames_in_flight,
                               .trace = req.trace,
                               .all_queues = req.all_queues};
  ProfileRigDesc rig;
  rig.width = req.width;
  rig.height = req.height;
  rig.validation = req.validation;
  int code = kExitOk;
  const QueuesProfileResult r = run_profile_queues(
      plan, rig, queues_devices(*selectors, several, names ? *names : std::vector<std::string>{}),
      open_vulkan_queues_rig, hooks_for(req, several, code));
  if (!r.trace_not_opened.empty()) return fail(r.trace_not_opened, kExitWriteFailed);
  if (!r.partial.empty()) {
    std::fprintf(stderr, "latlab profile: interrupted; the frames run so far are reported\n");
    if (code == kExitOk) code = kExitRunFailed;
  }
  if (!r.trace_error.empty()) std::fprintf(stderr, "latlab profile: %s\n", r.trace_error.c_str());
  if (r.trace && !r.trace_written && code == kExitOk) code = kExitWriteFailed;
  if (req.json) {
    print_profile_queues_json(plan, rig, r, several);
  } else if (r.trace) {
    print_trace_line(req.trace, *r.trace, r.trace_written, !r.partial.empty());
  }
  return code;
}

}  // namespace latlab::cli
