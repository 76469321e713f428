// The HTML report's page: a section per result (its tables, and the charts
// whose data is computed here) in the pages' shell (html_page.hpp); and the
// reading of its inputs (report_input.hpp).
#include "report/html/report_html.hpp"

#include <fmt/format.h>

#include "report/html/html_page.hpp"
#include "report/html/report_charts.hpp"
#include "report/html/report_parts.hpp"
#include "report/result_reader.hpp"

namespace latlab {
namespace {

using html::escape;
using html::json;

// The distributions, timeline and clock model of a latency run.
std::string latency_parts(const RunResult& r, const std::string& prefix, json& charts) {
  const LatencyRun& run = *r.latency;
  std::string s =
      "<h3>Percentiles (us, over every measured frame; missing = frames without the "
      "value)</h3>\n" +
      html::percentile_table(run) + html::missing_markers_table(run);
  s += "<h3>Distributions</h3>\n";
  if (!r.per_frame) {
    s += "<p class=\"warn\">This result has no per-frame series (<code>per_frame</code>): "
         "histograms, percentile curves and the timeline need it. Run with "
         "<code>--per-frame</code> or <code>--report FILE</code>.</p>\n";
  } else {
    s += "<p>Histograms: " + std::to_string(html::kHistogramBins) +
         " equal bins from the lowest value to the highest p99, or to a mode's outlier fence "
         "(p75 + 3 IQR) when that is lower; frames outside are counted under the chart. When "
         "the modes differ by more than 10\u00d7, each mode has its own histogram and the "
         "curves their own axes. Percentile curves use every frame (type 7, as the "
         "table).</p>\n";
    s += html::distribution_charts(run, *r.per_frame, prefix, charts);
    s += "<h3>Timeline</h3>\n" + html::timeline_charts(run, *r.per_frame, prefix, charts);
  }
  return s;
}

// "name (backend)": the run's device, or a capture's first frame source.
std::string device_line(const RunResult& r) {
  if (r.capture) {
    if (r.capture->sources.empty()) return html::na();
    const CaptureSourceInfo& s = r.capture->sources[0];
    return html::text_or_na(s.device) + " (" + html::text(s.api) + ")";
  }
  const DeviceInfo& device = r.latency ? r.latency->device : r.device;
  return html::text(device.name) + " (" + html::text(device.backend) + ")";
}

std::string run_section(const ReportInput& in, size_t index, json& charts) {
  const RunResult& r = in.result->top_level();
  const std::string prefix = fmt::format("r{}-", index);
  std::string s = fmt::format("<section id=\"run{}\">\n<h2>{}</h2>\n", index, escape(in.label));
  s += "<p>kind " + html::text(r.kind()) + ", device " + device_line(r) + ", created " +
       html::text(r.meta.created_utc) + "</p>\n";
  if (r.capture) return s + html::capture_section(r, prefix, charts) + "</section>\n";
  s += "<h3>At a glance</h3>\n" + html::headline(r, device_line(r), prefix);
  if (r.latency) s += html::where_the_time_goes(*r.latency, prefix);
  s += "<h3>Modes</h3>\n" + html::modes_table(r);
  s += html::performance_table(r.performance);
  if (r.latency) s += latency_parts(r, prefix, charts);
  if (r.loaded.asked) s += "<h3>Load calibration</h3>\n" + html::load_calibration_section(r.loaded);
  if (r.latency) {
    s += "<h3>Clock model</h3>\n" + html::clock_model_table(r.latency->clock_model) +
         html::clock_charts(*r.latency, prefix, charts);
  }
  s += "<h3>Machine, device, settings</h3>\n" + html::settings_table(r);
  return s + "</section>\n";
}

// With several runs: one line each with the observers' p50/p99 per mode.
std::string runs_summary(std::span<const ReportInput> runs) {
  std::string t =
      "<table><tr><th>run</th><th>device</th><th>mode</th><th>core_latency p50</th>"
      "<th>core_latency p99</th><th>fence_latency p50</th><th>fence_latency p99</th>"
      "<th>poll_latency p50</th><th>poll_latency p99</th></tr>\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunResult& r = runs[i].result->top_level();
    if (!r.latency) continue;
    for (const LatencyModeResult& m : r.latency->modes) {
      t += fmt::format("<tr><td><a href=\"#run{}\">{}</a></td><td>{}</td><td>{}</td>", i,
                       escape(runs[i].label), html::text(r.latency->device.name), escape(m.name));
      for (const Series o : {Series::core_latency, Series::fence_latency, Series::poll_latency})
        t += html::stat_tds(m.total[static_cast<size_t>(o)],
                            {&Distribution::p50, &Distribution::p99});
      t += "</tr>\n";
    }
  }
  return t + "</table>\n";
}

}  // namespace

std::string render_html_report(std::span<const ReportInput> runs) {
  json charts = json::array();
  std::string body;
  if (runs.size() > 1) body += "<h2>Runs</h2>\n" + runs_summary(runs);
  for (size_t i = 0; i < runs.size(); ++i) body += run_section(runs[i], i, charts);
  return html::chart_page("latlab report", body, charts);
}

Result<ReportFile> read_report_input(const std::string& path) {
  Result<ResultDocument> read = read_result_file(path);
  if (!read) return read.error();
  const size_t slash = path.find_last_of('/');
  return ReportFile{slash == std::string::npos ? path : path.substr(slash + 1),
                    std::move(read->result)};
}

Result<void> write_html_report(const std::string& path, std::span<const ReportInput> runs) {
  return write_file_atomic(path, render_html_report(runs));
}

}  // namespace latlab
