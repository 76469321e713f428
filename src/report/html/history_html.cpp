// The history page: the figures each run has, the machines' legend, one
// chart per figure (history_charts.cpp) and the table of every figure.
#include "report/html/history_html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "report/compare_parts.hpp"
#include "report/html/history_parts.hpp"
#include "report/html/html_page.hpp"
#include "report/html/page_runs.hpp"
#include "report/html/report_parts.hpp"
#include "report/html/score_html.hpp"
#include "report/score_report.hpp"

namespace latlab {
namespace html {

std::optional<double> figure_value(const RunResult& r, const Figure& f) {
  const Distribution* d = compare::total_of(r.top_level(), f.mode, f.observer);
  if (d == nullptr || d->empty()) return std::nullopt;
  return f.statistic == "p50" ? d->p50 : d->p99;
}

std::string why_missing(const RunResult& result, const Figure& f) {
  const RunResult& r = result.top_level();
  if (r.kind() != "latency_run") return "a " + std::string(r.kind()) + ": no latency mode";
  const std::vector<RunMode> modes = run_modes(r);
  const auto m =
      std::find_if(modes.begin(), modes.end(), [&](const RunMode& x) { return x.name == f.mode; });
  if (m == modes.end()) return "this run has no " + f.mode + " mode (--mode " + r.meta.mode + ")";
  if (!m->available) return f.mode + " was not available: " + m->reason;
  return "no frame has " + f.observer + " (e.g. the poll observer was off)";
}

std::string settings_summary(const RunResult& result) {
  const RunResult& r = result.top_level();
  const nlohmann::json s = run_settings(r);
  auto item = [&](const char* key) {
    return s.is_object() && s.contains(key) ? s.at(key).dump() : std::string("?");
  };
  const LatencyRunDesc* desc = r.latency ? &r.latency->desc : nullptr;
  std::string out = fmt::format("mode {}, backend {}, frames {}, blocks {}, seed {}", r.meta.mode,
                                r.meta.backend, desc ? std::to_string(desc->frames) : "?",
                                desc ? std::to_string(desc->blocks) : "?",
                                desc ? std::to_string(desc->schedule.seed) : "?");
  if (s.is_object() && s.contains("interval_ms") && s.at("interval_ms").is_object())
    out += fmt::format(", interval {}-{} ms",
                       s.at("interval_ms").value("min", nlohmann::json()).dump(),
                       s.at("interval_ms").value("max", nlohmann::json()).dump());
  out += ", cpu iterations " + item("cpu_step_iterations") + ", poll " + item("poll_completion");
  for (const RunMode& m : run_modes(r)) {
    if (!m.available) continue;
    out += fmt::format("; {} {} pass(es) {}x{} complexity {}", m.name, m.workload->passes,
                       m.workload->width, m.workload->height, m.workload->complexity);
  }
  return out;
}

std::string run_hover(const HistoryRun& h) {
  const RunResult& r = h.result.top_level();
  const RunDevice d = run_device(r);
  return fmt::format("run {} | created {} | {} / {} ({}, {}) | latlab {}{} | {}", h.id,
                     r.meta.created_utc, r.meta.machine.hostname, d.name, d.backend, d.driver,
                     r.meta.tool_version, r.partial() ? " | partial" : "", settings_summary(r));
}

}  // namespace html

namespace {

using html::escape;
using html::Figure;

// Every figure some run has, in page order: per mode, per observer, p50, p99.
std::vector<Figure> figures_of(const std::vector<const HistoryRun*>& runs) {
  std::vector<Figure> out;
  for (const char* mode : {"baseline", "loaded"})
    for (const char* observer : {"core_latency", "fence_latency", "poll_latency"})
      for (const char* stat : {"p50", "p99"}) {
        const Figure f{mode, observer, stat};
        if (std::any_of(runs.begin(), runs.end(), [&](const HistoryRun* h) {
              return html::figure_value(h->result, f).has_value();
            }))
          out.push_back(f);
      }
  return out;
}

// Machines by fingerprint, in order of first appearance: their colour index.
std::map<std::string, size_t> machines_of(const std::vector<const HistoryRun*>& runs,
                                          std::string& legend) {
  std::map<std::string, size_t> out;
  for (const HistoryRun* h : runs) {
    if (out.count(h->fingerprint)) continue;
    const size_t k = out.size();
    out[h->fingerprint] = k;
    const RunResult& r = h->result.top_level();
    const html::RunDevice d = html::run_device(r);
    legend += fmt::format(
        "<li><span style=\"color:{}\">&#9679;</span> {} / {} ({}, {}), fingerprint {}</li>\n",
        html::machine_colour(k), escape(r.meta.machine.hostname), escape(d.name), escape(d.backend),
        escape(d.driver), escape(h->fingerprint));
  }
  return out;
}

std::string figures_table(const std::vector<const HistoryRun*>& runs,
                          const std::vector<Figure>& figures) {
  std::string t = "<table class=\"history\"><tr><th>run</th><th class=\"text\">created (UTC)</th>";
  for (const Figure& f : figures)
    t += fmt::format("<th>{} {} {}</th>", escape(f.mode), escape(f.observer), f.statistic);
  t += "</tr>\n";
  for (const HistoryRun* h : runs) {
    t += fmt::format("<tr data-run=\"{0}\"><td>{0}</td><td class=\"text\">{1}</td>", h->id,
                     escape(h->result.top_level().meta.created_utc));
    for (const Figure& f : figures) {
      const std::optional<double> v = html::figure_value(h->result, f);
      t += v ? fmt::format("<td>{:.2f}</td>", *v)
             : "<td><span class=\"na\" title=\"" + escape(html::why_missing(h->result, f)) +
                   "\">n/a</span></td>";
    }
    t += "</tr>\n";
  }
  return t + "</table>\n";
}

// Each run's machine, version and settings: what the charts show on hover.
std::string runs_table(const std::vector<const HistoryRun*>& runs) {
  std::string t =
      "<table class=\"runs\"><tr><th>run</th><th class=\"text\">host / device (backend, "
      "driver)</th><th class=\"text\">latlab</th><th class=\"text\">settings</th><th "
      "class=\"text\">latency score [95% interval], components</th></tr>\n";
  for (const HistoryRun* h : runs) {
    const RunResult& r = h->result.top_level();
    const html::RunDevice d = html::run_device(r);
    t += fmt::format(
        "<tr><td>{}</td><td class=\"text\">{} / {} ({}, {})</td><td class=\"text\">{}{}</td><td "
        "class=\"text\">{}</td>{}</tr>\n",
        h->id, escape(r.meta.machine.hostname), escape(d.name), escape(d.backend), escape(d.driver),
        escape(r.meta.tool_version), r.partial() ? ", partial" : "",
        escape(html::settings_summary(r)), html::score_td(score_for_display(r)));
  }
  return t + "</table>\n";
}

}  // namespace

std::string render_history_html(std::span<const HistoryRun> all, std::string_view store) {
  std::vector<const HistoryRun*> runs;
  for (const HistoryRun& h : all) runs.push_back(&h);
  std::sort(runs.begin(), runs.end(), [](const HistoryRun* a, const HistoryRun* b) {
    return std::tie(a->result.top_level().meta.created_utc, a->id) <
           std::tie(b->result.top_level().meta.created_utc, b->id);
  });
  const std::vector<Figure> figures = figures_of(runs);
  std::string legend;
  const std::map<std::string, size_t> machines = machines_of(runs, legend);
  std::string body = fmt::format(
      "<p>{} run(s) of <code>{}</code>, oldest first (by the time each was measured). Per mode "
      "and observer, the p50 and p99 of each run's total over its measured frames, us. A run "
      "without the figure leaves a gap (a dashed line; hover it for why), never a 0. Hover a "
      "point for its run, time, machine, version and settings.</p>\n",
      runs.size(), escape(store));
  body +=
      "<h2>Machines</h2>\n<p>Points are coloured by machine, driver and device "
      "(fingerprint):</p>\n<ul id=\"machines\">\n" +
      legend + "</ul>\n";
  body += "<h2>Key figures</h2>\n";
  if (figures.empty()) body += "<p class=\"na\">No run has a measured latency figure.</p>\n";
  html::json charts = html::json::array();
  body += "<div class=\"pair\">\n";
  for (const Figure& f : figures) body += html::figure_chart(runs, f, machines, charts);
  body += "</div>\n<h2>Every figure</h2>\n" + figures_table(runs, figures);
  body += "<h2>Runs</h2>\n" + runs_table(runs);
  return html::chart_page("latlab history", body, charts);
}

}  // namespace latlab
