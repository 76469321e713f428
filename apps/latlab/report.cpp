// latlab report: one self-contained HTML file from result documents.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "command.hpp"
#include "file_plan.hpp"
#include "latlab/bench/latency_report.hpp"
#include "report/html/report_html.hpp"
#include "report/html/report_input.hpp"

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

// Writes the report check_report() accepted.
int run_report(const ReportOptions& o) {
  std::vector<ReportInput> runs;
  for (const std::string& path : o.inputs) {
    Result<ReportInput> in = read_report_input(path);
    if (!in) {
      std::fprintf(stderr, "latlab report: %s\n", in.error().message.c_str());
      return kExitUsage;
    }
    // Validated by the reader: devices_run has sections and a top-level one.
    if (const auto it = in->doc.find("devices_run");
        it != in->doc.end() && (*it)["sections"].size() > 1) {
      fmt::print(stderr,
                 "latlab report: {} holds {} device sections (run --device all); the report shows "
                 "its top-level device only (section {}: {})\n",
                 path, (*it)["sections"].size(), (*it)["top_level_section"].get<uint64_t>(),
                 in->doc["device"]["name"].get<std::string>());
    }
    runs.push_back(std::move(in.value()));
  }
  Result<std::string> page = render_html_report(runs);
  if (!page) {
    std::fprintf(stderr, "latlab report: %s\n", page.error().message.c_str());
    return kExitUsage;
  }
  if (Result<void> w = write_file_atomic(o.out, *page); !w) {
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
  sub->add_option("results", opts->inputs, "Result JSON files of latlab run")->required();
  sub->add_option("-o,--out", opts->out, "HTML file to write (atomically; '-' for stdout)")
      ->capture_default_str();
  return {[opts] { return check_report(*opts); }, [opts] { return run_report(*opts); }};
}

const RegisterCommand kRegister{{"report", setup, 30}};

}  // namespace
}  // namespace latlab::cli
