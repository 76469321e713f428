// latlab capture's reporters (reporters.hpp: CaptureReporters): the CSVs
// as the capture runs, then the result, the report and the console summary.
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/output_file.hpp"
#include "latlab/bench/latency_report.hpp"
#include "report/capture_csv_writers.hpp"
#include "report/capture_input_report.hpp"
#include "report/capture_report.hpp"
#include "report/file_plan.hpp"
#include "report/html/report_html.hpp"
#include "report/reporters/reporters.hpp"

namespace latlab {

// The CSV files asked for: each a row sink of the session, written as the
// capture runs and renamed into place when it is reported.
struct CaptureCsvFiles {
  struct File {
    const char* option;
    std::string path;
    std::unique_ptr<CaptureCsvWriter> writer;
  };
  std::vector<File> files;

  // Opens every file; false (and why on stderr) when one cannot be.
  bool open(const CaptureOutputs& o) {
    add("--frames-csv", o.frames_csv, std::make_unique<FramesCsvWriter>());
    add("--submits-csv", o.submits_csv, std::make_unique<SubmitsCsvWriter>());
    add("--presentmon-csv", o.presentmon_csv, std::make_unique<PresentmonCsvWriter>());
    if (!o.inputs_csv.empty()) {
      auto w = std::make_unique<InputsCsvWriter>();
      inputs = w.get();
      add("--inputs-csv", o.inputs_csv, std::move(w));
    }
    for (File& f : files) {
      if (auto r = f.writer->open(f.path); !r) {
        std::fprintf(stderr, "latlab capture: cannot write %s: %s\n", f.option,
                     r.error().message.c_str());
        return false;
      }
    }
    return true;
  }
  std::vector<capture::CaptureRowSink*> sinks() const {
    std::vector<capture::CaptureRowSink*> out;
    for (const File& f : files) out.push_back(f.writer.get());
    return out;
  }
  InputsCsvWriter* inputs = nullptr;  // --inputs-csv's writer (in `files`), or null

 private:
  void add(const char* option, const std::string& path, std::unique_ptr<CaptureCsvWriter> w) {
    if (!path.empty()) files.push_back({option, path, std::move(w)});
  }
};

namespace {

// The reporters: every file asked for, then the console summary on stderr.
// Returns false when a file could not be written.
bool report_capture(const CaptureOutputs& o, CaptureCsvFiles& csv, const CaptureOutcome& out) {
  bool status = true;
  std::string written;  // the files written, for the console
  auto done = [&](const char* option, const std::string& path, const Result<void>& r) {
    if (!r) {
      std::fprintf(stderr, "latlab capture: cannot write %s: %s\n", option,
                   r.error().message.c_str());
      status = false;
      return;
    }
    written += (written.empty() ? "" : ", ") + (path == "-" ? std::string("stdout") : path);
  };
  auto write = [&](const char* option, const std::string& path, auto text) {
    if (!path.empty()) done(option, path, write_output_file(path, text()));
  };
  RunResult r;
  r.meta.command_line = o.command_line;
  r.meta.created_utc = utc_now_iso8601();
  r.meta.machine = collect_machine_info();
  r.capture = out.capture;
  write("--out", o.out, [&] { return capture_result_text(r); });
  write("--report", o.report, [&] {
    const ReportInput in{o.out.empty() ? std::string("latlab capture") : o.out, &r};
    return render_html_report(std::span(&in, 1));
  });
  // Every row went to the CSV writers before the report.
  for (CaptureCsvFiles::File& f : csv.files) done(f.option, f.path, f.writer->commit());
  print_capture_summary(stderr, out);
  if (!written.empty()) std::fprintf(stderr, "latlab capture: wrote %s\n", written.c_str());
  if (o.out.empty()) std::fprintf(stderr, "latlab capture: no --out: the result was not saved\n");
  if (!out.capture.partial_reason.empty())
    std::fprintf(stderr, "latlab capture: partial: %s\n", out.capture.partial_reason.c_str());
  return status;
}

}  // namespace

Result<void> check_capture_files(const CaptureOutputs& o) {
  FilePlan files;
  files.output("--out", o.out);
  files.output("--frames-csv", o.frames_csv);
  files.output("--submits-csv", o.submits_csv);
  files.output("--presentmon-csv", o.presentmon_csv);
  files.output("--report", o.report);
  files.output("--inputs-csv", o.inputs_csv);
  return files.check();
}

CaptureReporters::CaptureReporters(CaptureOutputs o)
    : outputs_(std::move(o)), csv_(std::make_unique<CaptureCsvFiles>()) {}

CaptureReporters::~CaptureReporters() = default;

bool CaptureReporters::open() { return csv_->open(outputs_); }

void CaptureReporters::attach(CaptureHooks& hooks) {
  hooks.row_sinks = csv_->sinks();
  if (csv_->inputs != nullptr) hooks.input_sinks.push_back(csv_->inputs);
}

bool CaptureReporters::report(const CaptureOutcome& out) {
  return report_capture(outputs_, *csv_, out);
}

}  // namespace latlab
