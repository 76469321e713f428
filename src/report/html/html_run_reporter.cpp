#include "report/html/html_run_reporter.hpp"

#include <fmt/format.h>

#include <span>
#include <utility>

#include "report/html/report_html.hpp"

namespace latlab {
namespace {

class HtmlRunReporter final : public RunReporter {
 public:
  HtmlRunReporter(std::string path, std::string title)
      : path_(std::move(path)), title_(std::move(title)) {}
  std::string what() const override { return "the report '" + path_ + "'"; }
  std::string if_interrupted() const override { return kAtomicFileIfInterrupted; }
  Result<std::string> write(const RunDocument& doc) override {
    const RunResult& r = doc.result();
    const ReportInput in{title_, &r};
    if (Result<void> w = write_html_report(path_, std::span(&in, 1)); !w)
      return make_error("report: " + w.error().message);
    std::string said = fmt::format("report written to {}\n", path_);
    if (r.sections.size() > 1)
      said += fmt::format("the report shows the top-level device of the {} sections (section {})\n",
                          r.sections.size(), r.top_section.value_or(0));
    return said;
  }

 private:
  std::string path_, title_;
};

}  // namespace

std::unique_ptr<RunReporter> html_run_reporter(std::string path, std::string title) {
  return std::make_unique<HtmlRunReporter>(std::move(path), std::move(title));
}

}  // namespace latlab
