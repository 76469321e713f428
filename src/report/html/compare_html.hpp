// The comparison page of `latlab compare ... --report FILE`: one
// self-contained HTML file (uPlot, the charts' data and CSS inline, no request) from
// the typed Comparison and the runs it compared. Per mode: each row's shift
// with its interval and call, both sides' samples as the test used them (each
// run's total with the unit runs, each block's value with the unit blocks),
// the table of every figure; then the method, compare's notes, the runs and
// the settings that differ. Private to latlab (apps/latlab/compare.cpp).
#pragma once

#include <string>

#include "report/run_comparison.hpp"

namespace latlab {

// The page for `c`, which compare_sides(a, b, ...) returned (the sides' runs
// alive during the call).
std::string render_compare_html(const Comparison& c, const CompareSide& a, const CompareSide& b);

}  // namespace latlab
