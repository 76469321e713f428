// latlab compare A B | A1 A2 A3... --vs B1 B2 B3... [--store DB] [--alpha 0.01]
//                [--min-effect-pct 5] [--min-effect-us 1] [--fail-on-regression PCT]
//                [--allow-different-settings] [--section N] [--json]
// Each run is a result file, a run id of the store, or a range of ids (12-14)
// (docs/compare.md). Exit codes: 0 compared (changes or not), 2 bad input
// (unreadable or invalid result, unknown run id, store cannot be opened, runs
// with nothing in common or measured with different settings, blocks of
// different sizes tested against each other, --fail-on-regression with fewer
// than 3 runs a side and no --min-effect-pct), 5 --fail-on-regression: a
// regression at least PCT.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "cli_options.hpp"
#include "command.hpp"
#include "report/reporters/reporters.hpp"

namespace latlab::cli {
namespace {

struct CompareCliOptions {
  std::vector<std::string> runs;  // positional: A B, or A's runs when --vs is given
  std::vector<std::string> vs;    // --vs: B's runs
  std::string store;
  double alpha = CompareOptions{}.alpha;
  double min_effect_pct = 5.0;
  bool min_effect_pct_given = false;
  double min_effect_us = 1.0;
  double fail_on_regression = -1;  // < 0: not given
  bool allow_different_settings = false;
  bool json = false;
  int section = -1;  // --section: the device section of a several-device run (< 0: not given)
  // --report: the comparison page ("" = none)
  std::string report;
};

// The sides, parsed: what compare() loads.
struct ComparePlan {
  std::vector<RunSource> a, b;
};

// The arguments into the plan, reading nothing: bad usage (kExitUsage, after
// saying why) or kExitOk. A run id needs a store; the default one a home.
int plan_compare(const CompareCliOptions& o, ComparePlan& plan) {
  std::vector<std::string> a_args = o.runs, b_args = o.vs;
  if (b_args.empty()) {
    if (a_args.size() != 2) {
      std::fprintf(stderr,
                   "latlab compare: give A and B (latlab compare A B), or several runs a side "
                   "with --vs (latlab compare A1 A2 A3 --vs B1 B2 B3)\n");
      return kExitUsage;
    }
    b_args = {a_args[1]};
    a_args.resize(1);
  }
  Result<std::vector<RunSource>> a_items = parse_run_sources(a_args);
  Result<std::vector<RunSource>> b_items = a_items ? parse_run_sources(b_args) : a_items;
  if (!a_items || !b_items) {
    std::fprintf(stderr, "latlab compare: %s\n",
                 (!a_items ? a_items : b_items).error().message.c_str());
    return kExitUsage;
  }
  size_t na = 0, nb = 0;
  for (const RunSource& i : a_items.value()) na += i.runs();
  for (const RunSource& i : b_items.value()) nb += i.runs();
  const bool blocks_unit = na < kMinRunsPerSide || nb < kMinRunsPerSide;
  if (o.fail_on_regression >= 0 && blocks_unit && !o.min_effect_pct_given) {
    std::fprintf(stderr,
                 "latlab compare: --fail-on-regression with fewer than %zu runs a side (A: %zu, "
                 "B: %zu) needs --min-effect-pct: the test is then over blocks and leaves "
                 "run-to-run noise out, so the gate must be told the smallest change that is real "
                 "on this machine. Measure the spread of A/A pairs (docs/compare.md, "
                 "bench/compare_aa.sh) and set --min-effect-pct above it, or compare at least %zu "
                 "runs a side\n",
                 kMinRunsPerSide, na, nb, kMinRunsPerSide);
    return kExitUsage;
  }
  plan.a = std::move(a_items.value());
  plan.b = std::move(b_items.value());
  PageFiles files{o.report, o.json, {}, std::nullopt};
  for (const std::vector<RunSource>* side : {&plan.a, &plan.b}) {
    for (const RunSource& i : *side) {
      if (i.file.empty())
        files.store = o.store;
      else
        files.inputs.push_back(i.file);
    }
  }
  if (files.store) {
    if (const int rc = store_location_exit("latlab compare", o.store); rc != kExitOk) return rc;
  }
  return o.report.empty() ? kExitOk
                          : exit_code("latlab compare", check_page_files(files), kExitUsage);
}

int compare(const CompareCliOptions& o, const ComparePlan& plan) {
  std::unique_ptr<store::ResultsStore> s;
  const RunLoading how{o.store, o.section, [](const std::string& note) {
                         std::fprintf(stderr, "latlab compare: %s\n", note.c_str());
                       }};
  Result<LoadedRuns> a = load_runs(plan.a, how, s);
  if (!a) {
    std::fprintf(stderr, "latlab compare: A: %s\n", a.error().message.c_str());
    return kExitUsage;
  }
  Result<LoadedRuns> b = load_runs(plan.b, how, s);
  if (!b) {
    std::fprintf(stderr, "latlab compare: B: %s\n", b.error().message.c_str());
    return kExitUsage;
  }
  CompareOptions co;
  co.alpha = o.alpha;
  co.min_effect = o.min_effect_pct / 100.0;
  co.min_effect_us = o.min_effect_us;
  co.allow_different_settings = o.allow_different_settings;
  if (o.fail_on_regression >= 0) co.fail_on_regression_pct = o.fail_on_regression;
  auto side = [](const LoadedRuns& l) {
    CompareSide cs;
    for (const RunResult& r : l.runs) cs.runs.push_back(&r);
    cs.names = l.names;
    return cs;
  };
  const CompareSide side_a = side(a.value()), side_b = side(b.value());
  Result<Comparison> c = compare_sides(side_a, side_b, co);
  if (!c) {
    std::fprintf(stderr, "latlab compare: %s\n", c.error().message.c_str());
    return kExitUsage;
  }
  if (o.json) {
    std::fputs(comparison_json(c.value()).c_str(), stdout);
  } else if (!names_stdout(o.report)) {  // --report -: the page is the output
    std::fputs(format_comparison(c.value()).c_str(), stdout);
  }
  // Written whatever the calls, also when the gate fails (exit 5).
  if (!o.report.empty()) {
    const std::string page = render_compare_html(c.value(), side_a, side_b);
    const Result<void> w =
        write_page(o.report, page, o.json || names_stdout(o.report) ? stderr : stdout);
    if (const int rc = exit_code("latlab compare", w, kExitWriteFailed); rc != kExitOk) return rc;
  }
  return c->fails ? kExitRegression : kExitOk;
}

CommandRunner setup(CLI::App& app) {
  auto opts = std::make_shared<CompareCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "compare",
      "Compare runs (result files, store run ids or id ranges): p50/p99 per stage and observer, "
      "the shift with its interval, a family-wise significance call; over runs with at least 3 a "
      "side (A1 A2 A3 --vs B1 B2 B3), else over blocks");
  sub->add_option("RUN", opts->runs,
                  "A and B; or, with --vs, A's runs: result files, run ids, id ranges (12-14)")
      ->required();
  sub->add_option("--vs", opts->vs, "B's runs (then every RUN before --vs is A's)");
  sub->add_option("--store", opts->store,
                  "Store of the run ids (default: $XDG_DATA_HOME/latlab/results.db)");
  sub->add_option("--alpha", opts->alpha,
                  "Family-wise level over the compared rows (Holm); intervals at 1-alpha")
      ->check(real_in(0.0001, 0.5))
      ->capture_default_str();
  sub->add_option("--min-effect-pct", opts->min_effect_pct,
                  "Smallest shift called, % of A's reference (its median block or mean run "
                  "value); with fewer than 3 runs a side --fail-on-regression needs it given")
      ->check(real_in(0.0, 1000.0))
      ->capture_default_str();
  sub->add_option("--min-effect-us", opts->min_effect_us, "Smallest shift called, us")
      ->check(real_in(0.0, 1e9))
      ->capture_default_str();
  sub->add_option("--fail-on-regression", opts->fail_on_regression,
                  "Exit 5 when a row called a regression is at least PCT %")
      ->check(real_in(0.0, 1e6));
  sub->add_flag("--allow-different-settings", opts->allow_different_settings,
                "Compare runs measured with different settings (mode asked, interval range, "
                "workload, CPU step cost) as an intended change; blocks of different sizes are "
                "still not tested against each other");
  sub->add_flag("--json", opts->json, "Print the comparison as JSON");
  sub->add_option("--report", opts->report,
                  "Also write the comparison as one self-contained HTML page (atomically; "
                  "'-' for stdout)");
  sub->add_option("--section", opts->section,
                  "Runs of several devices (run --device all): compare device section N of every "
                  "run (default: each run's top-level device, the first that ran)")
      ->transform(whole_in(0, 1000));
  auto plan = std::make_shared<ComparePlan>();
  auto check = [opts, sub, plan] {
    opts->min_effect_pct_given = sub->count("--min-effect-pct") > 0;
    return plan_compare(*opts, *plan);
  };
  return {check, [opts, plan] { return compare(*opts, *plan); }};
}

const RegisterCommand kRegister{{"compare", setup, 62}};

}  // namespace
}  // namespace latlab::cli
