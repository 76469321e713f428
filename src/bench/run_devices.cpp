// Several devices: every device's latency path in interleaved blocks on the
// same deadlines (run_latency_interleaved), one result section per device.
// The result's top-level keys are those of a one-device result, describing
// the first device that ran (docs/result-schema.md).
#include <utility>

#include "latlab/bench/latency_devices.hpp"
#include "latlab/bench/run_engine.hpp"

namespace latlab {
namespace {

// A lane while it runs: its device, clocks, plan and Loaded workload.
struct LaneRun {
  RunLane* lane = nullptr;
  std::unique_ptr<TickMapper> mapper;
  RunPlan plan;
  LoadedOutcome loaded;
  std::string failure;  // why it did not run; "" when it did
  std::optional<LatencyRun> run;
};

// Each opened lane's Loaded workload; an interrupt stops every calibration.
void prepare_lanes(std::vector<LaneRun>& runs, const RunHooks& hooks) {
  for (LaneRun& l : runs) {
    if (!l.failure.empty()) continue;
    l.loaded = prepare_loaded(l.plan, *l.lane->device, hooks);
    if (!l.loaded.interrupted.empty()) {
      l.failure = "stopped before any measured frame: " + l.loaded.interrupted;
      break;
    }
    set_latency_modes(l.plan, l.loaded);
  }
}

// Every lane's latency blocks, interleaved.
void run_lanes(std::vector<LaneRun>& runs, const RunHooks& hooks) {
  std::vector<DeviceLane> dl;
  std::vector<LaneRun*> ran;
  for (LaneRun& l : runs) {
    if (!l.failure.empty()) continue;
    DeviceLane d;
    d.desc = l.plan.desc;
    d.env.device = l.lane->device.get();
    d.env.mapper = l.mapper.get();
    d.env.interrupt = hooks.interrupt;
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

// The section of one lane, with its own whole result when it ran.
DeviceSectionResult section_of(LaneRun& l, const RunMeta& meta) {
  DeviceSectionResult s;
  s.head = l.lane->head;
  s.device_name = l.lane->device ? l.lane->device->info().name : l.lane->head.name;
  if (!l.run) {
    s.status = "failed";
    s.failure = l.failure;
    return s;
  }
  s.status = l.run->partial ? "partial" : "ok";
  s.failure = l.run->partial ? l.run->partial_reason : "";
  RunResult r;
  r.meta = meta;
  r.meta.validation = validation_findings(*l.lane->device, l.plan.validation);
  r.device = l.run->device;
  r.latency = std::move(*l.run);
  r.loaded = std::move(l.loaded);
  if (l.plan.per_frame) r.per_frame = per_frame_of(*r.latency);
  s.result.push_back(std::move(r));
  return s;
}

}  // namespace

void plan_for_devices(RunPlan& plan, size_t devices) {
  if (!plan.turn_warmup_given && devices > 1)
    plan.desc.turn_warmup_ns = kSeveralDevicesTurnWarmupNs;
}

RunOutcome run_on_devices(const RunPlan& plan, std::vector<RunLane>& lanes, const RunMeta& meta,
                          const RunHooks& hooks) {
  std::vector<LaneRun> runs(lanes.size());
  for (size_t i = 0; i < lanes.size(); ++i) {
    runs[i].lane = &lanes[i];
    runs[i].plan = plan;
    runs[i].failure = lanes[i].failure;
    if (lanes[i].device) runs[i].mapper = make_calibrated_mapper(*lanes[i].device, plan.calibrator);
  }
  prepare_lanes(runs, hooks);
  run_lanes(runs, hooks);
  RunOutcome out;
  for (LaneRun& l : runs) {
    out.result.sections.push_back(section_of(l, meta));
    DeviceSectionResult& s = out.result.sections.back();
    if (out.result.top_section || s.result.empty()) continue;
    out.result.top_section = static_cast<uint32_t>(out.result.sections.size() - 1);
  }
  if (!out.result.top_section) {
    out.stop = RunStop::nothing_measured;
    return out;
  }
  out.result.meta = meta;
  return out;
}

}  // namespace latlab
