#include "report/run_reporter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "latlab/bench/latency_report.hpp"
#include "latlab/bench/performance_mode.hpp"
#include "report/result_json.hpp"
#include "report/score_report.hpp"

namespace latlab {

RunDocument::RunDocument(const RunResult& result)
    : result_(result), json_(run_result_to_json(result).dump(2) + "\n") {}

namespace {

// Whether every section of a several-device run is "ok".
bool sections_ok(const RunResult& r) {
  return std::all_of(r.sections.begin(), r.sections.end(),
                     [](const DeviceSectionResult& s) { return s.status == "ok"; });
}

class ResultFileReporter final : public RunReporter {
 public:
  explicit ResultFileReporter(std::string path) : path_(std::move(path)) {}
  std::string what() const override { return "the result '" + path_ + "'"; }
  std::string if_interrupted() const override { return kAtomicFileIfInterrupted; }
  Result<std::string> write(const RunDocument& doc) override {
    if (Result<void> w = write_file_atomic(path_, doc.json_text()); !w) return w.error();
    const RunResult& r = doc.result();
    // partial (one device), incomplete (a section not ok)
    const char* suffix = !r.sections.empty() ? (sections_ok(r) ? "" : " (incomplete)")
                         : r.partial()       ? " (partial)"
                                             : "";
    return fmt::format("result written to {}{}\n", path_, suffix);
  }

 private:
  std::string path_;
};

class FramesCsvReporter final : public RunReporter {
 public:
  explicit FramesCsvReporter(std::string path) : path_(std::move(path)) {}
  std::string what() const override { return "the per-frame markers '" + path_ + "'"; }
  std::string if_interrupted() const override { return kAtomicFileIfInterrupted; }
  Result<std::string> write(const RunDocument& doc) override {
    if (Result<void> w = write_frames_csv(path_, doc.result()); !w) return w.error();
    return fmt::format("per-frame markers written to {}\n", path_);
  }

 private:
  std::string path_;
};

}  // namespace

std::unique_ptr<RunReporter> result_file_reporter(std::string path) {
  return std::make_unique<ResultFileReporter>(std::move(path));
}

std::unique_ptr<RunReporter> frames_csv_reporter(std::string path) {
  return std::make_unique<FramesCsvReporter>(std::move(path));
}

std::string format_run_summary(const RunResult& r) {
  std::string out;
  for (const DeviceSectionResult& s : r.sections) {
    out += fmt::format("\n== device section {}: {} device {}: {} [{}]\n", s.head.section,
                       s.head.backend, s.head.selector, s.device_name, s.status);
    out += s.result.empty() ? fmt::format("  failed: {}\n", s.failure)
                            : format_run_summary(s.result.front());
  }
  const PerformanceOutcome& perf = r.performance;
  if (r.latency) out += format_run_table(*r.latency);
  if (r.loaded.asked && !r.loaded.runs)
    out += fmt::format("  Loaded unavailable: {}\n", r.loaded.unavailable);
  if (r.latency) out += format_score(score_for_display(r));
  if (perf.report) out += format_performance(*perf.report);
  if (perf.asked && !perf.report)
    out += fmt::format("  Performance unavailable: {}\n", perf.unavailable);
  return out;
}

}  // namespace latlab
