// Pieces of the HTML report shared by report_html.cpp (page, charts) and
// report_tables.cpp (tables). Private to src/report/html.
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace latlab::html {

using json = nlohmann::ordered_json;

// The value at `path` below `j`, or null when any step is absent or not an object.
const json* find(const json& j, std::initializer_list<std::string_view> path);

// A number at `path`, or nullopt when absent, null or not a number.
std::optional<double> number(const json& j, std::initializer_list<std::string_view> path);

// `s` with & < > " ' escaped for HTML text and attributes.
std::string escape(std::string_view s);

// A JSON scalar as cell text: strings escaped, numbers as given (doubles
// with `decimals`), booleans yes/no; null or absent -> a visible "n/a" cell
// content marked class "na".
std::string cell(const json* v, int decimals = 1);

// The series of a block or total in display order: the seven stages, the
// two observers of completion, then the diagnostics.
struct SeriesName {
  std::string key;    // e.g. "core_latency"
  std::string group;  // "stage", "observer" or "diagnostic"
};
const std::vector<SeriesName>& series_names();

// The distribution of series `key` inside a block/total object.
const json* series_distribution(const json& total, const std::string& key);

// The latency modes of a document that ran (have `total`), in order.
std::vector<std::string> latency_modes(const json& doc);

// Tables (HTML fragments).
std::string settings_table(const json& doc);
std::string unavailable_list(const json& doc);
std::string modes_table(const json& doc);
std::string percentile_table(const json& doc);
std::string missing_markers_table(const json& doc);
std::string load_calibration_section(const json& doc);
std::string clock_model_table(const json& doc);
std::string performance_table(const json& doc);

}  // namespace latlab::html
