// The HTML report: one self-contained file (uPlot and the data inlined, no
// request of any kind) from one or more typed results (RunResult: the
// engine's, or a result file read back). Every statistic it shows comes from
// the result or is computed here in C++; the page's script only draws.
// Tables carry every figure, so the page reads with JavaScript off. Private
// to latlab (apps/latlab/report.cpp, run --report).
#pragma once

#include <span>
#include <string>

#include "latlab/result.hpp"
#include "report/html/report_input.hpp"

namespace latlab {

// The page for `runs`, in the order given.
std::string render_html_report(std::span<const ReportInput> runs);

// Renders `runs` and writes the page to `path` atomically (the previous file
// stays on any failure).
Result<void> write_html_report(const std::string& path, std::span<const ReportInput> runs);

}  // namespace latlab
