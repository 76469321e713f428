// latlab run: the reporters of the engine's typed result (table, JSON,
// CSV, HTML, store), the validation findings and the exit code.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "command.hpp"
#include "file_plan.hpp"
#include "report/html/report_html.hpp"
#include "report/result_json.hpp"
#include "report/score_report.hpp"
#include "run_parts.hpp"

namespace latlab::cli {
namespace {

// What an interrupt leaves of a file being written.
constexpr const char* kFileIfCut =
    "it keeps its previous contents; a temporary .latlab-XXXXXX beside it may remain";

// The per-stage table, what was unavailable and the latency score, on
// `table` (stdout, or stderr when an output writes to stdout); several
// devices: one such table per section under its heading.
void print_summary(const RunResult& r, std::FILE* table) {
  for (const DeviceSectionResult& s : r.sections) {
    fmt::print(table, "\n== device section {}: {} device {}: {} [{}]\n", s.head.section,
               s.head.backend, s.head.selector, s.device_name, s.status);
    if (s.result.empty()) {
      fmt::print(table, "  failed: {}\n", s.failure);
    } else {
      print_summary(s.result.front(), table);
    }
  }
  const PerformanceOutcome& perf = r.performance;
  if (r.latency) std::fputs(format_run_table(*r.latency).c_str(), table);
  if (r.loaded.asked && !r.loaded.runs)
    std::fprintf(table, "  Loaded unavailable: %s\n", r.loaded.unavailable.c_str());
  if (r.latency) std::fputs(format_score(score_for_display(r)).c_str(), table);
  if (perf.report) std::fputs(format_performance(*perf.report).c_str(), table);
  if (perf.asked && !perf.report)
    std::fprintf(table, "  Performance unavailable: %s\n", perf.unavailable.c_str());
}

// Whether every section of a several-device run is "ok".
bool sections_ok(const RunResult& r) {
  return std::all_of(r.sections.begin(), r.sections.end(),
                     [](const DeviceSectionResult& s) { return s.status == "ok"; });
}

// What --out's line adds: partial (one device), incomplete (a section not ok).
const char* out_suffix(const RunResult& r) {
  if (!r.sections.empty()) return sections_ok(r) ? "" : " (incomplete)";
  return r.partial() ? " (partial)" : "";
}

// Writes --out, --frames-csv and --report; returns false when one could not
// be written.
bool write_outputs(const RunOutputs& o, const RunResult& r, const nlohmann::ordered_json& doc,
                   std::FILE* info, WritesInterruptScope& notice) {
  bool ok = true;
  if (!o.out.empty()) {
    notice.writing("the result '" + o.out + "'", kFileIfCut);
    if (write_result_json(o.out, doc, info, out_suffix(r))) {
      notice.kept("the result '" + o.out + "'");
    } else {
      ok = false;
    }
  }
  if (!o.frames_csv.empty()) {
    notice.writing("the per-frame markers '" + o.frames_csv + "'", kFileIfCut);
    if (Result<void> w = write_frames_csv(o.frames_csv, r); !w) {
      std::fprintf(stderr, "latlab run: %s\n", w.error().message.c_str());
      ok = false;
    } else {
      fmt::print(info, "per-frame markers written to {}\n", o.frames_csv);
      notice.kept("the per-frame markers '" + o.frames_csv + "'");
    }
  }
  if (!o.report.empty()) {
    notice.writing("the report '" + o.report + "'", kFileIfCut);
    const ReportInput in{o.out.empty() ? std::string("latlab run") : o.out, &r};
    if (Result<void> w = write_html_report(o.report, std::span(&in, 1)); !w) {
      std::fprintf(stderr, "latlab run: report: %s\n", w.error().message.c_str());
      ok = false;
    } else {
      fmt::print(info, "report written to {}\n", o.report);
      if (r.sections.size() > 1)
        fmt::print(info, "the report shows the top-level device of the {} sections (section {})\n",
                   r.sections.size(), r.top_section.value_or(0));
      notice.kept("the report '" + o.report + "'");
    }
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

bool write_result_json(const std::string& path, const nlohmann::ordered_json& doc, std::FILE* info,
                       const char* suffix) {
  if (Result<void> w = write_file_atomic(path, doc.dump(2) + "\n"); !w) {
    std::fprintf(stderr, "latlab run: %s\n", w.error().message.c_str());
    return false;
  }
  fmt::print(info, "result written to {}{}\n", path, suffix);
  return true;
}

int report_run(const RunOutputs& o, const RunResult& r, std::FILE* info,
               store::ResultsStore* store) {
  const nlohmann::ordered_json doc = run_result_to_json(r);
  if (o.json) {
    std::printf("%s\n", doc.dump(2).c_str());
  } else {
    print_summary(r, run_outputs_take_stdout(o) ? stderr : stdout);
  }
  int rc = r.partial() || !sections_ok(r) ? kExitRunFailed : kExitOk;
  if (r.performance.asked && !r.performance.report) rc = kExitRunFailed;
  if (print_section_validation(r)) rc = kExitRunFailed;
  std::fflush(nullptr);  // the table before any interrupt's message
  WritesInterruptScope notice("latlab run");
  if (!write_outputs(o, r, doc, info, notice)) rc = kExitWriteFailed;
  // Several devices: the top-level device's row, as `store add` of the file.
  if (store != nullptr && r.top_level().latency) {
    notice.writing("the run into the store " + store->name(),
                   "the append is rolled back: nothing of this run is in the store");
    if (!store_run(*store, r, doc, info)) rc = kExitWriteFailed;
  }
  const std::optional<ValidationReport>& v = r.meta.validation;
  if (v && print_validation(*v, info) && rc == kExitOk) rc = kExitRunFailed;
  print_incomplete(r);
  return rc;
}

}  // namespace latlab::cli
