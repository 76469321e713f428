// --report: the run's HTML page as one of run's reporters (run_reporter.hpp).
#pragma once

#include <memory>
#include <string>

#include "report/run_reporter.hpp"

namespace latlab {

// The page at `path`, titled `title` (the result file's name, or "latlab run").
std::unique_ptr<RunReporter> html_run_reporter(std::string path, std::string title);

}  // namespace latlab
