#include "report/html/score_html.hpp"

#include <fmt/format.h>

#include <tuple>

#include "report/html/report_parts.hpp"
#include "report/score_compare.hpp"
#include "report/score_report.hpp"

namespace latlab::html {
namespace {

// "412.7 [398.2, 425.1]"
std::string value_and_interval(const LatencyScore& s) {
  return fmt::format("<b class=\"score-value\">{}</b> [{}, {}]", score_number(*s.value),
                     score_number(s.ci_low.value_or(0)), score_number(s.ci_high.value_or(0)));
}

}  // namespace

std::string score_paragraph(const LatencyScore& s, const std::string& id) {
  if (!s.value) {
    return fmt::format("<p class=\"score none\" id=\"{}\"><b>Latency score</b>: no score: {}</p>\n",
                       id, escape(s.unavailable_reason));
  }
  return fmt::format(
      "<p class=\"score\" id=\"{}\"><b>Latency score</b> {} (95% interval; {}, higher is "
      "better, docs/score.md) = 1000 / geometric mean of the components in ms; <span "
      "class=\"score-components\">{}</span>. The interval: {} bootstrap resamples of {} + {} "
      "measured blocks (seed {}), block-to-block noise within this run, not run-to-run "
      "noise.</p>\n",
      id, value_and_interval(s), escape(s.formula), escape(score_components_text(s)), s.resamples,
      s.baseline_blocks, s.loaded_blocks, s.seed);
}

std::string score_td(const LatencyScore& s) {
  if (!s.value)
    return "<td class=\"text score none\">no score: " + escape(s.unavailable_reason) + "</td>";
  return fmt::format("<td class=\"text score\">{} <span class=\"score-components\">{}</span></td>",
                     value_and_interval(s), escape(score_components_text(s)));
}

std::string compare_scores_section(const Comparison& c) {
  if (c.a_scores.empty() && c.b_scores.empty()) return "";
  std::string s =
      "<h2>Latency score</h2>\n<p>Each run's latency score (docs/score.md; higher is better) "
      "with its 95% interval and components. Shown beside the rows, never tested or called: "
      "the rows are the test.</p>\n<table class=\"scores\" id=\"scores\"><tr><th "
      "class=\"text\">run</th><th class=\"text\">as named</th><th class=\"text\">score "
      "[95% interval], components</th></tr>\n";
  for (const auto& [side, names, scores] :
       {std::tuple{'A', &c.a_names, &c.a_scores}, std::tuple{'B', &c.b_names, &c.b_scores}}) {
    for (size_t i = 0; i < scores->size(); ++i) {
      LatencyScore none;
      none.unavailable_reason = "the result holds no score";
      s += fmt::format(
          "<tr data-side=\"{}\"><td class=\"text\">{}</td><td class=\"text\">{}</td>{}</tr>\n",
          side, run_label(side, i, scores->size()), escape(i < names->size() ? (*names)[i] : ""),
          score_td((*scores)[i] ? *(*scores)[i] : none));
    }
  }
  s += "</table>\n<ul class=\"score-notes\">\n";
  for (const std::string& n : compare_score_notes(c)) s += "<li>" + escape(n) + "</li>\n";
  return s + "</ul>\n";
}

}  // namespace latlab::html
