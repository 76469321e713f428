// The comparison page: verdict, method, notes and the settings that differ,
// then per mode the shift chart, the table of every row and both sides'
// samples (compare_charts.cpp), then the runs.
#include "report/html/compare_html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "report/html/compare_charts.hpp"
#include "report/html/html_page.hpp"
#include "report/html/page_runs.hpp"
#include "report/html/report_parts.hpp"
#include "report/html/score_html.hpp"
#include "report/json_parts.hpp"

namespace latlab::html {
namespace {

struct LabelledRun {
  std::string label, name;
  const RunResult* r;  // one device: a several-device run's top level
  char side;
};

std::vector<LabelledRun> all_runs(const CompareSide& a, const CompareSide& b) {
  std::vector<LabelledRun> out;
  for (const auto& [s, side] : {std::pair{&a, 'A'}, std::pair{&b, 'B'}}) {
    for (size_t i = 0; i < s->runs.size(); ++i) {
      std::string label = run_label(side, i, s->runs.size());
      std::string name = i < s->names.size() ? s->names[i] : label;
      out.push_back({std::move(label), std::move(name), &s->runs[i]->top_level(), side});
    }
  }
  return out;
}

using Items = std::vector<std::pair<std::string, std::string>>;

// Every leaf of `j` as "path" -> its JSON text; arrays are one leaf.
void flatten(const nlohmann::json& j, const std::string& path, Items& out) {
  if (j.is_object() && !j.empty()) {
    for (const auto& [k, v] : j.items()) flatten(v, path.empty() ? k : path + "." + k, out);
    return;
  }
  out.emplace_back(path, j.is_string() ? j.get<std::string>() : j.dump());
}

Items items_of(const RunResult& r) {
  const RunDevice d = run_device(r);
  Items out = {{"host", r.meta.machine.hostname},
               {"cpu", r.meta.machine.cpu_model},
               {"kernel", r.meta.machine.kernel},
               {"backend", d.backend},
               {"device", d.name},
               {"driver", d.driver},
               {"latlab version", r.meta.tool_version}};
  flatten(run_settings(r), "settings", out);
  for (const RunMode& m : run_modes(r)) {
    const FrameWorkload* w = m.workload;
    out.emplace_back(m.name + " workload",
                     m.available
                         ? fmt::format("{} pass(es), {}x{} {}, complexity {}", w->passes, w->width,
                                       w->height, form_name(w->form), w->complexity)
                         : "not available: " + m.reason);
  }
  return out;
}

// Each run of both sides: label, name, created, machine, device, version.
std::string runs_table(const CompareSide& a, const CompareSide& b) {
  std::string t =
      "<table class=\"runs\"><tr><th class=\"text\">run</th><th class=\"text\">as named</th><th "
      "class=\"text\">created (UTC)</th><th class=\"text\">host</th><th "
      "class=\"text\">device</th><th class=\"text\">driver</th><th class=\"text\">latlab</th><th "
      "class=\"text\">partial</th></tr>\n";
  for (const LabelledRun& r : all_runs(a, b)) {
    const RunDevice d = run_device(*r.r);
    t += fmt::format(
        "<tr><td class=\"text\">{}</td><td class=\"text\">{}</td><td class=\"text\">{}</td><td "
        "class=\"text\">{}</td><td class=\"text\">{} ({})</td><td class=\"text\">{}</td><td "
        "class=\"text\">{}</td><td class=\"text\">{}</td></tr>\n",
        r.label, escape(r.name), escape(r.r->meta.created_utc), escape(r.r->meta.machine.hostname),
        escape(d.name), escape(d.backend), escape(d.driver), escape(r.r->meta.tool_version),
        r.r->partial() ? "yes: " + escape(r.r->partial_reason()) : "no");
  }
  return t + "</table>\n";
}

// One setting's row, or "" when every run has the same value.
std::string diff_row(const std::string& key, const std::vector<LabelledRun>& runs,
                     const std::vector<std::map<std::string, std::string>>& values) {
  std::vector<std::string> all, va, vb;
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto it = values[i].find(key);
    all.push_back(it != values[i].end() ? it->second : "(absent)");
    (runs[i].side == 'A' ? va : vb).push_back(all.back());
  }
  if (std::all_of(all.begin(), all.end(), [&](const std::string& v) { return v == all[0]; }))
    return "";
  for (std::vector<std::string>* v : {&va, &vb}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  std::string row = fmt::format("<tr><td class=\"text\">{}</td><td class=\"text\">{}</td>",
                                escape(key), va != vb ? "between A and B" : "within a side");
  for (const std::string& v : all) row += "<td class=\"text\"><code>" + escape(v) + "</code></td>";
  return row + "</tr>\n";
}

// The settings (result `settings`, machine, device, driver, version, each
// mode's workload) whose value is not the same in every run; a sentence when
// all agree.
std::string settings_diff_table(const CompareSide& a, const CompareSide& b) {
  const std::vector<LabelledRun> runs = all_runs(a, b);
  std::vector<std::string> keys;  // first seen first
  std::vector<std::map<std::string, std::string>> values;
  for (const LabelledRun& r : runs) {
    values.emplace_back();
    for (auto& [k, v] : items_of(*r.r)) {
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
      values.back()[k] = std::move(v);
    }
  }
  std::string rows;
  for (const std::string& k : keys) rows += diff_row(k, runs, values);
  if (rows.empty()) return "<p id=\"settings-agree\">Every run has the same settings.</p>\n";
  std::string head = "<tr><th class=\"text\">setting</th><th class=\"text\">differs</th>";
  for (const LabelledRun& r : runs) head += "<th class=\"text\">" + r.label + "</th>";
  return "<p>Everything the runs record about how they ran: what compare checks (mode asked, "
         "interval range, CPU step cost, poll observer, workloads), and what only informs (a "
         "seed, a host, a version).</p>\n<table class=\"settings-diff\">" +
         head + "</tr>\n" + rows + "</table>\n";
}

}  // namespace
}  // namespace latlab::html

