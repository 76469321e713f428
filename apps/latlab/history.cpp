// latlab history [--store DB] [--limit N] [--json]: the stored runs, newest
// first, with their key figures (core and fence latency p50/p99 of each
// mode, the latency score with its interval; a capture's between-presents
// and GPU busy p50/p99). Exit codes: 0, 2 the store cannot be opened (or
// another schema version).
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_checks.hpp"
#include "command.hpp"
#include "file_plan.hpp"
#include "history_page.hpp"
#include "history_score.hpp"
#include "page_files.hpp"
#include "report/store/results_store.hpp"

namespace latlab::cli {
namespace {

struct HistoryOptions {
  std::string store;
  size_t limit = 20;
  bool json = false;
  std::string report;  // --report: the history page ("" = none)
};

std::string us(std::optional<double> v) { return v ? fmt::format("{:.1f}", *v) : "-"; }

nlohmann::ordered_json opt(std::optional<double> v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

void print_json(const std::vector<store::StoredRunSummary>& runs, const std::string& name) {
  using json = nlohmann::ordered_json;
  json arr = json::array();
  for (const auto& r : runs) {
    json modes = json::object();
    for (const auto& m : r.modes) {
      if (m.mode == "capture") {
        modes[m.mode] = {{"frames", m.frames},
                         {"between_presents_p50_us", opt(m.between_presents_p50)},
                         {"between_presents_p99_us", opt(m.between_presents_p99)},
                         {"gpu_busy_p50_us", opt(m.gpu_busy_p50)},
                         {"gpu_busy_p99_us", opt(m.gpu_busy_p99)}};
        continue;
      }
      modes[m.mode] = {{"frames", m.frames},
                       {"core_latency_p50_us", opt(m.core_p50)},
                       {"core_latency_p99_us", opt(m.core_p99)},
                       {"core_latency_missing", m.core_missing},
                       {"fence_latency_p50_us", opt(m.fence_p50)},
                       {"fence_latency_p99_us", opt(m.fence_p99)}};
    }
    arr.push_back({{"id", r.id},
                   {"stored_utc", r.stored_utc},
                   {"created_utc", r.created_utc},
                   {"hostname", r.hostname},
                   {"backend", r.backend},
                   {"device", r.device},
                   {"driver", r.driver},
                   {"fingerprint", r.fingerprint},
                   {"tool_version", r.tool_version},
                   {"mode", r.settings_mode},
                   {"partial", r.partial},
                   {"frame_rows", r.frame_rows ? json(*r.frame_rows) : json(nullptr)},
                   {"modes", modes},
                   {"score", history_score_json(r)}});
  }
  json doc = {{"store", name}, {"runs", arr}};
  std::printf("%s\n", doc.dump(2).c_str());
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
    if (const int rc = write_history_page(*s.value(), runs.value(), o.report, o.json);
        rc != kExitOk)
      return rc;
    if (names_stdout(o.report)) return kExitOk;  // --report -: the page is the output
  }
  if (o.json) {
    print_json(runs.value(), s.value()->name());
    return kExitOk;
  }
  fmt::print("{} ({} newest runs shown, newest first)\n", s.value()->name(), runs->size());
  fmt::print("{:>5}  {:<20}  {:<12} {:<28} {:<8} {:<9} {:>6} {:>10} {:>10} {:>10} {:>10}  {}\n",
             "id", "created (UTC)", "host", "device", "mode", "of run", "frames", "core p50",
             "core p99", "fence p50", "fence p99", "score [95% interval]");
  for (const auto& r : runs.value()) {
    if (r.modes.empty()) {
      fmt::print("{:>5}  {:<20}  {:<12.12} {:<28.28} {:<8} {:<9}  (no latency mode)\n", r.id,
                 r.created_utc, r.hostname, r.device, "-", r.settings_mode);
    }
    for (const auto& m : r.modes) {
      if (m.mode == "capture") {
        fmt::print(
            "{:>5}  {:<20}  {:<12.12} {:<28.28} {:<8} {:<9} {:>6}  between presents p50 {} "
            "p99 {}, GPU busy p50 {} p99 {}{}\n",
            r.id, r.created_utc, r.hostname, r.device, m.mode, r.settings_mode, m.frames,
            us(m.between_presents_p50), us(m.between_presents_p99), us(m.gpu_busy_p50),
            us(m.gpu_busy_p99), r.partial ? "  partial" : "");
        continue;
      }
      // The score once per run, on its first row; its components are the
      // core p50 and p99 of the rows beside it.
      const std::string score = &m == &r.modes.front() ? history_score_cell(r.score) : "";
      std::string line = fmt::format(
          "{:>5}  {:<20}  {:<12.12} {:<28.28} {:<8} {:<9} {:>6} {:>10} {:>10} {:>10} {:>10}  "
          "{:<22}{}",
          r.id, r.created_utc, r.hostname, r.device, m.mode, r.settings_mode, m.frames,
          us(m.core_p50), us(m.core_p99), us(m.fence_p50), us(m.fence_p99), score,
          r.partial ? "  partial" : "");
      line.erase(line.find_last_not_of(' ') + 1);
      fmt::print("{}\n", line);
    }
  }
  fmt::print(
      "latency in us; '-' = no measured value. score: the latency score (docs/score.md; its "
      "formula in --json) from the core p50 and p99 of baseline and loaded beside it, with its "
      "95% interval over the run's blocks.\n");
  print_score_reasons(runs.value());
  fmt::print("`latlab compare ID ID` compares two runs.\n");
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
