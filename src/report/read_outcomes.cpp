// The result reader: Loaded's calibration, Performance, what was
// unavailable and the partial flag (docs/result-schema.md,
// "load_calibration", "modes.performance"), and the performance-only document.
#include <fmt/format.h>

#include <cmath>

#include "report/result_fields.hpp"
#include "report/result_sections.hpp"

namespace latlab::reading {
namespace {

int64_t ns_of_ms(double ms) { return std::llround(ms * 1e6); }

LoadCalibrationStep read_step(const Obj& s) {
  LoadCalibrationStep out;
  out.index = s.u32("index");
  const std::string kind = s.str("kind");
  if (kind != to_string(StepKind::search) && kind != to_string(StepKind::verify))
    fail(s.key_path("kind"), "'" + kind + "' is not search or verify");
  out.kind = kind == to_string(StepKind::verify) ? StepKind::verify : StepKind::search;
  out.complexity = s.u32("complexity");
  s.opt("median_ms", out.median_ms);
  s.opt("min_ms", out.min_ms);
  s.opt("max_ms", out.max_ms);
  s.opt("error_fraction", out.error_fraction);
  if (s.has("repeat_medians_ms")) {
    const json& a = s.array("repeat_medians_ms");
    for (size_t i = 0; i < a.size(); ++i)
      out.repeat_medians_ms.push_back(
          number_value(a[i], fmt::format("{}[{}]", s.key_path("repeat_medians_ms"), i)));
  }
  if (s.has("spread_fraction")) out.spread_fraction = s.number_or_null("spread_fraction");
  s.opt("frames_submitted", out.frames_submitted);
  s.opt("frames_used", out.frames_used);
  s.opt("frames_missing", out.frames_missing);
  s.opt("why", out.why);
  return out;
}

// The fit and the steps of a calibration report.
void read_fit_and_steps(const Obj& c, LoadCalibrationReport& r) {
  if (c.has("fit")) {
    if (const std::optional<Obj> f = c.obj_or_null("fit")) {
      r.fit_fixed_ms = f->number("fixed_ms");
      r.fit_ms_per_complexity = f->number("ms_per_complexity");
    }
  }
  if (!c.has("steps")) return;
  const json& steps = c.array("steps");
  for (size_t i = 0; i < steps.size(); ++i)
    r.steps.push_back(read_step(Obj(steps[i], fmt::format("{}.steps[{}]", c.path(), i))));
}

}  // namespace

LoadCalibrationReport read_load_calibration(const Obj& c) {
  LoadCalibrationReport r;
  r.complexity = c.u32("complexity");
  c.opt("target_ms", r.target_ms);
  c.opt("tolerance", r.tolerance);
  c.opt("width", r.width);
  c.opt("height", r.height);
  c.opt("passes", r.passes);
  if (c.has("form"))
    r.form = c.str("form") == "fragment" ? WorkloadForm::fragment : WorkloadForm::compute;
  c.opt("verified", r.verified);
  c.opt("within_tolerance", r.within_tolerance);
  c.opt("median_ms", r.median_ms);
  c.opt("error_fraction", r.error_fraction);
  c.opt("p5_ms", r.p5_ms);
  c.opt("gpu_ms", r.gpu_ms);
  c.opt("outcome", r.outcome);
  if (c.has("noise_fraction")) r.noise_fraction = c.number_or_null("noise_fraction");
  c.opt("noise_limited", r.noise_limited);
  if (c.has("uncertainty_fraction"))
    r.uncertainty_fraction = c.number_or_null("uncertainty_fraction");
  if (c.has("step_ms")) r.step_ms = c.number_or_null("step_ms");
  c.opt("granularity_limited", r.granularity_limited);
  c.opt("evaluations", r.evaluations);
  c.opt("frames_submitted", r.frames_submitted);
  c.opt("frames_missing", r.frames_missing);
  if (c.has("wall_ms")) r.wall_ns = ns_of_ms(c.number("wall_ms"));
  read_fit_and_steps(c, r);
  return r;
}

LoadSizeChoice read_load_size(const Obj& s) {
  LoadSizeChoice out;
  out.asked = s.str("asked");
  out.used = s.str_or_empty("used");
  s.opt("why", out.why);
  if (!s.has("tried")) return out;
  const json& tried = s.array("tried");
  for (size_t i = 0; i < tried.size(); ++i) {
    const Obj t(tried[i], fmt::format("{}.tried[{}]", s.path(), i));
    out.tried.emplace_back(t.str("size"), t.str("reason"));
  }
  return out;
}

PerformanceReport read_performance(const Obj& p) {
  PerformanceReport r;
  r.work = read_workload(p.obj("workload"));
  r.frames = p.u32("frames");
  p.opt("partial_reason", r.partial_reason);
  r.gpu_ms = p.distribution("gpu_ms");
  r.fps = p.distribution("fps");
  p.opt("gpu_timeline_fps", r.gpu_timeline_fps);
  if (p.has("wall_ms")) r.wall_ns = ns_of_ms(p.number("wall_ms"));
  return r;
}

namespace {

// `load_calibration`: calibrated (with its size), given, or null (failed).
void read_loaded(const Obj& doc, LoadedOutcome& loaded) {
  if (!doc.has("load_calibration")) return;
  loaded.asked = true;
  const std::optional<Obj> c = doc.obj_or_null("load_calibration");
  if (!c) return;
  const std::string source = c->str("source");
  if (source == "calibrated") {
    loaded.calibration = read_load_calibration(*c);
  } else if (source == "given") {
    loaded.given_complexity = c->u32("complexity");
  } else {
    fail(c->key_path("source"), "'" + source + "' is not calibrated or given");
  }
  if (c->has("size")) loaded.size = read_load_size(c->obj("size"));
}

void read_performance_mode(const Obj& doc, PerformanceOutcome& perf) {
  const Obj modes = doc.obj("modes");
  if (!modes.has("performance")) return;
  const Obj p = modes.obj("performance");
  perf.asked = true;
  if (p.boolean("available")) {
    perf.report = read_performance(p);
  } else {
    perf.unavailable = p.str_or_empty("reason");
  }
}

// `unavailable` without the entries read_outcomes' parts add: Loaded's and
// Performance's, last.
std::vector<MissingCapability> run_unavailable(const Obj& doc, const RunResult& r) {
  if (!doc.has("unavailable")) return {};
  std::vector<MissingCapability> u =
      read_capabilities(doc.at("unavailable"), doc.key_path("unavailable"));
  const auto drop_last = [&u](const char* name) {
    if (!u.empty() && u.back().name == name) u.pop_back();
  };
  if (r.performance.asked && !r.performance.report) drop_last("performance");
  if (r.loaded.asked && !r.loaded.runs) drop_last("loaded");
  return u;
}

}  // namespace

void read_outcomes(const Obj& doc, const PartialFlag& partial, RunResult& r) {
  read_loaded(doc, r.loaded);
  read_performance_mode(doc, r.performance);
  r.latency->unavailable = run_unavailable(doc, r);
  if (!partial.partial) return;
  // Partial: Performance (after the blocks) was interrupted, or the latency run.
  const PerformanceOutcome& perf = r.performance;
  const std::string& perf_said = perf.report ? perf.report->partial_reason : perf.unavailable;
  if (perf.asked && !partial.reason.empty() && perf_said == partial.reason) {
    r.performance.interrupted = partial.reason;
  } else {
    r.latency->partial = true;
    r.latency->partial_reason = partial.reason;
  }
}

void read_performance_run(const Obj& doc, RunResult& r) {
  r.device = fields::read_object<DeviceInfo>(doc.obj("device"), fields::kDeviceIdentityFields);
  const Obj s = doc.obj("settings");
  r.meta.mode = s.str("mode");
  r.meta.backend = s.str("backend");
  s.opt("device", r.meta.device);
  read_performance_mode(doc, r.performance);
  if (!r.performance.report) fail(doc.key_path("modes") + ".performance", "missing or unavailable");
  if (doc.has("unavailable"))
    r.device.missing = read_capabilities(doc.at("unavailable"), doc.key_path("unavailable"));
}

}  // namespace latlab::reading
