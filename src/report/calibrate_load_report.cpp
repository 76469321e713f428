#include "report/calibrate_load_report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "report/json_parts.hpp"
#include "report/result_json.hpp"

namespace latlab {

std::string calibrate_load_settings_text(const DeviceInfo& info, const LoadCalibrationDesc& desc,
                                         std::string_view form) {
  return fmt::format(
      "calibrate-load: device '{}' ({}), target {} ms +/- {}%, {}x{}, {} {} passes, complexity "
      "{}..{}, {} x {} frames per search step, {} to verify, at most {} evaluations ({} "
      "frames)\n",
      info.name, info.backend, desc.target_ms, desc.tolerance * 100.0, desc.width, desc.height,
      desc.passes, form, desc.min_complexity, desc.max_complexity, desc.repeats,
      desc.frames_per_eval, desc.verify_frames, desc.max_evaluations,
      load_calibration_max_frames(desc));
}

std::string calibrate_load_step_line(const LoadCalibrationStep& s) {
  return fmt::format(
      "  #{:<2} {:6} complexity {:>4}  median {:>9.4f} ms ({:+7.2f}%)  spread {}  {}/{} frames{}  "
      "{}",
      s.index, to_string(s.kind), s.complexity, s.median_ms, s.error_fraction * 100.0,
      s.spread_fraction ? fmt::format("{:5.2f}%", *s.spread_fraction * 100.0) : "    -",
      s.frames_used, s.frames_used + s.frames_missing,
      s.frames_missing ? fmt::format(" ({} missing)", s.frames_missing) : std::string(), s.why);
}

std::string calibrate_load_result_text(const LoadCalibrationReport& r,
                                       const LoadCalibrationDesc& desc) {
  const Distribution& g = r.gpu_ms;
  std::string out = fmt::format("result: complexity {} -> median {:.4f} ms ({:+.2f}% from {} ms){}\n",
                                r.complexity, r.median_ms, r.error_fraction * 100.0,
                                desc.target_ms, r.verified ? "" : " (NOT verified)");
  if (r.verified) {
    out += fmt::format(
        "  over {} frames ({} missing): p5 {:.4f}  p95 {:.4f}  min {:.4f}  max {:.4f}  stddev {} "
        "ms\n",
        g.count, g.missing, r.p5_ms, g.p95, g.min, g.max,
        g.stddev ? fmt::format("{:.4f}", *g.stddev) : std::string("-"));
  }
  out += fmt::format("  {}; {} evaluations, {} frames ({} missing), {:.1f} ms wall\n", r.outcome,
                     r.evaluations, r.frames_submitted, r.frames_missing,
                     static_cast<double>(r.wall_ns) / 1e6);
  out += fmt::format(
      "  timing noise: {} (median spread of the repeated measurements per step; tolerance "
      "{:.3g}%)\n",
      r.noise_fraction ? fmt::format("{:.2f}%", *r.noise_fraction * 100.0)
                       : std::string("not measured"),
      desc.tolerance * 100.0);
  return out;
}

std::string calibrate_load_json(const LoadCalibrationReport& r, const LoadCalibrationDesc& d,
                                const DeviceInfo& info) {
  nlohmann::ordered_json doc;
  doc["schema"] = "latlab.calibrate_load/1";
  doc["device"] = device_identity_to_json(info);
  doc["settings"] = {{"target_ms", d.target_ms},
                     {"tolerance", d.tolerance},
                     {"width", d.width},
                     {"height", d.height},
                     {"passes", d.passes},
                     {"form", form_name(d.form)},
                     {"min_complexity", d.min_complexity},
                     {"max_complexity", d.max_complexity},
                     {"discard_frames", d.discard_frames},
                     {"frames_per_eval", d.frames_per_eval},
                     {"repeats", d.repeats},
                     {"verify_frames", d.verify_frames},
                     {"max_evaluations", d.max_evaluations}};
  doc.update(load_calibration_to_json(r));
  return doc.dump(2);
}

}  // namespace latlab
