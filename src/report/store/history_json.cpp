// `latlab history --json` (history_report.hpp).
#include <nlohmann/json.hpp>

#include "report/store/history_report.hpp"

namespace latlab {
namespace {

using json = nlohmann::ordered_json;

json opt(std::optional<double> v) { return v ? json(*v) : json(nullptr); }

// `score` of a run: null when it was stored without one; its components are
// the core p50 and p99 of its baseline and loaded rows.
json score_json(const store::StoredRunSummary& r) {
  if (!r.score) return nullptr;
  const store::StoredScore& s = *r.score;
  json components = json::array();
  for (const auto& m : r.modes) {
    if (!s.value || (m.mode != "baseline" && m.mode != "loaded")) continue;
    components.push_back({{"mode", m.mode}, {"statistic", "p50"}, {"value_us", opt(m.core_p50)}});
    components.push_back({{"mode", m.mode}, {"statistic", "p99"}, {"value_us", opt(m.core_p99)}});
  }
  return {{"formula", s.formula},
          {"value", opt(s.value)},
          {"ci95", s.value ? json::array({opt(s.ci_low), opt(s.ci_high)}) : json(nullptr)},
          {"components", std::move(components)},
          {"unavailable_reason", s.value ? json(nullptr) : json(s.unavailable_reason)}};
}

json modes_json(const store::StoredRunSummary& r) {
  json modes = json::object();
  for (const auto& m : r.modes) {
    if (m.mode == "capture") {
      modes[m.mode] = {{"frames", m.frames},
                       {"between_presents_p50_us", opt(m.between_presents_p50)},
                       {"between_presents_p99_us", opt(m.between_presents_p99)},
                       {"gpu_busy_p50_us", opt(m.gpu_busy_p50)},
                       {"gpu_busy_p99_us", opt(m.gpu_busy_p99)}};
      continue;
    }
    modes[m.mode] = {{"frames", m.frames},
                     {"core_latency_p50_us", opt(m.core_p50)},
                     {"core_latency_p99_us", opt(m.core_p99)},
                     {"core_latency_missing", m.core_missing},
                     {"fence_latency_p50_us", opt(m.fence_p50)},
                     {"fence_latency_p99_us", opt(m.fence_p99)}};
  }
  return modes;
}

}  // namespace

std::string history_json(const std::vector<store::StoredRunSummary>& runs,
                         const std::string& store_name) {
  json arr = json::array();
  for (const auto& r : runs) {
    arr.push_back({{"id", r.id},
                   {"stored_utc", r.stored_utc},
                   {"created_utc", r.created_utc},
                   {"hostname", r.hostname},
                   {"backend", r.backend},
                   {"device", r.device},
                   {"driver", r.driver},
                   {"fingerprint", r.fingerprint},
                   {"tool_version", r.tool_version},
                   {"mode", r.settings_mode},
                   {"partial", r.partial},
                   {"frame_rows", r.frame_rows ? json(*r.frame_rows) : json(nullptr)},
                   {"modes", modes_json(r)},
                   {"score", score_json(r)}});
  }
  return json{{"store", store_name}, {"runs", arr}}.dump(2);
}

}  // namespace latlab
