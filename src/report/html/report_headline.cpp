// The top of a latency run's section: its headline (the latency score with
// its interval and components, or why none; the observers' p50/p99 per mode,
// the device, what is unavailable) and "where the time goes" (each
// mode's stage medians as one bar, inline SVG drawn here, and a table). Plain
// HTML: present without JavaScript.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "report/html/chart_axes.hpp"
#include "report/html/report_parts.hpp"
#include "report/html/score_html.hpp"
#include "report/score_report.hpp"

namespace latlab::html {
namespace {

struct Observer {
  Series series;
  const char* title;
};
constexpr std::array<Observer, 3> kObservers{{{Series::core_latency, "Core Latency"},
                                              {Series::fence_latency, "fence"},
                                              {Series::poll_latency, "poll"}}};

// The stages in path order, with their short names on the page.
struct Stage {
  Series series;
  const char* label;
  const char* colour;
};
constexpr std::array<Stage, kStageCount> kStages{{
    {Series::signal_to_consumer_wake, "signal \u2192 wake", "#8da0cb"},
    {Series::cpu_processing, "CPU", "#66c2a5"},
    {Series::cpu_end_to_submit_start, "CPU end \u2192 submit", "#a6d854"},
    {Series::workload_submit_cpu_span, "submit", "#ffd92f"},
    {Series::submit_start_to_gpu_begin, "queue", "#fc8d62"},
    {Series::gpu_execution, "GPU", "#e78ac3"},
    {Series::gpu_end_to_fence_wake, "completion seen", "#b3b3b3"},
}};

const Distribution& dist(const LatencyModeResult& m, Series s) {
  return m.total[static_cast<size_t>(s)];
}

std::optional<double> median(const LatencyModeResult& m, Series s) {
  const Distribution& d = dist(m, s);
  return d.empty() ? std::nullopt : std::optional<double>(d.p50);
}

bool any_mode_has(const LatencyRun& run, Series s) {
  for (const LatencyModeResult& m : run.modes)
    if (!dist(m, s).empty()) return true;
  return false;
}

// Per mode: each observer's p50 and p99 (us); an observer no mode has is left out.
std::string observer_table(const LatencyRun& run, const std::string& prefix) {
  std::string t = "<table class=\"headline\"><tr><th>us</th>";
  for (const Observer& o : kObservers) {
    if (!any_mode_has(run, o.series) && o.series != Series::core_latency) continue;
    t += fmt::format("<th>{0} p50</th><th>{0} p99</th>", o.title);
  }
  t += "</tr>\n";
  for (size_t i = 0; i < run.modes.size(); ++i) {
    const LatencyModeResult& m = run.modes[i];
    t += "<tr><th>" + escape(m.name) + "</th>";
    for (const Observer& o : kObservers) {
      if (!any_mode_has(run, o.series) && o.series != Series::core_latency) continue;
      const Distribution& d = dist(m, o.series);
      for (const auto& [stat, v] : {std::pair{"p50", d.p50}, std::pair{"p99", d.p99}}) {
        t += fmt::format("<td id=\"{}hl-{}-{}-{}\">{}</td>", prefix, i, to_string(o.series), stat,
                         d.empty() ? na() : number(v));
      }
    }
    t += "</tr>\n";
  }
  return t + "</table>\n";
}

constexpr double kSvgWidth = 860, kLabelWidth = 90, kRowHeight = 30, kGapWidth = 44;

// One mode's bar: its stages' medians left to right, a missing stage a gap labelled n/a.
std::string svg_bar(const LatencyModeResult& m, double y, double scale) {
  std::string s = fmt::format("<text x=\"0\" y=\"{:.1f}\" dominant-baseline=\"middle\">{}</text>\n",
                              y + kRowHeight / 2 - 2, escape(m.name));
  double x = kLabelWidth, sum = 0;
  for (const Stage& st : kStages) {
    const std::optional<double> v = median(m, st.series);
    if (!v) {
      s += fmt::format(
          "<g><title>{}: n/a (no frame had it)</title><rect x=\"{:.1f}\" y=\"{:.1f}\" "
          "width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#999\" stroke-dasharray=\"3 2\"/>"
          "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\" "
          "dominant-baseline=\"middle\" fill=\"#999\">n/a</text></g>\n",
          st.label, x, y, kGapWidth, kRowHeight - 6, x + kGapWidth / 2, y + kRowHeight / 2 - 3);
      x += kGapWidth;
      continue;
    }
    const double w = std::max(0.0, *v) * scale;
    s += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\">"
        "<title>{}: {} us (median)</title></rect>\n",
        x, y, w, kRowHeight - 6, st.colour, st.label, number(*v));
    x += w;
    sum += *v;
  }
  return s + fmt::format(
                 "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" "
                 "dominant-baseline=\"middle\">sum {} us</text>\n",
                 x + 4, y + kRowHeight / 2 - 3, number(sum));
}

// A mode's stage medians summed (us; n/a stages left out), and its n/a stages.
std::pair<double, size_t> bar_extent(const LatencyModeResult& m) {
  double sum = 0;
  size_t gaps = 0;
  for (const Stage& st : kStages) {
    const std::optional<double> v = median(m, st.series);
    if (v)
      sum += std::max(0.0, *v);
    else
      ++gaps;
  }
  return {sum, gaps};
}

// One bar per mode on one scale; when the longest bar is more than 10x the
// shortest, each bar on its own scale (said on the page) so neither is a sliver.
std::string breakdown_svg(const LatencyRun& run, const std::string& prefix) {
  double longest = 0, shortest = 0;
  size_t most_gaps = 0;
  for (size_t i = 0; i < run.modes.size(); ++i) {
    const auto [sum, gaps] = bar_extent(run.modes[i]);
    longest = std::max(longest, sum);
    shortest = i == 0 ? sum : std::min(shortest, sum);
    most_gaps = std::max(most_gaps, gaps);
  }
  const bool own_scale = shortest > 0 && longest > kOwnScaleRatio * shortest;
  const double room = kSvgWidth - kLabelWidth - 120 - static_cast<double>(most_gaps) * kGapWidth;
  const double height = kRowHeight * static_cast<double>(run.modes.size());
  std::string s = own_scale ? "<p>The modes' bars differ by more than 10\u00d7: each bar is "
                              "drawn on its own scale (full width = its own sum).</p>\n"
                            : "<p>All bars on one scale.</p>\n";
  s += fmt::format(
      "<svg id=\"{}breakdown-svg\" class=\"breakdown\" role=\"img\" viewBox=\"0 0 {} {}\" "
      "width=\"{}\" height=\"{}\" font-size=\"12\"><title>Stage medians per mode (us), "
      "in path order</title>\n",
      prefix, kSvgWidth, height, kSvgWidth, height);
  for (size_t i = 0; i < run.modes.size(); ++i) {
    const double sum = own_scale ? bar_extent(run.modes[i]).first : longest;
    s += svg_bar(run.modes[i], kRowHeight * static_cast<double>(i), sum > 0 ? room / sum : 0);
  }
  return s + "</svg>\n";
}

// The same numbers: stages in path order, then their sum and the observers' medians.
std::string breakdown_table(const LatencyRun& run, const std::string& prefix) {
  std::string t = fmt::format(
      "<table class=\"breakdown\" id=\"{}breakdown\"><tr><th>stage</th><th>key</th>", prefix);
  for (const LatencyModeResult& m : run.modes) t += "<th>" + escape(m.name) + " median (us)</th>";
  t += "</tr>\n";
  for (const Stage& st : kStages) {
    t += fmt::format(
        "<tr data-stage=\"{}\"><th><span class=\"swatch\" style=\"background:{}\"></span>{}</th>"
        "<td>{}</td>",
        to_string(st.series), st.colour, st.label, to_string(st.series));
    for (const LatencyModeResult& m : run.modes)
      t += "<td>" + number(median(m, st.series)) + "</td>";
    t += "</tr>\n";
  }
  t += "<tr class=\"sum\"><th>sum of the stage medians</th><td>n/a stages left out</td>";
  for (const LatencyModeResult& m : run.modes) {
    double sum = 0;
    for (const Stage& st : kStages) sum += median(m, st.series).value_or(0.0);
    t += "<td>" + number(sum) + "</td>";
  }
  t += "</tr>\n";
  for (const Series s : {Series::fence_latency, Series::core_latency}) {
    t += fmt::format("<tr class=\"sum\"><th>median total</th><td>{}</td>", to_string(s));
    for (const LatencyModeResult& m : run.modes) t += "<td>" + number(median(m, s)) + "</td>";
    t += "</tr>\n";
  }
  return t + "</table>\n";
}

}  // namespace

