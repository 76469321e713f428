// The history page: the figures each run has, the machines' legend, one
// chart per figure and the table of every figure. A chart (drawn by the
// pages' script, report.js) shows one figure across the runs in time order:
// a point per run with the figure (a series per machine, in its colour),
// consecutive points joined; a run without the figure is a dashed line and
// breaks the line; under the chart at the cursor, the run's value, time,
// machine, version and settings, or why it has no value.
#include "report/html/history_html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "report/compare_parts.hpp"
#include "report/html/chart_axes.hpp"
#include "report/html/html_page.hpp"
#include "report/html/page_runs.hpp"
#include "report/html/report_charts.hpp"
#include "report/html/report_parts.hpp"
#include "report/html/score_html.hpp"
#include "report/score_report.hpp"

namespace latlab {
namespace html {
namespace {

// One key figure: a mode's observer's statistic of the run's total.
struct Figure {
  std::string mode;       // baseline, loaded
  std::string observer;   // core_latency, fence_latency, poll_latency
  std::string statistic;  // p50, p99
};

// The figure of run `r`, us; nullopt when the run does not have it.
std::optional<double> figure_value(const RunResult& r, const Figure& f) {
  const Distribution* d = compare::total_of(r.top_level(), f.mode, f.observer);
  if (d == nullptr || d->empty()) return std::nullopt;
  return f.statistic == "p50" ? d->p50 : d->p99;
}

// Why `r` has no value of `f` (for a gap's hover text).
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

// The settings that shape a run's frames, on one line.
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

// "host / device (backend, driver)" of a run.
std::string machine_device(const RunResult& r) {
  const RunDevice d = run_device(r);
  return fmt::format("{} / {} ({}, {})", r.meta.machine.hostname, d.name, d.backend, d.driver);
}

// A run's hover text: id, time, machine, device, version, settings.
std::string run_hover(const HistoryRun& h) {
  const RunResult& r = h.result.top_level();
  return fmt::format("run {} | created {} | {} | latlab {}{} | {}", h.id, r.meta.created_utc,
                     machine_device(r), r.meta.tool_version, r.partial() ? " | partial" : "",
                     settings_summary(r));
}

// The colour of machine number `k` (k-th fingerprint seen).
const char* machine_colour(size_t k) { return palette()[k % palette().size()]; }

// The chart of one figure ("hist-<mode>-<observer>-<statistic>" into
// `charts`; its figure returned): `runs` in time order on the x axis;
// `machines` maps each fingerprint to its colour number.
std::string figure_chart(const std::vector<const HistoryRun*>& runs, const Figure& f,
                         const std::map<std::string, size_t>& machines, json& charts) {
  const std::string name = f.mode + " " + f.observer + " " + f.statistic;
  json fc = chart("hist-" + f.mode + "-" + f.observer + "-" + f.statistic, "line",
                  name + " across runs, us", "run id, oldest first", "us");
  const json none(std::vector<json>(runs.size(), nullptr));
  json line = none, hover = json::array(), gaps = json::array();
  std::vector<json> points(machines.size(), none);
  std::vector<std::string> labels(machines.size()), ids;
  std::vector<double> values;
  for (size_t i = 0; i < runs.size(); ++i) {
    const HistoryRun& h = *runs[i];
    fc["x"].push_back(i);
    ids.push_back(std::to_string(h.id));
    const std::optional<double> v = figure_value(h.result, f);
    if (!v) {
      gaps.push_back(i);
      hover.push_back(fmt::format("run {}: no value ({})", h.id, why_missing(h.result, f)));
      continue;
    }
    const size_t k = machines.at(h.fingerprint);
    if (labels[k].empty()) {
      const RunResult& r = h.result.top_level();
      labels[k] = r.meta.machine.hostname + " / " + run_device(r).name;
    }
    line[i] = points[k][i] = *v;
    values.push_back(*v);
    hover.push_back(fmt::format("{}: {} us | {}", name, fixed(*v, 2), run_hover(h)));
  }
  fc["series"].push_back({{"label", name}, {"colour", "#888888"}, {"values", line}});
  for (size_t k = 0; k < machines.size(); ++k)
    if (!labels[k].empty())
      fc["series"].push_back({{"label", labels[k]},
                              {"colour", machine_colour(k)},
                              {"type", "points"},
                              {"values", points[k]}});
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  fc["axis"] = "linear";
  fc["axes"]["x"] = axis_json(category_axis(ids, 8));
  fc["axes"]["y"] =
      axis_json(values.empty() ? linear_axis(0, 0, 4) : linear_axis(*lo, *hi, 4, 0.08));
  fc["height"] = 220;
  fc["hover"] = std::move(hover);
  fc["gaps"] = std::move(gaps);
  return add_chart(std::move(fc), charts);
}

// Every figure some run has, in page order: per mode, per observer, p50, p99.
std::vector<Figure> figures_of(const std::vector<const HistoryRun*>& runs) {
  std::vector<Figure> out;
  for (const char* mode : {"baseline", "loaded"})
    for (const char* observer : {"core_latency", "fence_latency", "poll_latency"})
      for (const char* stat : {"p50", "p99"}) {
        const Figure f{mode, observer, stat};
        if (std::any_of(runs.begin(), runs.end(), [&](const HistoryRun* h) {
              return figure_value(h->result, f).has_value();
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
    legend += fmt::format("<li><span style=\"color:{}\">&#9679;</span> {}, fingerprint {}</li>\n",
                          machine_colour(k), escape(machine_device(h->result.top_level())),
                          escape(h->fingerprint));
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
      const std::optional<double> v = figure_value(h->result, f);
      t += v ? fmt::format("<td>{:.2f}</td>", *v)
             : "<td><span class=\"na\" title=\"" + escape(why_missing(h->result, f)) +
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
    t += fmt::format(
        "<tr><td>{}</td><td class=\"text\">{}</td><td class=\"text\">{}{}</td><td "
        "class=\"text\">{}</td>{}</tr>\n",
        h->id, escape(machine_device(r)), escape(r.meta.tool_version),
        r.partial() ? ", partial" : "", escape(settings_summary(r)),
        score_td(score_for_display(r)));
  }
  return t + "</table>\n";
}

}  // namespace
}  // namespace html

std::string render_history_html(std::span<const HistoryRun> all, std::string_view store) {
  std::vector<const HistoryRun*> runs;
  for (const HistoryRun& h : all) runs.push_back(&h);
  std::sort(runs.begin(), runs.end(), [](const HistoryRun* a, const HistoryRun* b) {
    return std::tie(a->result.top_level().meta.created_utc, a->id) <
           std::tie(b->result.top_level().meta.created_utc, b->id);
  });
  const std::vector<html::Figure> figures = html::figures_of(runs);
  std::string legend;
  const std::map<std::string, size_t> machines = html::machines_of(runs, legend);
  std::string body = fmt::format(
      "<p>{} run(s) of <code>{}</code>, oldest first (by the time each was measured). Per mode "
      "and observer, the p50 and p99 of each run's total over its measured frames, us. A run "
      "without the figure leaves a gap (a dashed line; hover it for why), never a 0. Hover a "
      "point for its run, time, machine, version and settings.</p>\n",
      runs.size(), html::escape(store));
  body +=
      "<h2>Machines</h2>\n<p>Points are coloured by machine, driver and device "
      "(fingerprint):</p>\n<ul id=\"machines\">\n" +
      legend + "</ul>\n";
  body += "<h2>Key figures</h2>\n";
  if (figures.empty()) body += "<p class=\"na\">No run has a measured latency figure.</p>\n";
  html::json charts = html::json::array();
  body += "<div class=\"pair\">\n";
  for (const html::Figure& f : figures) body += html::figure_chart(runs, f, machines, charts);
  body += "</div>\n<h2>Every figure</h2>\n" + html::figures_table(runs, figures);
  body += "<h2>Runs</h2>\n" + html::runs_table(runs);
  return html::chart_page("latlab history", body, charts);
}

}  // namespace latlab
