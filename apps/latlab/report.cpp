// latlab report: one self-contained HTML file from result files (of `latlab
// run` or `latlab capture`), each read back into the typed result.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "command.hpp"
#include "latlab/bench/latency_report.hpp"
#include "report/reporters/reporters.hpp"

namespace latlab::cli {
namespace {

struct ReportOptions {
  std::vector<std::string> inputs;
  std::string out = "latlab-report.html";
};

// Before any work: -o can be written and is none of the inputs.
int check_report(const ReportOptions& o) {
  FilePlan files;
  for (size_t i = 0; i < o.inputs.size(); ++i)
    files.input("result " + std::to_string(i + 1), o.inputs[i]);
  files.output("-o", o.out);
  if (Result<void> r = files.check(); !r) {
    std::fprintf(stderr, "latlab report: %s\n", r.error().message.c_str());
    return kExitUsage;
  }
  return kExitOk;
}

// Writes the report check_report() accepted: each file read into the typed
// result, the page rendered from them.
int run_report(const ReportOptions& o) {
  std::vector<ReportFile> files;
  for (const std::string& path : o.inputs) {
    Result<ReportFile> in = read_report_input(path);
    if (!in) {
      std::fprintf(stderr, "latlab report: %s\n", in.error().message.c_str());
      return kExitUsage;
    }
    if (const RunResult& r = in->result; r.sections.size() > 1) {
      fmt::print(stderr,
                 "latlab report: {} holds {} device sections (run --device all); the report shows "
                 "its top-level device only (section {}: {})\n",
                 path, r.sections.size(), r.top_section.value_or(0), r.top_level().device.name);
    }
    files.push_back(std::move(in.value()));
  }
  std::vector<ReportInput> runs;
  for (const ReportFile& f : files) runs.push_back({f.label, &f.result});
  const std::string page = render_html_report(runs);
  if (Result<void> w = write_file_atomic(o.out, page); !w) {
    std::fprintf(stderr, "latlab report: %s\n", w.error().message.c_str());
    return kExitWriteFailed;
  }
  // -o - (the page on stdout): the line goes to stderr.
  fmt::print(names_stdout(o.out) ? stderr : stdout, "report written to {} ({} run{})\n", o.out,
             runs.size(), runs.size() == 1 ? "" : "s");
  return kExitOk;
}

CommandRunner setup(CLI::App& app) {
  auto opts = std::make_shared<ReportOptions>();
  auto* sub = app.add_subcommand(
      "report",
      "Write one self-contained HTML report (charts, percentile tables, clock model, settings) "
      "from result files; opens offline, makes no request");
  sub->add_option("results", opts->inputs, "Result JSON files of latlab run or latlab capture")
      ->required();
  sub->add_option("-o,--out", opts->out, "HTML file to write (atomically; '-' for stdout)")
      ->capture_default_str();
  return {[opts] { return check_report(*opts); }, [opts] { return run_report(*opts); }};
}

const RegisterCommand kRegister{{"report", setup, 30}};

}  // namespace
}  // namespace latlab::cli
