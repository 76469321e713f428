// Pieces of the history page (history_html.cpp puts them together).
// Private to src/report/html.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "report/html/history_html.hpp"

namespace latlab::html {

// One key figure: a mode's observer's statistic of the run's total.
struct Figure {
  std::string mode;       // baseline, loaded
  std::string observer;   // core_latency, fence_latency, poll_latency
  std::string statistic;  // p50, p99
};

// The figure of run `r`, us; nullopt when the run does not have it.
std::optional<double> figure_value(const RunResult& r, const Figure& f);

// Why `r` has no value of `f` (for a gap's hover text).
std::string why_missing(const RunResult& r, const Figure& f);

// The settings that shape a run's frames, on one line.
std::string settings_summary(const RunResult& r);

// A run's hover text: id, time, machine, device, version, settings.
std::string run_hover(const HistoryRun& h);

// The colour of machine number `k` (k-th fingerprint seen).
const char* machine_colour(size_t k);

// The chart of one figure ("hist-<mode>-<observer>-<statistic>" into
// `charts`; its figure returned): `runs` in time order on the x axis;
// `machines` maps each fingerprint to its colour number.
std::string figure_chart(const std::vector<const HistoryRun*>& runs, const Figure& f,
                         const std::map<std::string, size_t>& machines,
                         nlohmann::ordered_json& charts);

}  // namespace latlab::html
