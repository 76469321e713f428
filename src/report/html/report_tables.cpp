// The HTML report's tables of a result's modes: every figure the charts
// show, readable without JavaScript. Absent values are shown as "n/a", never 0.
#include <fmt/format.h>

#include <string>

#include "report/html/report_parts.hpp"
#include "report/json_parts.hpp"
#include "report/result_json.hpp"

namespace latlab::html {

std::string unavailable_list(const RunResult& r) {
  std::string out;
  if (r.partial()) out += "<p class=\"warn\">Partial run: " + text(r.partial_reason()) + "</p>\n";
  if (r.latency) {
    for (const LatencyModeResult& m : r.latency->modes) {
      if (!m.gpu_target || !m.gpu_target->off_target.value_or(false)) continue;
      out += "<p class=\"warn\">" + escape(m.name) +
             " is OFF TARGET: " + escape(gpu_target_text(m)) +
             ". It ran, but not at the load it was calibrated to.</p>\n";
    }
  }
  const std::vector<MissingCapability> u = result_unavailable(r);
  if (u.empty())
    return out + "<p>Unavailable: nothing (every capability the run needed was present).</p>\n";
  out += "<ul class=\"warn\">\n";
  for (const MissingCapability& c : u)
    out += "<li><b>" + text(c.name) + "</b>: " + text(c.reason) + "</li>\n";
  return out + "</ul>\n";
}

namespace {

// One row of the modes table: a mode that ran (workload and frames), or not.
struct ModeRow {
  std::string name;
  const FrameWorkload* workload = nullptr;
  bool ok = true, off = false;
  std::string frames = na(), target, reason;
};

std::string mode_row(const ModeRow& m) {
  const FrameWorkload* w = m.workload;
  const std::string size = w ? count(w->width) + "x" + count(w->height) : "n/a";
  return fmt::format(
      "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
      "<td>{}</td><td>{}</td><td>{}</td></tr>\n",
      m.ok && !m.off ? "" : "warn", escape(m.name),
      !m.ok   ? "no"
      : m.off ? "yes, OFF TARGET"
              : "yes",
      w ? count(w->passes) : "", w ? count(w->complexity) : "", size,
      w ? text(form_name(w->form)) : "", m.frames, escape(m.target), m.ok ? "" : m.reason);
}

}  // namespace

std::string modes_table(const RunResult& r) {
  std::string t =
      "<table><tr><th>mode</th><th>available</th><th>passes</th><th>complexity</th>"
      "<th>size</th><th>form</th><th>measured frames</th><th>GPU time target</th>"
      "<th>why not</th></tr>\n";
  if (r.latency) {
    for (const LatencyModeResult& m : r.latency->modes) {
      t += mode_row({m.name, &m.workload, true,
                     m.gpu_target && m.gpu_target->off_target.value_or(false),
                     count(m.measured_frames), gpu_target_text(m), ""});
    }
  }
  if (r.loaded.asked && !r.loaded.runs)
    t += mode_row({"loaded", nullptr, false, false, na(), "", text(r.loaded.unavailable)});
  const PerformanceOutcome& p = r.performance;
  if (p.asked && p.report)
    t += mode_row({"performance", &p.report->work, true, false, na(), "", ""});
  if (p.asked && !p.report)
    t += mode_row({"performance", nullptr, false, false, na(), "", text(p.unavailable)});
  return t + "</table>\n";
}

namespace {

const char* group_title(const std::string& group) {
  return group == "stage"      ? "stages (per frame, in path order)"
         : group == "observer" ? "observers of completion (each separately)"
                               : "diagnostics (outside every stage)";
}

}  // namespace

std::string percentile_table(const LatencyRun& run) {
  std::string t = "<table class=\"pct\">\n<tr><th rowspan=\"2\">us</th>";
  for (const LatencyModeResult& m : run.modes)
    t += fmt::format("<th colspan=\"{}\" class=\"mode\">{}</th>", kDistributionCells,
                     escape(m.name));
  t += "</tr>\n<tr>";
  for (size_t i = 0; i < run.modes.size(); ++i) t += kDistributionThs;
  t += "</tr>\n";
  std::string group;
  for (const SeriesName& s : series_names()) {
    if (s.group != group) {
      group = s.group;
      t += fmt::format("<tr class=\"group\"><td colspan=\"{}\">{}</td></tr>\n",
                       1 + run.modes.size() * kDistributionCells, group_title(group));
    }
    t += "<tr><th>" + escape(s.key) + "</th>";
    for (const LatencyModeResult& m : run.modes)
      t += distribution_tds(m.total[static_cast<size_t>(s.series)]);
    t += "</tr>\n";
  }
  return t + "</table>\n";
}

std::string missing_markers_table(const LatencyRun& run) {
  std::string t = "<table><tr><th>missing markers</th>";
  for (const LatencyModeResult& m : run.modes) t += "<th>" + escape(m.name) + "</th>";
  t += "</tr>\n";
  const std::pair<const char*, uint64_t MissingBreakdown::*> rows[] = {
      {"gpu_timestamps_not_ok", &MissingBreakdown::gpu_not_ok},
      {"gpu_timestamps_unmapped", &MissingBreakdown::gpu_unmapped},
      {"fence_not_ok", &MissingBreakdown::fence_not_ok},
      {"device_error", &MissingBreakdown::device_error}};
  for (const auto& [key, field] : rows) {
    t += fmt::format("<tr><th>{}</th>", key);
    for (const LatencyModeResult& m : run.modes) {
      const uint64_t v = m.total_missing.*field;
      t += fmt::format("<td{}>{}</td>", v > 0 ? " class=\"missing\"" : "", count(v));
    }
    t += "</tr>\n";
  }
  t += "<tr><th>consumer_behind_frames</th>";
  for (const LatencyModeResult& m : run.modes) t += "<td>" + count(m.consumer_behind) + "</td>";
  return t + "</tr>\n</table>\n";
}

std::string performance_table(const PerformanceOutcome& p) {
  if (!p.asked) return "";
  if (!p.report)
    return "<p class=\"warn\">Performance unavailable: " + text(p.unavailable) + "</p>\n";
  std::string t =
      "<table><tr><th>performance</th><th>count</th><th>missing</th><th>p50</th>"
      "<th>p90</th><th>p99</th><th>max</th></tr>\n";
  for (const auto& [key, d] :
       {std::pair{"gpu_ms", &p.report->gpu_ms}, std::pair{"fps", &p.report->fps}}) {
    t += fmt::format("<tr><th>{}</th>", key);
    t += "<td>" + count(d->count) + "</td><td>" + count(d->missing) + "</td>";
    t += stat_tds(
        *d, {&Distribution::p50, &Distribution::p90, &Distribution::p99, &Distribution::max}, 3);
    t += "</tr>\n";
  }
  const double fps = p.report->gpu_timeline_fps;
  t += "<tr><th>gpu_timeline_fps</th><td colspan=\"6\">" + (fps > 0 ? number(fps, 2) : na()) +
       "</td></tr>\n";
  return t + "</table>\n";
}

}  // namespace latlab::html
