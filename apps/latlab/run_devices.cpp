// latlab run --device all (or a list): every device's latency path in
// interleaved blocks on the same deadlines (run_latency_interleaved), one
// result section per device. The document's top-level keys are those of a
// one-device result, describing the first device that ran; `devices_run`
// holds every device's section, each with its own whole result
// (docs/result-schema.md).
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "clocks_devices.hpp"
#include "command.hpp"
#include "device_list.hpp"
#include "latlab/bench/device_factory.hpp"
#include "latlab/bench/latency_devices.hpp"
#include "run_parts.hpp"

namespace latlab::cli {
namespace {

// Turn warm-up with several devices unless --turn-warmup-ms says otherwise:
// on the 2-GPU H200 without it, Vulkan Loaded frames at the start of a turn
// took up to 47.7 ms instead of 8.3 (docs/BENCHMARKS.md).
constexpr int64_t kSeveralDevicesTurnWarmupNs = 250'000'000;

// One device of the run.
struct RunLane {
  ListedDevice listed;
  std::unique_ptr<LatencyDevice> device;
  std::unique_ptr<TickMapper> mapper;
  RunPlan plan;
  LoadedSetup loaded;
  std::string failure;  // why it did not run; "" when it did
  std::optional<LatencyRun> run;
};

// What a several-device run cannot do (yet), as one message; "" when none.
std::string unsupported(const RunOptions& o, const RunPlan& plan) {
  if (o.present) return "--present";
  if (plan.want_perf) return "--mode performance/all (Performance)";
  if (!o.frames_csv.empty()) return "--frames-csv";
  if (!o.report.empty()) return "--report";
  if (o.use_store) return "--store";
  return "";
}

// Opens every listed device; sets the plan's turn warm-up for several.
int open_lanes(const RunOptions& o, RunPlan& plan, std::vector<RunLane>& lanes) {
  std::vector<ListedDevice> listed;
  if (const int rc = resolve_device_list("run", o.backend, o.device, listed); rc != kExitOk)
    return rc;
  if (!o.turn_warmup_ms && listed.size() > 1)
    plan.desc.turn_warmup_ns = kSeveralDevicesTurnWarmupNs;
  for (const ListedDevice& d : listed) {
    RunLane l;
    l.listed = d;
    l.plan = plan;
    const size_t index = std::stoul(l.listed.selector);
    if (o.backend == "sim") {
      // Fails from frame id warm-up + 20: its 20th measured frame (in block 0)
      // when no turn warm-up takes ids before it.
      const uint64_t fail_from =
          o.sim_fail_device == static_cast<int>(index) ? uint64_t{plan.desc.warmup_frames} + 20 : 0;
      l.device = open_sim_list_device(index, true, fail_from);
    } else if (auto opened = open_latency_device(
                   DeviceSelector{o.backend, l.listed.selector, o.validation, false})) {
      l.device = std::move(opened.value());
    } else {
      l.failure = "cannot open: " + opened.error().message;
    }
    if (l.device) l.mapper = make_calibrated_mapper(*l.device, calibrator_desc(o));
    lanes.push_back(std::move(l));
  }
  return kExitOk;
}

// Every lane's latency blocks, interleaved.
void run_lanes(std::vector<RunLane>& lanes, const std::atomic<bool>* interrupt) {
  std::vector<DeviceLane> dl;
  std::vector<RunLane*> ran;
  for (RunLane& l : lanes) {
    if (!l.failure.empty()) continue;
    DeviceLane d;
    d.desc = l.plan.desc;
    d.env.device = l.device.get();
    d.env.mapper = l.mapper.get();
    d.env.interrupt = interrupt;
    dl.push_back(std::move(d));
    ran.push_back(&l);
  }
  std::vector<Result<LatencyRun>> results = run_latency_interleaved(std::move(dl));
  for (size_t i = 0; i < ran.size(); ++i) {
    if (!results[i]) {
      ran[i]->failure = results[i].error().message;
    } else if (results[i]->measured_frames_run() == 0 && results[i]->partial) {
      ran[i]->failure = "stopped before any measured frame: " + results[i]->partial_reason;
    } else {
      ran[i]->run = std::move(results[i].value());
    }
  }
}

std::string lane_status(const RunLane& l) {
  if (!l.run) return "failed";
  return l.run->partial ? "partial" : "ok";
}

}  // namespace

int run_device_list(const RunOptions& o, RunPlan& plan, std::FILE* info,
                    const std::atomic<bool>* interrupt) {
  if (const std::string u = unsupported(o, plan); !u.empty()) {
    std::fprintf(stderr, "latlab run: %s is not supported with several devices (--device %s)\n",
                 u.c_str(), o.device.c_str());
    return kExitUsage;
  }
  std::vector<RunLane> lanes;
  if (const int rc = open_lanes(o, plan, lanes); rc != kExitOk) return rc;
  const RunLane* first = nullptr;
  for (const RunLane& l : lanes) {
    if (first == nullptr && l.device) first = &l;
  }
  if (first == nullptr) {
    for (const RunLane& l : lanes)
      std::fprintf(stderr, "latlab run: %s device %s: %s\n", o.backend.c_str(),
                   l.listed.selector.c_str(), l.failure.c_str());
    return kExitMissingCapability;
  }
  print_run_settings(info, o, plan, first->device->info());
  fmt::print(info, "devices: {} in interleaved blocks on the same deadlines\n", lanes.size());
  for (size_t i = 0; i < lanes.size(); ++i) {
    const RunLane& l = lanes[i];
    fmt::print(info, "  section {}: {} device {}: {}{}\n", i, o.backend, l.listed.selector,
               l.device ? l.device->info().name : l.listed.name,
               l.failure.empty() ? "" : " (" + l.failure + ")");
  }
  std::fflush(info);
  for (RunLane& l : lanes) {
    if (!l.failure.empty()) continue;
    l.loaded = prepare_loaded(o, l.plan, *l.device, info, interrupt);
    if (!l.loaded.interrupted.empty()) {  // Ctrl-C: no other calibration; every run stops at once
      l.failure = "stopped before any measured frame: " + l.loaded.interrupted;
      break;
    }
    set_latency_modes(l.plan, l.loaded);
  }
  run_lanes(lanes, interrupt);

  const RunMeta meta = make_run_meta(o);
  const std::vector<PhysicalIdentity> ids =
      o.backend == "sim" ? std::vector<PhysicalIdentity>{} : list_physical_devices();
  nlohmann::ordered_json sections = nlohmann::ordered_json::array();
  nlohmann::ordered_json top;
  std::optional<size_t> top_section;
  int rc = kExitOk;
  for (size_t i = 0; i < lanes.size(); ++i) {
    RunLane& l = lanes[i];
    nlohmann::ordered_json result;
    if (l.run) {
      result = latency_result_doc(o, l.plan, *l.run, l.loaded, *l.device, meta);
      const auto& v = result["diagnostics"]["validation"];
      if (v.is_object() && v.value("errors", uint64_t{0}) > 0) {
        std::fprintf(stderr,
                     "latlab run: device section %zu: the validation layer reported %llu errors\n",
                     i, static_cast<unsigned long long>(v.value("errors", uint64_t{0})));
        for (const auto& m : v["messages"])
          std::fprintf(stderr, "  %s\n", m.get<std::string>().c_str());
        rc = kExitRunFailed;
      }
      if (!top_section) {
        top = result;
        top_section = i;
      }
    }
    if (!l.run || l.run->partial) rc = kExitRunFailed;
    const std::string failure = l.run ? (l.run->partial ? l.run->partial_reason : "") : l.failure;
    sections.push_back(device_section_json(i, o.backend, l.listed, ids, lane_status(l), failure,
                                           std::move(result)));
  }
  if (!top_section) {
    for (const RunLane& l : lanes)
      std::fprintf(stderr, "latlab run: %s device %s: %s\n", o.backend.c_str(),
                   l.listed.selector.c_str(), l.failure.c_str());
    return kExitRunFailed;
  }
  top["devices_run"] = {
      {"interleaving",
       "block by block: each block (in plan order) of every device in section order, one block "
       "at a time, the same deadlines for blocks of one index"},
      {"top_level_section", *top_section},
      {"sections", std::move(sections)}};
  if (o.json) {
    std::printf("%s\n", top.dump(2).c_str());
  } else {
    for (size_t i = 0; i < lanes.size(); ++i) {
      const RunLane& l = lanes[i];
      std::printf("\n== device section %zu: %s device %s: %s [%s]\n", i, o.backend.c_str(),
                  l.listed.selector.c_str(),
                  l.device ? l.device->info().name.c_str() : l.listed.name.c_str(),
                  lane_status(l).c_str());
      if (!l.run) {
        std::printf("  failed: %s\n", l.failure.c_str());
        continue;
      }
      std::fputs(format_run_table(*l.run).c_str(), stdout);
      if (l.plan.want_loaded && !l.loaded.runs)
        std::printf("  Loaded unavailable: %s\n", l.loaded.unavailable.c_str());
    }
  }
  if (!o.out.empty() && !write_result_json(o.out, top, info, rc == kExitOk ? "" : " (incomplete)"))
    rc = kExitWriteFailed;
  for (size_t i = 0; i < lanes.size(); ++i) {
    const RunLane& l = lanes[i];
    if (!l.run) {
      std::fprintf(stderr, "latlab run: device section %zu (%s %s) failed: %s\n", i,
                   o.backend.c_str(), l.listed.selector.c_str(), l.failure.c_str());
    } else if (l.run->partial) {
      std::fprintf(stderr, "latlab run: device section %zu (%s %s) incomplete: %s\n", i,
                   o.backend.c_str(), l.listed.selector.c_str(), l.run->partial_reason.c_str());
    }
  }
  return rc;
}

}  // namespace latlab::cli
