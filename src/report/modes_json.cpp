// JSON of the Loaded calibration and of Performance mode (docs/result-schema.md).
#include <nlohmann/json.hpp>

#include "latlab/bench/latency_report.hpp"
#include "latlab/host_clock.hpp"
#include "report/json_parts.hpp"
#include "report/result_fields.hpp"
#include "report/result_json.hpp"

namespace latlab {

using json = nlohmann::ordered_json;

json load_calibration_to_json(const LoadCalibrationReport& r) {
  return fields::write_object(r, fields::kLoadCalibrationFields);
}

json performance_to_json(const PerformanceReport& r) {
  return fields::write_object(r, fields::kPerformanceFields);
}

json performance_settings_to_json(const RunMeta& meta) {
  return fields::write_object(meta, fields::kRunSettingsFields);
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
