// The HTML report's cells and shared pieces (report_parts.hpp).
#include <fmt/format.h>

#include "report/html/report_parts.hpp"

namespace latlab::html {

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string na() { return "<span class=\"na\" title=\"no value\">n/a</span>"; }
std::string text(std::string_view s) { return escape(s); }
std::string text_or_na(std::string_view s) { return s.empty() ? na() : escape(s); }
std::string integer(int64_t v) { return std::to_string(v); }
std::string count(uint64_t v) { return std::to_string(v); }
std::string number(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }
std::string number(std::optional<double> v, int decimals) {
  return v ? number(*v, decimals) : na();
}
std::string yes_no(bool v) { return v ? "yes" : "no"; }

std::string cell(const json& v, int decimals) {
  if (v.is_null()) return na();
  if (v.is_string()) return escape(v.get<std::string>());
  if (v.is_boolean()) return yes_no(v.get<bool>());
  if (v.is_number_integer()) return v.dump();
  if (v.is_number_float()) return number(v.get<double>(), decimals);
  return escape(v.dump());
}

std::string stat_tds(const Distribution& d, std::initializer_list<double Distribution::*> stats,
                     int decimals) {
  std::string out;
  for (double Distribution::*s : stats)
    out += "<td>" + (d.empty() ? na() : number(d.*s, decimals)) + "</td>";
  return out;
}

std::string distribution_tds(const Distribution& d) {
  return fmt::format("<td>{}</td><td{}>{}</td>", d.count, d.missing > 0 ? " class=\"missing\"" : "",
                     d.missing) +
         stat_tds(d, {&Distribution::p50, &Distribution::p90, &Distribution::p99,
                      &Distribution::p999, &Distribution::max});
}

const std::vector<SeriesName>& series_names() {
  static const std::vector<SeriesName> names = [] {
    std::vector<SeriesName> out;
    const std::pair<Series, const char*> order[] = {
        {Series::signal_to_consumer_wake, "stage"},   {Series::cpu_processing, "stage"},
        {Series::cpu_end_to_submit_start, "stage"},   {Series::workload_submit_cpu_span, "stage"},
        {Series::submit_start_to_gpu_begin, "stage"}, {Series::gpu_execution, "stage"},
        {Series::gpu_end_to_fence_wake, "stage"},     {Series::core_latency, "observer"},
        {Series::fence_latency, "observer"},          {Series::poll_latency, "observer"},
        {Series::timer_lateness, "diagnostic"},       {Series::clock_map_error, "diagnostic"},
        {Series::gpu_end_to_poll_wake, "diagnostic"}, {Series::poll_cpu, "diagnostic"}};
    for (const auto& [s, group] : order) out.push_back({s, std::string(to_string(s)), group});
    return out;
  }();
  return names;
}

void row(std::string& out, std::string_view key, const std::string& value) {
  out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", escape(key), value);
}

std::string gpu_target_text(const LatencyModeResult& m) {
  if (!m.gpu_target) return "";
  const GpuTargetCheck& g = *m.gpu_target;
  if (!g.measured_ms || !g.error_fraction)
    return fmt::format("target {:.3f} ms: nothing measured to check", g.target.target_ms);
  return fmt::format(
      "gpu_execution p50 {:.3f} ms vs target {:.3f} ms: {:+.1f}% (tolerance {:.3g}%)",
      *g.measured_ms, g.target.target_ms, *g.error_fraction * 100.0, g.target.tolerance * 100.0);
}

}  // namespace latlab::html
