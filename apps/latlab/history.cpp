// latlab history [--store DB] [--limit N] [--json]: the stored runs, newest
// first, with their key figures (core and fence latency p50/p99 of each
// mode, the latency score with its interval; a capture's between-presents
// and GPU busy p50/p99). Exit codes: 0, 2 the store cannot be opened (or
// another schema version).
#include <fmt/format.h>

#include <memory>
#include <string>

#include "cli_checks.hpp"
#include "command.hpp"
#include "file_plan.hpp"
#include "history_page.hpp"
#include "page_files.hpp"
#include "report/store/history_report.hpp"

namespace latlab::cli {
namespace {

struct HistoryOptions {
  std::string store;
  size_t limit = 20;
  bool json = false;
  std::string report;  // --report: the history page ("" = none)
};

int history(const HistoryOptions& o) {
  Result<std::unique_ptr<store::ResultsStore>> s =
      store::ResultsStore::open(o.store, store::ResultsStore::Access::read);
  if (!s) {
    std::fprintf(stderr, "latlab history: %s\n", s.error().message.c_str());
    return kExitUsage;
  }
  Result<std::vector<store::StoredRunSummary>> runs = s.value()->list(o.limit);
  if (!runs) {
    std::fprintf(stderr, "latlab history: %s\n", runs.error().message.c_str());
    return kExitRunFailed;
  }
  if (!o.report.empty()) {
    if (const int rc = write_history_page(*s.value(), runs.value(), o.report, o.json);
        rc != kExitOk)
      return rc;
    if (names_stdout(o.report)) return kExitOk;  // --report -: the page is the output
  }
  const std::string& name = s.value()->name();
  if (o.json) {
    std::printf("%s\n", history_json(runs.value(), name).c_str());
  } else {
    std::fputs(history_text(runs.value(), name).c_str(), stdout);
  }
  return kExitOk;
}

CommandRunner setup(CLI::App& app) {
  auto opts = std::make_shared<HistoryOptions>();
  CLI::App* sub = app.add_subcommand("history", "List the runs in the results store");
  sub->add_option("--store", opts->store,
                  "SQLite file or postgresql:// URL (default: $XDG_DATA_HOME/latlab/results.db)");
  sub->add_option("--limit", opts->limit, "Newest runs to list")
      ->transform(unsigned_in(1, 1'000'000))
      ->capture_default_str();
  sub->add_flag("--json", opts->json, "Print JSON instead of the table");
  sub->add_option("--report", opts->report,
                  "Also write the listed runs' key figures across time as one self-contained "
                  "HTML page (atomically; '-' for stdout)");
  auto check = [opts] {
    const int rc = store_location_exit("latlab history", opts->store);
    if (rc != kExitOk || opts->report.empty()) return rc;
    return check_page_files("latlab history", {opts->report, opts->json, {}, opts->store});
  };
  return {check, [opts] { return history(*opts); }};
}

const RegisterCommand kRegister{{"history", setup, 61}};

}  // namespace
}  // namespace latlab::cli
