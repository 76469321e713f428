// latlab history [--store DB] [--limit N] [--json]: the stored runs, newest
// first, with their key figures (core and fence latency p50/p99 of each
// mode, the latency score with its interval; a capture's between-presents
// and GPU busy p50/p99). Exit codes: 0, 2 the store cannot be opened (or
// another schema version).
#include <fmt/format.h>

#include <memory>
#include <string>

#include "cli_options.hpp"
#include "command.hpp"
#include "report/reporters/reporters.hpp"

namespace latlab::cli {
namespace {

struct HistoryOptions {
  std::string store;
  size_t limit = 20;
  bool json = false;
  std::string report;  // --report: the history page ("" = none)
};

// Loads each listed run from the store and writes their page.
int write_history_page(store::ResultsStore& s, const std::vector<store::StoredRunSummary>& runs,
                       const HistoryOptions& o) {
  std::vector<HistoryRun> loaded;
  for (const store::StoredRunSummary& summary : runs) {
    Result<RunResult> r = s.load(summary.id);
    if (!r) return exit_code("latlab history", r.error(), kExitRunFailed);
    loaded.push_back({summary.id, summary.stored_utc, summary.fingerprint, std::move(r.value())});
  }
  std::FILE* said = o.json || names_stdout(o.report) ? stderr : stdout;
  const Result<void> w = write_page(o.report, render_history_html(loaded, s.name()), said);
  return exit_code("latlab history", w, kExitWriteFailed);
}

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
    if (const int rc = write_history_page(*s.value(), runs.value(), o); rc != kExitOk) return rc;
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
    const PageFiles files{opts->report, opts->json, {}, opts->store};
    return exit_code("latlab history", check_page_files(files), kExitUsage);
  };
  return {check, [opts] { return history(*opts); }};
}

const RegisterCommand kRegister{{"history", setup, 61}};

}  // namespace
}  // namespace latlab::cli
