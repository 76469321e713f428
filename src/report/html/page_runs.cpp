#include "report/html/page_runs.hpp"

#include "report/result_json.hpp"

namespace latlab::html {

RunDevice run_device(const RunResult& r) {
  if (r.capture) {
    if (r.capture->sources.empty()) return {};
    return {r.capture->sources[0].api, r.capture->sources[0].device, ""};
  }
  const DeviceInfo& d = r.latency ? r.latency->device : r.device;
  return {d.backend, d.name, d.driver};
}

std::vector<RunMode> run_modes(const RunResult& r) {
  std::vector<RunMode> out;
  if (!r.latency) return out;
  for (const LatencyModeResult& m : r.latency->modes)
    out.push_back({m.name, true, "", &m.workload});
  if (r.loaded.asked && !r.loaded.runs)
    out.push_back({"loaded", false, r.loaded.unavailable, nullptr});
  return out;
}

nlohmann::json run_settings(const RunResult& r) {
  // Through its text: the pages list settings in key order, as before.
  return nlohmann::json::parse(result_settings_to_json(r).dump());
}

}  // namespace latlab::html
