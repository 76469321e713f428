// latlab run --device all (or a list): opens every listed device, echoes the
// sections, hands them to the engine (run_on_devices: interleaved blocks on
// the same deadlines, one result section per device) and hands the result to
// the reporters of a one-device run (report_run).
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "command.hpp"
#include "latlab/bench/device_factory.hpp"
#include "latlab/bench/device_list.hpp"
#include "latlab/bench/latency_devices.hpp"
#include "latlab/bench/run_engine.hpp"
#include "run_parts.hpp"

namespace latlab::cli {
namespace {

// What a several-device run cannot do (yet), as one message; "" when none.
std::string unsupported(const RunCommand& c) {
  if (c.present) return "--present";
  if (c.plan.want_perf) return "--mode performance/all (Performance)";
  return "";
}

// Opens every listed device (a lane that cannot be opened says why).
std::vector<RunLane> open_lanes(const RunCommand& c, const std::vector<ListedDevice>& listed) {
  std::vector<RunLane> lanes;
  for (const ListedDevice& d : listed) {
    RunLane l;
    l.head = device_section_head(lanes.size(), c.plan.backend, d);
    const size_t index = std::stoul(d.selector);
    // A sim device told to fail fails from frame id warm-up + 20: its 20th
    // measured frame (in block 0) when no turn warm-up takes ids before it.
    const uint64_t fail_from =
        c.sim_fail_device == static_cast<int>(index) ? uint64_t{c.plan.desc.warmup_frames} + 20 : 0;
    if (auto opened =
            open_listed_device(DeviceSelector{c.plan.backend, d.selector, c.plan.validation, false},
                               true, fail_from)) {
      l.device = std::move(opened.value());
    } else {
      l.failure = "cannot open: " + opened.error().message;
    }
    lanes.push_back(std::move(l));
  }
  return lanes;
}

// The settings and one line per section.
void print_sections(const RunCommand& c, const std::vector<RunLane>& lanes,
                    const LatencyDevice& first, std::FILE* info) {
  print_run_settings(info, run_echo(c), first.info());
  fmt::print(info, "devices: {} in interleaved blocks on the same deadlines\n", lanes.size());
  for (const RunLane& l : lanes) {
    fmt::print(info, "  section {}: {} device {}: {}{}\n", l.head.section,
               backend_name(c.plan.backend), l.head.selector,
               l.device ? l.device->info().name : l.head.name,
               l.failure.empty() ? "" : " (" + l.failure + ")");
  }
  std::fflush(info);
}

}  // namespace

int run_device_list(RunCommand& c, std::FILE* info, const std::atomic<bool>* interrupt,
                    store::ResultsStore* store) {
  if (const std::string u = unsupported(c); !u.empty()) {
    std::fprintf(stderr, "latlab run: %s is not supported with several devices (--device %s)\n",
                 u.c_str(), c.plan.device.c_str());
    return kExitUsage;
  }
  std::vector<ListedDevice> listed;
  if (const int rc = resolve_devices("run", c.plan.backend, c.plan.device, listed); rc != kExitOk)
    return rc;
  plan_for_devices(c.plan, listed.size());
  std::vector<RunLane> lanes = open_lanes(c, listed);
  const RunLane* first = nullptr;
  for (const RunLane& l : lanes) {
    if (first == nullptr && l.device) first = &l;
  }
  if (first == nullptr) {
    for (const RunLane& l : lanes)
      std::fprintf(stderr, "latlab run: %s device %s: %s\n",
                   std::string(backend_name(c.plan.backend)).c_str(), l.head.selector.c_str(),
                   l.failure.c_str());
    return kExitMissingCapability;
  }
  print_sections(c, lanes, *first->device, info);
  RunOutcome out = run_on_devices(c.plan, lanes, make_run_meta(c.plan, c.command_line),
                                  console_run_hooks(info, false, interrupt));
  if (out.stop != RunStop::none) {
    for (const DeviceSectionResult& s : out.result.sections)
      std::fprintf(stderr, "latlab run: %s device %s: %s\n",
                   std::string(backend_name(c.plan.backend)).c_str(), s.head.selector.c_str(),
                   s.failure.c_str());
    return kExitRunFailed;
  }
  std::vector<DeviceSectionHead*> heads;
  for (DeviceSectionResult& s : out.result.sections) heads.push_back(&s.head);
  set_physical_identities(c.plan.backend, heads);
  return run_exit_code(report_run(c.outputs, out.result, info, store));
}

}  // namespace latlab::cli
