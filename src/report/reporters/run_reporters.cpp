// latlab run: the engine's typed result handed to its reporters (the table
// or --json, then --out, --frames-csv, --report and the store:
// report/run_reporter.hpp) and the validation findings (reporters.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "report/file_plan.hpp"
#include "report/html/html_run_reporter.hpp"
#include "report/reporters/reporters.hpp"
#include "report/run_reporter.hpp"
#include "report/score_report.hpp"
#include "report/store/store_run_reporter.hpp"

namespace latlab {
namespace {

// Whether every section of a several-device run is "ok".
bool sections_ok(const RunResult& r) {
  return std::all_of(r.sections.begin(), r.sections.end(),
                     [](const DeviceSectionResult& s) { return s.status == "ok"; });
}

// The reporters of the files and the store that `o` asks for, in the order
// they write.
std::vector<std::unique_ptr<RunReporter>> file_reporters(const RunOutputs& o, const RunResult& r,
                                                         store::ResultsStore* store) {
  std::vector<std::unique_ptr<RunReporter>> out;
  if (!o.out.empty()) out.push_back(result_file_reporter(o.out));
  if (!o.frames_csv.empty()) out.push_back(frames_csv_reporter(o.frames_csv));
  if (!o.report.empty())
    out.push_back(html_run_reporter(o.report, o.out.empty() ? std::string("latlab run") : o.out));
  // Several devices: the top-level device's row, as `store add` of the file.
  if (store != nullptr && r.top_level().latency) out.push_back(store::store_run_reporter(*store));
  return out;
}

// Runs each reporter, saying where it wrote on `info` or why it could not
// on stderr; returns false when one could not write.
bool write_outputs(std::vector<std::unique_ptr<RunReporter>>& reporters, const RunDocument& doc,
                   std::FILE* info, WritesInterruptScope& notice) {
  bool ok = true;
  for (const auto& rep : reporters) {
    notice.writing(rep->what(), rep->if_interrupted());
    Result<std::string> said = rep->write(doc);
    if (!said) {
      std::fprintf(stderr, "latlab run: %s\n", said.error().message.c_str());
      ok = false;
      continue;
    }
    std::fputs(said.value().c_str(), info);
    notice.kept(rep->what());
  }
  return ok;
}

// Prints the validation findings; returns whether the layer reported errors.
bool print_validation(const ValidationReport& v, std::FILE* info) {
  fmt::print(info, "validation errors: {}\n", v.error_count);
  if (v.error_count == 0) return false;
  for (const std::string& m : v.messages) std::fprintf(stderr, "  %s\n", m.c_str());
  std::fprintf(stderr, "latlab run: the Vulkan validation layer reported %llu errors\n",
               static_cast<unsigned long long>(v.error_count));
  return true;
}

// Several devices: each section's validation findings; returns whether a
// layer reported errors.
bool print_section_validation(const RunResult& r) {
  bool errors = false;
  for (const DeviceSectionResult& s : r.sections) {
    if (s.result.empty()) continue;
    const std::optional<ValidationReport>& v = s.result.front().meta.validation;
    if (!v || v->error_count == 0) continue;
    std::fprintf(stderr,
                 "latlab run: device section %u: the validation layer reported %llu errors\n",
                 s.head.section, static_cast<unsigned long long>(v->error_count));
    for (const std::string& m : v->messages) std::fprintf(stderr, "  %s\n", m.c_str());
    errors = true;
  }
  return errors;
}

// Why the run is not complete, on stderr: one device's reason, or each
// section that is not ok.
void print_incomplete(const RunResult& r) {
  if (r.sections.empty() && r.partial())
    std::fprintf(stderr, "latlab run: run incomplete: %s\n", r.partial_reason().c_str());
  for (const DeviceSectionResult& s : r.sections) {
    if (s.status == "ok") continue;
    std::fprintf(stderr, "latlab run: device section %u (%s %s) %s: %s\n", s.head.section,
                 s.head.backend.c_str(), s.head.selector.c_str(),
                 s.status == "failed" ? "failed" : "incomplete", s.failure.c_str());
  }
}

}  // namespace

bool run_outputs_take_stdout(const RunOutputs& o) {
  return names_stdout(o.out) || names_stdout(o.frames_csv) || names_stdout(o.report);
}

Result<void> check_run_files(const RunOutputs& o) {
  FilePlan files;
  files.output("--out", o.out);
  files.output("--frames-csv", o.frames_csv);
  files.output("--report", o.report);
  if (o.json) files.output("--json (standard output)", "-");
  if (o.use_store) files.store("--store", o.store);
  return files.check();
}

RunReported report_run(const RunOutputs& o, RunResult& r, std::FILE* info,
                       store::ResultsStore* store) {
  attach_latency_scores(r);
  const RunDocument doc(r);
  if (o.json) {
    std::fputs(doc.json_text().c_str(), stdout);
  } else {
    std::fputs(format_run_summary(r).c_str(), run_outputs_take_stdout(o) ? stderr : stdout);
  }
  bool complete = !r.partial() && sections_ok(r);
  if (r.performance.asked && !r.performance.report) complete = false;
  if (print_section_validation(r)) complete = false;
  std::fflush(nullptr);  // the table before any interrupt's message
  WritesInterruptScope notice("latlab run");
  std::vector<std::unique_ptr<RunReporter>> reporters = file_reporters(o, r, store);
  const bool written = write_outputs(reporters, doc, info, notice);
  const std::optional<ValidationReport>& v = r.meta.validation;
  if (v && print_validation(*v, info)) complete = false;
  print_incomplete(r);
  if (!written) return RunReported::write_failed;
  return complete ? RunReported::complete : RunReported::incomplete;
}

std::unique_ptr<store::ResultsStore> open_run_store(const std::string& location) {
  Result<std::unique_ptr<store::ResultsStore>> s =
      store::ResultsStore::open(location, store::ResultsStore::Access::append);
  if (!s) {
    std::fprintf(stderr, "latlab run: --store: %s\n", s.error().message.c_str());
    return nullptr;
  }
  return std::move(s.value());
}

}  // namespace latlab
