// The comparison page's charts, for compare_html.cpp.
// Private to src/report/html.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/run_comparison.hpp"

namespace latlab::html {

// The samples of `r` the comparison's unit tested: each run's total (runs)
// or each block's value (blocks), us.
const std::vector<double>& samples_of(const CompareRow& r, CompareUnit unit, char side);

// CSS class of a call: call-regression, call-improvement, call-none (no
// significant change), call-untested.
const char* call_class(ChangeCall c);

// Per mode: each row's relative shift with its interval, coloured by its
// call (chart "shift-<mode>" into `charts`; its figure returned).
std::string shift_chart(const Comparison& c, const std::string& mode,
                        nlohmann::ordered_json& charts);

// Per mode and series: for p50 and p99 each, both sides' samples and each
// side's figure of the table on one axis (charts
// "samples-<mode>-<series>-<statistic>"); a sentence for a statistic with
// no value on either side.
std::string samples_charts(const Comparison& c, const std::string& mode, const std::string& series,
                           nlohmann::ordered_json& charts);

}  // namespace latlab::html
