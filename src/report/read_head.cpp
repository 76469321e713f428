// The result reader: the document's head, machine, device, clock model and
// settings (docs/result-schema.md, "Top level" to "settings").
#include <fmt/format.h>

#include "report/result_sections.hpp"

namespace latlab::reading {

PartialFlag read_head(const Obj& doc, RunMeta& meta) {
  meta.tool_version = doc.obj("tool").str("version");
  meta.created_utc = doc.str("created_utc");
  meta.command_line = doc.str("command_line");
  PartialFlag p;
  p.partial = doc.boolean("partial");
  p.reason = doc.str_or_empty("partial_reason");
  meta.machine = read_machine(doc.obj("machine"));
  return p;
}

MachineInfo read_machine(const Obj& m) {
  MachineInfo out;
  out.hostname = m.str("hostname");
  out.os = m.str_or_empty("os");
  out.kernel = m.str("kernel");
  out.arch = m.str("arch");
  out.cpu_model = m.str_or_empty("cpu_model");
  out.logical_cpus = m.u32("logical_cpus");
  return out;
}

std::vector<MissingCapability> read_capabilities(const json& a, const std::string& path) {
  std::vector<MissingCapability> out;
  array_of(a, path);
  for (size_t i = 0; i < a.size(); ++i) {
    const Obj c(a[i], fmt::format("{}[{}]", path, i));
    out.push_back({c.str("name"), c.str("reason")});
  }
  return out;
}

DeviceInfo read_device(const Obj& d) {
  DeviceInfo di;
  di.backend = d.str("backend");
  di.name = d.str("name");
  di.driver = d.str("driver");
  if (d.has("tick_period_fraction")) {
    const json& f = d.array("tick_period_fraction");
    const std::string path = d.key_path("tick_period_fraction");
    if (f.size() != 2) fail(path, "expected [num, den]");
    di.ticks.period_num = u64_value(f[0], path + "[0]");
    di.ticks.period_den = u64_value(f[1], path + "[1]");
    if (di.ticks.period_num == 0 || di.ticks.period_den == 0) fail(path, "a period of 0");
  }
  d.opt("timestamp_valid_bits", di.ticks.valid_bits);
  if (di.ticks.valid_bits < 1 || di.ticks.valid_bits > 64)
    fail(d.key_path("timestamp_valid_bits"), "not in 1..64");
  d.opt("can_time", di.can_time);
  d.opt("calibration_domain", di.calibration_domain);
  d.opt("calibration_estimated", di.calibration_estimated);
  if (d.has("missing_capabilities"))
    di.missing =
        read_capabilities(d.at("missing_capabilities"), d.key_path("missing_capabilities"));
  return di;
}

namespace {

std::vector<CalibrationPair> read_pairs(const Obj& c) {
  std::vector<CalibrationPair> out;
  const json& a = c.array("pairs");
  for (size_t i = 0; i < a.size(); ++i) {
    const Obj p(a[i], fmt::format("{}[{}]", c.key_path("pairs"), i));
    out.push_back({p.u64("device_ticks"), p.i64("host_ns"), p.i64("max_deviation_ns"),
                   p.boolean("estimated")});
  }
  return out;
}

}  // namespace

ClockModelReport read_clock_model(const Obj& c) {
  ClockModelReport m;
  m.available = c.boolean("available");
  c.opt("reason", m.reason);
  c.opt("source", m.source);
  c.opt("drift_ppm", m.drift_ppm);
  c.opt("drift_error_ppm", m.drift_error_ppm);
  c.opt("error_bound_ns", m.error_bound_ns);
  c.opt("pairs_used", m.pairs_used);
  c.opt("pairs_accepted", m.pairs_accepted);
  c.opt("pairs_rejected", m.pairs_rejected);
  c.opt("refreshes", m.refreshes);
  c.opt("failed_refreshes", m.failed_refreshes);
  c.opt("max_refresh_cost_ns", m.max_refresh_cost_ns);
  c.opt("refresh_interval_ns", m.refresh_interval_ns);
  c.opt("estimated", m.estimated);
  c.opt("frame_mapping", m.frame_mapping);
  c.opt("block_end_pairs", m.block_end_pairs);
  c.opt("failed_block_end_pairs", m.failed_block_end_pairs);
  c.opt("frames_between_pairs", m.frames_between_pairs);
  c.opt("frames_outside_pairs", m.frames_outside_pairs);
  c.opt("interpolation_misfit_ns", m.interpolation_misfit_ns);
  if (c.has("pairs")) m.pairs = read_pairs(c);
  return m;
}

FrameWorkload read_workload(const Obj& w) {
  FrameWorkload out;
  out.passes = w.u32("passes");
  out.complexity = w.u32("complexity");
  out.width = w.u32("width");
  out.height = w.u32("height");
  const std::string form = w.str("form");
  if (form != "compute" && form != "fragment")
    fail(w.key_path("form"), "'" + form + "' is not compute or fragment");
  out.form = form == "fragment" ? WorkloadForm::fragment : WorkloadForm::compute;
  return out;
}

namespace {

TimerSlack read_timer_slack(const Obj& t) {
  TimerSlack s;
  s.requested = t.boolean("requested");
  t.opt("requested_ns", s.requested_ns);
  t.opt("previous_ns", s.previous_ns);
  t.opt("obtained_ns", s.obtained_ns);
  t.opt("applied", s.applied);
  t.opt("error", s.error);
  return s;
}

}  // namespace

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
  if (s.has("workload")) d.workload = read_workload(s.obj("workload"));
  if (s.has("timer_slack")) run.timer_slack = read_timer_slack(s.obj("timer_slack"));
  s.opt("bare_comparison", d.bare_comparison);
  s.opt("poll_completion", d.poll_completion);
  s.opt("poll_limit_ns", d.poll_limit_ns);
  s.opt("block_lead_ns", d.block_lead_ns);
  s.opt("turn_warmup_ns", d.turn_warmup_ns);
  s.opt("execution", run.execution);
}

}  // namespace latlab::reading
