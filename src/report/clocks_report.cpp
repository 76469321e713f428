#include "report/clocks_report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "report/json_parts.hpp"
#include "report/result_json.hpp"

namespace latlab {
namespace {

std::string dist_line(const Distribution& d) {
  if (d.empty()) return fmt::format("no samples ({} missing)", d.missing);
  return fmt::format("p50 {:.3f}  p99 {:.3f}  min {:.3f}  max {:.3f}  mean {:.3f}  (n={}{})", d.p50,
                     d.p99, d.min, d.max, d.mean, d.count,
                     d.missing ? fmt::format(", {} missing", d.missing) : "");
}

// The drift-corrected model against a single start-up pair, on the fresh pairs.
std::string fresh_pairs_text(const ClockStudyResult& r) {
  const Distribution& m = r.model_error_us;
  const Distribution& s = r.single_pair_error_us;
  // An empty distribution has no statistics: "-", never 0.
  auto cell = [](const Distribution& d, double v) {
    return d.empty() ? std::string("-") : fmt::format("{:.3f}", v);
  };
  std::string out = fmt::format(
      "at the end, {} fresh pairs not in the fit (mapped host - pair host, us):\n", r.fresh_count);
  out += fmt::format("  {:<8} {:>22} {:>22}\n", "", "drift-corrected model", "single start-up pair");
  out += fmt::format("  {:<8} {:>22} {:>22}\n", "mean", cell(m, m.mean), cell(s, s.mean));
  out += fmt::format("  {:<8} {:>22} {:>22}\n", "p50", cell(m, m.p50), cell(s, s.p50));
  out += fmt::format("  {:<8} {:>22} {:>22}\n", "min", cell(m, m.min), cell(s, s.min));
  out += fmt::format("  {:<8} {:>22} {:>22}\n", "max", cell(m, m.max), cell(s, s.max));
  out += fmt::format("  within the model's bound: {}/{} ({:.1f}%)\n", r.fresh_within_bound,
                     r.fresh_count, 100.0 * r.fresh_within_bound_fraction());
  return out;
}

nlohmann::ordered_json study_doc(const ClocksSettings& s, const DeviceInfo& info,
                                 const ClockStudyResult& r) {
  nlohmann::ordered_json settings = {{"backend", s.backend},
                                     {"device", s.device},
                                     {"seconds", s.seconds},
                                     {"interval_ms", s.interval_ms},
                                     {"samples_per_refresh", s.samples},
                                     {"fresh_pairs", s.fresh},
                                     {"window", s.window}};
  if (s.sim_drift_ppm) settings["sim_drift_ppm"] = *s.sim_drift_ppm;
  nlohmann::ordered_json device = device_identity_to_json(info);
  device["tick_period_ns"] = r.ticks.period_ns();
  device["tick_period_num"] = r.ticks.period_num;
  device["tick_period_den"] = r.ticks.period_den;
  device["valid_bits"] = r.ticks.valid_bits;
  device["calibration_estimated"] = info.calibration_estimated;
  return {
      {"command", "clocks"},
      {"settings", settings},
      {"device", device},
      {"host_domain", r.host_domain},
      {"sampled_seconds", r.sampled_seconds},
      {"refreshes", r.refreshes},
      {"failed_refreshes", r.failed_refreshes},
      {"rejected_pairs", r.rejected_pairs},
      {"source_calls", r.source_calls},
      {"source_errors", r.source_errors},
      {"deviation_us", distribution_to_json(r.deviation_us)},
      {"drift_ppm", r.drift_ppm},
      {"drift_uncertainty_ppm", r.drift_uncertainty_ppm},
      {"pairs_used", r.pairs_used},
      {"residual_us", distribution_to_json(r.residual_us)},
      {"bound_now_ns", r.bound_now_ns},
      {"fresh",
       {{"count", r.fresh_count},
        {"within_bound", r.fresh_within_bound},
        {"within_bound_fraction", r.fresh_within_bound_fraction()},
        {"model_error_us", distribution_to_json(r.model_error_us)},
        {"single_pair_error_us", distribution_to_json(r.single_pair_error_us)}}},
  };
}

nlohmann::ordered_json cross_check_doc(const ClocksCrossCheck& cc,
                                       std::span<const ClocksDeviceSection> sections) {
  if (cc.result == nullptr) return {{"skipped", cc.skipped}};
  const Result<ClockCrossCheckResult>& r = *cc.result;
  nlohmann::ordered_json j = {{"device_a", sections[0].head.selector},
                              {"device_b", sections[1].head.selector}};
  if (!r) {
    j["error"] = r.error().message;
    return j;
  }
  j["error"] = nullptr;
  j["trials"] = r->trials;
  j["trials_mapped"] = r->trials_mapped;
  j["start_skew_us"] = distribution_to_json(r->start_skew_us);
  j["submit_skew_us"] = distribution_to_json(r->submit_skew_us);
  j["launch_a_us"] = distribution_to_json(r->launch_a_us);
  j["launch_b_us"] = distribution_to_json(r->launch_b_us);
  j["bound_a_ns"] = r->bound_a_ns;
  j["bound_b_ns"] = r->bound_b_ns;
  j["agree"] = r->agree;
  j["verdict"] = r->verdict;
  return j;
}

}  // namespace

std::string clock_study_text(const DeviceInfo& info, const ClockStudyResult& r) {
  std::string out = fmt::format("device: {} [{}, {}], tick {:.6g} ns, {} valid bits{}\n", info.name,
                                info.backend, info.driver, r.ticks.period_ns(), r.ticks.valid_bits,
                                info.calibration_estimated ? ", estimated pairs" : "");
  out += fmt::format("host domain: {}\n", r.host_domain);
  out += fmt::format(
      "sampled {:.1f} s: {} refreshes, {} failed, {} pairs rejected, {} source calls ({} errors)\n",
      r.sampled_seconds, r.refreshes, r.failed_refreshes, r.rejected_pairs, r.source_calls,
      r.source_errors);
  out += fmt::format("deviation (us):   {}\n", dist_line(r.deviation_us));
  out += fmt::format("fitted drift:     {:+.4f} ppm (bound +-{:.4f} ppm), {} pairs in the fit\n",
                     r.drift_ppm, r.drift_uncertainty_ppm, r.pairs_used);
  out += fmt::format("residuals (us):   {}\n", dist_line(r.residual_us));
  out += fmt::format("error bound now:  {:.3f} us\n", static_cast<double>(r.bound_now_ns) / 1e3);
  return out + fresh_pairs_text(r);
}

std::string clock_study_json(const ClocksSettings& s, const DeviceInfo& info,
                             const ClockStudyResult& r) {
  return study_doc(s, info, r).dump(2);
}

std::optional<std::string> clocks_devices_json(const ClocksSettings& s,
                                               std::span<const ClocksDeviceSection> sections,
                                               const ClocksCrossCheck* cross_check) {
  nlohmann::ordered_json per_device = nlohmann::ordered_json::array();
  nlohmann::ordered_json top;
  for (const ClocksDeviceSection& d : sections) {
    nlohmann::ordered_json result;
    if (d.study != nullptr) result = study_doc(s, *d.info, *d.study);
    if (top.is_null() && d.study != nullptr) top = result;
    per_device.push_back(device_section_to_json(d.head, d.study != nullptr ? "ok" : "failed",
                                                d.failure, std::move(result)));
  }
  if (top.is_null()) return std::nullopt;
  top["per_device"] = std::move(per_device);
  if (cross_check != nullptr) top["cross_check"] = cross_check_doc(*cross_check, sections);
  return top.dump(2);
}

std::string clocks_devices_text(std::span<const ClocksDeviceSection> sections,
                                const ClocksCrossCheck* cross_check) {
  std::string out;
  for (const ClocksDeviceSection& d : sections) {
    out += fmt::format("\n== device section {}: {} {} ({}){}\n", d.head.section, d.head.backend,
                       d.head.selector, d.head.name,
                       d.head.physical_device
                           ? fmt::format(", physical device #{}", *d.head.physical_device)
                           : "");
    out += d.study != nullptr ? clock_study_text(*d.info, *d.study)
                              : fmt::format("failed: {}\n", d.failure);
  }
  if (cross_check == nullptr) return out;
  if (cross_check->result == nullptr) {
    out += fmt::format("\ncross-check skipped: {}\n", cross_check->skipped);
  } else if (!*cross_check->result) {
    out += fmt::format("\ncross-check failed: {}\n", cross_check->result->error().message);
  } else {
    out += fmt::format("\ncross-check of devices {} and {}: {}\n", sections[0].head.selector,
                       sections[1].head.selector, (*cross_check->result)->verdict);
  }
  return out;
}

}  // namespace latlab
