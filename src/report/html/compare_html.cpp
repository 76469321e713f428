// The comparison page: verdict, method, notes and the settings that differ,
// then per mode the shift chart, the table of every row and both sides'
// samples, then the runs.
#include "report/html/compare_html.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/html/compare_page_parts.hpp"
#include "report/html/html_page.hpp"
#include "report/html/report_parts.hpp"
#include "report/html/score_html.hpp"

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