std::string headline(const RunResult& r, const std::string& device, const std::string& prefix) {
  std::string s = fmt::format("<div class=\"headline\" id=\"{}headline\">\n", prefix);
  s += "<p><b>Device</b>: " + device + "</p>\n";
  if (r.latency) {
    s += score_paragraph(score_for_display(r), prefix + "score");
    s += observer_table(*r.latency, prefix);
  }
  s += unavailable_list(r);
  return s + "</div>\n";
}

std::string where_the_time_goes(const LatencyRun& run, const std::string& prefix) {
  std::string s = "<h3>Where the time goes</h3>\n";
  s += "<p>Each bar is one mode's path, its stages in order (signal \u2192 wake \u2192 CPU "
       "\u2192 submit \u2192 queue \u2192 GPU \u2192 completion seen). Statistic: each stage's "
       "<b>median</b> (p50) over every measured frame of the mode. Medians of stages need not "
       "add up to the median total: the table gives their sum beside the median "
       "<code>fence_latency</code> (signal to completion seen) and <code>core_latency</code>. "
       "A stage no frame had is a gap labelled n/a, never 0. Hover a segment for its "
       "value.</p>\n";
  return s + breakdown_svg(run, prefix) + breakdown_table(run, prefix);
}

}  // namespace latlab::html
