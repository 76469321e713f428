// The result reader: Loaded's calibration, Performance, what was
// unavailable and the partial flag (docs/result-schema.md,
// "load_calibration", "modes.performance"), and the performance-only document.
#include "report/result_fields.hpp"
#include "report/result_sections.hpp"

namespace latlab::reading {
namespace {

// `load_calibration`: calibrated (with its size), given, or null (failed).
void read_loaded(const Obj& doc, LoadedOutcome& loaded) {
  if (!doc.has("load_calibration")) return;
  loaded.asked = true;
  const std::optional<Obj> c = doc.obj_or_null("load_calibration");
  if (!c) return;
  const std::string source = c->str("source");
  if (source == "calibrated") {
    loaded.calibration =
        fields::read_object<LoadCalibrationReport>(*c, fields::kLoadCalibrationFields);
  } else if (source == "given") {
    loaded.given_complexity = c->u32("complexity");
  } else {
    fail(c->key_path("source"), "'" + source + "' is not calibrated or given");
  }
  if (c->has("size"))
    loaded.size = fields::read_object<LoadSizeChoice>(c->obj("size"), fields::kLoadSizeFields);
}

void read_performance_mode(const Obj& doc, PerformanceOutcome& perf) {
  const Obj modes = doc.obj("modes");
  if (!modes.has("performance")) return;
  const Obj p = modes.obj("performance");
  perf.asked = true;
  if (p.boolean("available")) {
    perf.report = fields::read_object<PerformanceReport>(p, fields::kPerformanceFields);
  } else {
    fields::read_fields(p, fields::kPerformanceUnavailableFields, perf);
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
  fields::read_fields(doc.obj("settings"), fields::kRunSettingsFields, r.meta);
  read_performance_mode(doc, r.performance);
  if (!r.performance.report) fail(doc.key_path("modes") + ".performance", "missing or unavailable");
  if (doc.has("unavailable"))
    r.device.missing = read_capabilities(doc.at("unavailable"), doc.key_path("unavailable"));
}

}  // namespace latlab::reading
