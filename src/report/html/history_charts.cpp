// The history page's charts (drawn by the pages' script, report.js): one
// figure across the runs in time order. A point per run with the figure
// (a series per machine, in its colour), consecutive points joined; a run
// without the figure is a dashed line and breaks the line; under the chart
// at the cursor, the run's value, time, machine, version and settings, or
// why it has no value.
#include <fmt/format.h>

#include <algorithm>

#include "report/html/chart_axes.hpp"
#include "report/html/history_parts.hpp"
#include "report/html/html_page.hpp"
#include "report/html/page_runs.hpp"
#include "report/html/report_charts.hpp"
#include "report/html/report_parts.hpp"

namespace latlab::html {

const char* machine_colour(size_t k) { return palette()[k % palette().size()]; }

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

}  // namespace latlab::html