namespace latlab {
namespace {

using html::escape;

std::string side_list(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + escape(n);
  return s;
}

// What was found, first: the changes called and the gate.
std::string verdict(const Comparison& c) {
  std::string s = fmt::format("<p><b>A</b> (reference) = {}<br><b>B</b> (candidate) = {}</p>\n",
                              side_list(c.a_names), side_list(c.b_names));
  s += fmt::format("<p id=\"verdict\">{} significant change(s) of at least the minimum effect",
                   c.changes);
  std::string list;
  for (const CompareRow& r : c.rows) {
    if (r.call != ChangeCall::regression && r.call != ChangeCall::improvement) continue;
    list += fmt::format("<li class=\"{}\">{} {} {}: {} {}{}</li>", html::call_class(r.call),
                        escape(r.mode), escape(r.series), r.statistic, to_string(r.call),
                        r.relative ? fmt::format("{:+.1f}%", *r.relative * 100) : "",
                        r.fails ? " (fails the gate)" : "");
  }
  s += list.empty() ? ".</p>\n" : ":</p>\n<ul>" + list + "</ul>\n";
  if (c.options.fail_on_regression_pct) {
    s += fmt::format(
        "<p id=\"gate\" class=\"{}\">Regression gate {}%: {}</p>\n", c.fails ? "fail" : "pass",
        *c.options.fail_on_regression_pct,
        c.fails ? "FAILED (latlab compare exits 5; this page is written all the same)" : "passed");
  }
  return s;
}

std::string method(const Comparison& c) {
  const bool runs = c.unit == CompareUnit::runs;
  std::string s = "<h2>Method</h2>\n<p>";
  s += runs ? fmt::format(
                  "Unit: <b>runs</b> ({} A, {} B): each run's p50 or p99 over all its "
                  "measured frames; Welch's t test, two-sided; shift B - A: the "
                  "difference of the runs' means with its {:.0f}% interval.",
                  c.a_names.size(), c.b_names.size(), (1 - c.options.alpha) * 100)
            : fmt::format(
                  "Unit: <b>blocks</b> (each measured block's p50 or p99); Mann-Whitney "
                  "U, two-sided; shift B - A: Hodges-Lehmann with its {:.0f}% interval.",
                  (1 - c.options.alpha) * 100);
  s += fmt::format(
      " A change is called when p adjusted over the {} tested rows (Holm) is below alpha {} "
      "and the shift is at least {:.1f}% of A's reference and {} us (docs/compare.md).",
      c.tested_rows, c.options.alpha, c.options.min_effect * 100, c.options.min_effect_us);
  if (c.options.allow_different_settings)
    s += " Runs with different settings were compared on purpose (--allow-different-settings).";
  s += "</p>\n";
  if (!runs) {
    s += fmt::format(
        "<p class=\"warn\">Run-to-run noise is not in this test: with fewer than {} runs a side "
        "the unit is the block, and a difference between the processes is called a change "
        "however it came about.</p>\n",
        kMinRunsPerSide);
  }
  return s;
}

std::string notes(const Comparison& c) {
  if (c.notes.empty()) return "<h2>Notes</h2>\n<p>None.</p>\n";
  std::string s = "<h2>Notes</h2>\n<ul id=\"notes\">\n";
  for (const std::string& n : c.notes) s += "<li>" + escape(n) + "</li>\n";
  return s + "</ul>\n";
}

std::string p_cell(const CompareRow& r, double p) {
  return tested(r) ? fmt::format("{:.3g}", p) : html::na();
}

std::string row_line(const Comparison& c, const CompareRow& r) {
  const bool has_shift = r.call != ChangeCall::no_data;
  std::string s = fmt::format(
      "<tr data-mode=\"{}\" data-series=\"{}\" data-stat=\"{}\" data-shift=\"{}\" "
      "data-call=\"{}\"><td class=\"text\">{}</td><td class=\"text\">{}</td><td>{}</td>",
      escape(r.mode), escape(r.series), r.statistic, has_shift ? fmt::format("{}", r.shift) : "",
      to_string(r.call), escape(r.series), r.role, r.statistic);
  s += "<td class=\"a\">" + html::number(r.a_total, 2) + "</td><td class=\"b\">" +
       html::number(r.b_total, 2) + "</td>";
  s += "<td class=\"shift\">" + html::number(has_shift ? std::optional(r.shift) : std::nullopt, 2) +
       "</td>";
  s += "<td class=\"ci\">" +
       (r.ci_low ? fmt::format("[{}, {}]", html::number(r.ci_low, 2), html::number(r.ci_high, 2))
                 : html::na()) +
       "</td>";
  s += "<td class=\"change\">" +
       (r.relative ? fmt::format("{:+.1f}%", *r.relative * 100) : html::na()) + "</td>";
  s += "<td>" + p_cell(r, r.p_value) + "</td><td>" + p_cell(r, r.p_adjusted) + "</td>";
  s += fmt::format("<td>{}/{}</td>", html::samples_of(r, c.unit, 'A').size(),
                   html::samples_of(r, c.unit, 'B').size());
  s += fmt::format("<td class=\"call {}\">{}{}</td></tr>\n", html::call_class(r.call),
                   to_string(r.call), r.fails ? " FAIL" : "");
  return s;
}

std::string rows_table(const Comparison& c, const std::string& mode) {
  std::string t = fmt::format(
      "<table class=\"rows\" data-mode=\"{}\"><tr><th class=\"text\">series</th><th "
      "class=\"text\">role</th><th>stat</th><th>A (us)</th><th>B (us)</th><th>shift B - A "
      "(us)</th><th>{:.0f}% interval (us)</th><th>change</th><th>p</th><th>p adj</th><th>{} "
      "A/B</th><th>call</th></tr>\n",
      escape(mode), (1 - c.options.alpha) * 100, to_string(c.unit));
  for (const CompareRow& r : c.rows)
    if (r.mode == mode) t += row_line(c, r);
  return t + "</table>\n";
}

std::string mode_section(const Comparison& c, const std::string& mode, html::json& charts) {
  std::string s = fmt::format("<section id=\"mode-{0}\">\n<h2>{0}</h2>\n", escape(mode));
  s += html::shift_chart(c, mode, charts);
  s += rows_table(c, mode);
  s += fmt::format(
      "<h3>{}: both sides' samples</h3>\n<p>{}; a short line marks each side's figure of the "
      "table (A, B). Hover a point for its value.</p>\n",
      escape(mode),
      c.unit == CompareUnit::runs ? "Each point is one run's total (the unit of the test)"
                                  : "Each point is one measured block (the unit of the test)");
  std::vector<std::string> series;
  for (const CompareRow& r : c.rows)
    if (r.mode == mode && std::find(series.begin(), series.end(), r.series) == series.end())
      series.push_back(r.series);
  for (const std::string& name : series) s += html::samples_charts(c, mode, name, charts);
  return s + "</section>\n";
}

}  // namespace

std::string render_compare_html(const Comparison& c, const CompareSide& a, const CompareSide& b) {
  std::string body = verdict(c) + method(c) + notes(c);
  body += "<h2>Settings that differ</h2>\n" + html::settings_diff_table(a, b);
  std::vector<std::string> modes;
  for (const CompareRow& r : c.rows)
    if (std::find(modes.begin(), modes.end(), r.mode) == modes.end()) modes.push_back(r.mode);
  html::json charts = html::json::array();
  for (const std::string& m : modes) body += mode_section(c, m, charts);
  body += html::compare_scores_section(c);
  body += "<h2>Runs</h2>\n" + html::runs_table(a, b);
  return html::chart_page("latlab compare", body, charts);
}

}  // namespace latlab
