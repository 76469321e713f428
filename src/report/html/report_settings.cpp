// The HTML report's key/value tables: machine, device and settings, Loaded's
// calibration, the clock model.
#include <fmt/format.h>

#include <algorithm>

#include "latlab/host_clock.hpp"
#include "report/html/report_parts.hpp"
#include "report/result_fields.hpp"
#include "report/result_json.hpp"

namespace latlab::html {
namespace {

// A row per key of `j`, named prefix + key, but those in `skip`.
void json_rows(std::string& t, const json& j, std::string_view prefix,
               std::initializer_list<std::string_view> skip = {}) {
  for (const auto& [k, v] : j.items()) {
    if (std::find(skip.begin(), skip.end(), k) == skip.end())
      row(t, std::string(prefix) + k, cell(v, 3));
  }
}

// A run without latency blocks has the device's identity only.
void device_rows(std::string& t, const DeviceInfo& d, bool whole) {
  row(t, "device.backend", text(d.backend));
  row(t, "device.name", text(d.name));
  row(t, "device.driver", text(d.driver));
  row(t, "device.tick_period_ns", whole ? number(d.ticks.period_ns(), 3) : na());
  row(t, "device.timestamp_valid_bits", whole ? count(d.ticks.valid_bits) : na());
  row(t, "device.calibration_domain", whole ? text_or_na(d.calibration_domain) : na());
  row(t, "device.calibration_estimated", whole ? yes_no(d.calibration_estimated) : na());
}

}  // namespace

void meta_rows(std::string& t, const RunResult& r) {
  row(t, "created (UTC)", text(r.meta.created_utc));
  row(t, "command line", "<code>" + text(r.meta.command_line) + "</code>");
  row(t, "tool", "latlab " + text(r.meta.tool_version));
}

std::string settings_table(const RunResult& r) {
  std::string t = "<table class=\"kv\">\n";
  meta_rows(t, r);
  json_rows(t, fields::write_object(r.meta.machine, fields::kMachineFields), "machine.");
  const LatencyRun* run = r.latency ? &*r.latency : nullptr;
  row(t, "host clock",
      std::string(kHostClockName) + " (" + (run ? text(run->time_source) : na()) + ")");
  device_rows(t, run ? run->device : r.device, run != nullptr);
  const json settings = result_settings_to_json(r);
  for (const auto& [k, v] : settings.items()) {
    row(t, "settings." + k,
        v.is_structured() ? "<code>" + escape(v.dump()) + "</code>" : cell(v, 3));
  }
  return t + "</table>\n";
}

namespace {

std::string steps_table(const std::vector<LoadCalibrationStep>& steps) {
  if (steps.empty()) return "";
  std::string t =
      "<table><tr><th>#</th><th>kind</th><th>size</th><th>complexity</th><th>median ms</th>"
      "<th>min ms</th><th>max ms</th><th>error</th><th>frames used</th><th>missing</th>"
      "<th>why</th></tr>\n";
  for (const LoadCalibrationStep& s : steps) {
    t += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td class=\"why\">{}</td></tr>\n",
        count(s.index), text(to_string(s.kind)), "", count(s.complexity), number(s.median_ms, 3),
        number(s.min_ms, 3), number(s.max_ms, 3), number(s.error_fraction, 4), count(s.frames_used),
        count(s.frames_missing), text(s.why));
  }
  return t + "</table>\n";
}

}  // namespace

std::string load_calibration_section(const LoadedOutcome& loaded) {
  if (!loaded.calibration && loaded.given_complexity == 0)
    return "<p class=\"warn\">Load calibration failed: see modes.loaded.</p>\n";
  std::string t = "<table class=\"kv\">\n";
  if (loaded.calibration) {
    row(t, "source", "calibrated");
    json_rows(t, fields::write_object(*loaded.calibration, fields::kLoadCalibrationFields), "",
              {"gpu_ms", "noise_fraction", "noise_limited", "uncertainty_fraction", "step_ms",
               "granularity_limited", "fit", "steps"});
  } else {
    row(t, "source", "given");
    row(t, "complexity", count(loaded.given_complexity));
  }
  row(t, "size asked", text(loaded.size.asked));
  row(t, "size used", text_or_na(loaded.size.used));
  row(t, "size: why", text(loaded.size.why));
  t += "</table>\n";
  return loaded.calibration ? t + steps_table(loaded.calibration->steps) : t;
}

std::string clock_model_table(const ClockModelReport& c) {
  std::string t = "<table class=\"kv\">\n";
  json_rows(t, clock_model_to_json(c), "", {"pairs"});
  row(t, "pairs (accepted, in the result)", std::to_string(c.pairs.size()));
  return t + "</table>\n";
}

}  // namespace latlab::html
