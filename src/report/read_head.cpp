// The result reader: the document's head, device and settings
// (docs/result-schema.md, "Top level" to "settings"); the sections on a field
// table (result_fields.hpp) are read by their tables.
#include "report/result_fields.hpp"
#include "report/result_sections.hpp"

namespace latlab::reading {

PartialFlag read_head(const Obj& doc, RunMeta& meta) {
  meta.tool_version = doc.obj("tool").str("version");
  meta.created_utc = doc.str("created_utc");
  meta.command_line = doc.str("command_line");
  PartialFlag p;
  p.partial = doc.boolean("partial");
  p.reason = doc.str_or_empty("partial_reason");
  meta.machine = fields::read_object<MachineInfo>(doc.obj("machine"), fields::kMachineFields);
  return p;
}

std::vector<MissingCapability> read_capabilities(const json& a, const std::string& path) {
  return fields::read_records<MissingCapability>(a, path, fields::kCapabilityFields);
}

DeviceInfo read_device(const Obj& d) {
  DeviceInfo di = fields::read_object<DeviceInfo>(d, fields::kDeviceIdentityFields);
  fields::read_fields(d, fields::kDeviceTimingFields, di);
  return di;
}

void read_settings(const Obj& s, RunMeta& meta, LatencyRun& run) {
  meta.mode = s.str("mode");
  meta.backend = s.str("backend");
  s.opt("device", meta.device);
  LatencyRunDesc& d = run.desc;
  d.schedule.seed = s.u64("seed");
  d.frames = s.u32("frames");
  d.blocks = s.u32("blocks");
  if (s.has("interval_ns")) {
    const Obj iv = s.obj("interval_ns");
    d.schedule.min_interval_ns = iv.i64("min");
    d.schedule.max_interval_ns = iv.i64("max");
  }
  s.opt("warmup_frames", d.warmup_frames);
  s.opt("cpu_step_iterations", d.cpu_step_iterations);
  if (s.has("workload"))
    d.workload = fields::read_object<FrameWorkload>(s.obj("workload"), fields::kWorkloadFields);
  if (s.has("timer_slack"))
    run.timer_slack =
        fields::read_object<TimerSlack>(s.obj("timer_slack"), fields::kTimerSlackFields);
  s.opt("bare_comparison", d.bare_comparison);
  s.opt("poll_completion", d.poll_completion);
  s.opt("poll_limit_ns", d.poll_limit_ns);
  s.opt("block_lead_ns", d.block_lead_ns);
  s.opt("turn_warmup_ns", d.turn_warmup_ns);
  s.opt("execution", run.execution);
}

}  // namespace latlab::reading
