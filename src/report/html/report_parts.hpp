// Pieces of the HTML report shared by its files: cells, the series in
// display order, and the tables (HTML fragments) of one result. Every value
// comes from the typed result (RunResult); an absent value is a visible
// "n/a", never 0. Private to src/report/html.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "latlab/bench/run_result.hpp"

namespace latlab::html {

using json = nlohmann::ordered_json;

// `s` with & < > " ' escaped for HTML text and attributes.
std::string escape(std::string_view s);

// Cell contents: "n/a" (class "na"), text (escaped), an integer, a number
// with `decimals`, yes/no, or nullopt / an empty distribution's statistic
// as "n/a".
std::string na();
std::string text(std::string_view s);
std::string text_or_na(std::string_view s);  // "" -> n/a
std::string integer(int64_t v);
std::string count(uint64_t v);
std::string number(double v, int decimals = 1);
std::string number(std::optional<double> v, int decimals = 1);
std::string yes_no(bool v);
// A JSON value of a key/value table (a section the JSON reporter shapes).
std::string cell(const json& v, int decimals = 1);

// A <td> per statistic of `d` in `stats` (e.g. &Distribution::p50) with
// `decimals`; each "n/a" when `d` is empty.
std::string stat_tds(const Distribution& d, std::initializer_list<double Distribution::*> stats,
                     int decimals = 1);
// A distribution's cells: count, missing (flagged when > 0), p50, p90, p99,
// p99.9 and max; and their heads.
std::string distribution_tds(const Distribution& d);
inline constexpr size_t kDistributionCells = 7;
inline constexpr std::string_view kDistributionThs =
    "<th>count</th><th>missing</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th>";

// The series of a block or total in display order: the seven stages, the
// three observers of completion, then the diagnostics.
struct SeriesName {
  Series series;
  std::string key;    // e.g. "core_latency"
  std::string group;  // "stage", "observer" or "diagnostic"
};
const std::vector<SeriesName>& series_names();

// `<tr><th>key</th><td>value</td></tr>`.
void row(std::string& out, std::string_view key, const std::string& value);

// The rows a result's key/value table starts with: created, command line, tool.
void meta_rows(std::string& t, const RunResult& r);

// A mode's GPU time against its target, as text; "" without one.
std::string gpu_target_text(const LatencyModeResult& m);

// Tables of one (one-device) result.
std::string settings_table(const RunResult& r);
std::string unavailable_list(const RunResult& r);
std::string modes_table(const RunResult& r);
std::string percentile_table(const LatencyRun& run);
std::string missing_markers_table(const LatencyRun& run);
std::string load_calibration_section(const LoadedOutcome& loaded);
std::string clock_model_table(const ClockModelReport& c);
std::string performance_table(const PerformanceOutcome& p);

// The top of a run's section: the latency score (id "<prefix>score"), per
// mode the observers' p50/p99 (ids "<prefix>hl-<mode index>-<series>-p50"),
// `device`, what is unavailable.
std::string headline(const RunResult& r, const std::string& device, const std::string& prefix);
// Per mode the stage medians in path order: an inline SVG bar each, and the
// table "<prefix>breakdown" (a row per stage, `data-stage` its key).
std::string where_the_time_goes(const LatencyRun& run, const std::string& prefix);

// The distribution named `name` in `figures`; nullptr when there is none.
const Distribution* figure_of(const NamedDistributions& figures, std::string_view name);

// A capture result's section: what it ran and how, its sources, counts,
// figures and their chart (into `charts`).
std::string capture_section(const RunResult& r, const std::string& prefix, json& charts);
// A capture's "where the time goes": the frame's path in per-frame figures
// (table "<prefix>capture-path", a row per figure, `data-figure` its name)
// and what the display path said of the frames.
std::string capture_time_path(const CaptureResult& c, const std::string& prefix);

}  // namespace latlab::html
