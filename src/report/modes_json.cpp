// JSON of the Loaded calibration and of Performance mode (docs/result-schema.md).
#include <nlohmann/json.hpp>

#include "latlab/bench/latency_report.hpp"
#include "latlab/host_clock.hpp"
#include "report/json_parts.hpp"
#include "report/result_json.hpp"

namespace latlab {

using json = nlohmann::ordered_json;

json load_calibration_to_json(const LoadCalibrationReport& r) {
  json steps = json::array();
  for (const LoadCalibrationStep& s : r.steps) {
    steps.push_back(
        {{"index", s.index},
         {"kind", to_string(s.kind)},
         {"complexity", s.complexity},
         {"median_ms", s.median_ms},
         {"min_ms", s.min_ms},
         {"max_ms", s.max_ms},
         {"error_fraction", s.error_fraction},
         {"repeat_medians_ms", s.repeat_medians_ms},
         {"spread_fraction", s.spread_fraction ? json(*s.spread_fraction) : json(nullptr)},
         {"frames_submitted", s.frames_submitted},
         {"frames_used", s.frames_used},
         {"frames_missing", s.frames_missing},
         {"why", s.why}});
  }
  return {{"target_ms", r.target_ms},
          {"tolerance", r.tolerance},
          {"width", r.width},
          {"height", r.height},
          {"passes", r.passes},
          {"form", form_name(r.form)},
          {"complexity", r.complexity},
          {"verified", r.verified},
          {"within_tolerance", r.within_tolerance},
          {"median_ms", r.median_ms},
          {"error_fraction", r.error_fraction},
          {"p5_ms", r.verified ? json(r.p5_ms) : json(nullptr)},
          {"gpu_ms", distribution_to_json(r.gpu_ms)},
          {"outcome", r.outcome},
          {"noise_fraction", r.noise_fraction ? json(*r.noise_fraction) : json(nullptr)},
          {"noise_limited", r.noise_limited},
          {"uncertainty_fraction",
           r.uncertainty_fraction ? json(*r.uncertainty_fraction) : json(nullptr)},
          {"step_ms", r.step_ms ? json(*r.step_ms) : json(nullptr)},
          {"granularity_limited", r.granularity_limited},
          {"fit", r.fit_fixed_ms && r.fit_ms_per_complexity
                      ? json{{"fixed_ms", *r.fit_fixed_ms},
                             {"ms_per_complexity", *r.fit_ms_per_complexity}}
                      : json(nullptr)},
          {"evaluations", r.evaluations},
          {"frames_submitted", r.frames_submitted},
          {"frames_missing", r.frames_missing},
          {"wall_ms", static_cast<double>(r.wall_ns) / 1e6},
          {"steps", steps}};
}

json performance_to_json(const PerformanceReport& r) {
  return {{"available", true},
          {"workload", workload_to_json(r.work)},
          {"offscreen", true},
          {"frames", r.frames},
          {"partial_reason", r.partial_reason.empty() ? json(nullptr) : json(r.partial_reason)},
          {"gpu_ms", distribution_to_json(r.gpu_ms)},
          {"fps", distribution_to_json(r.fps)},
          {"gpu_timeline_fps", r.gpu_timeline_fps > 0 ? json(r.gpu_timeline_fps) : json(nullptr)},
          {"wall_ms", static_cast<double>(r.wall_ns) / 1e6},
          {"units", {{"gpu_ms", "ms"}, {"fps", "frames per second"}}}};
}

json performance_settings_to_json(const RunMeta& meta) {
  return {{"mode", meta.mode}, {"backend", meta.backend}, {"device", meta.device}};
}

json performance_run_to_json(const PerformanceReport& r, const DeviceInfo& di,
                             const RunMeta& meta) {
  json j =
      result_header_to_json("performance_run", meta, !r.partial_reason.empty(), r.partial_reason);
  j["machine"] = machine_to_json(meta.machine);
  j["host_clock"] = {{"name", kHostClockName}};
  j["device"] = device_identity_to_json(di);
  j["settings"] = performance_settings_to_json(meta);
  j["modes"] = {{"performance", performance_to_json(r)}};
  j["unavailable"] = capabilities_to_json(di.missing);
  return j;
}

}  // namespace latlab
