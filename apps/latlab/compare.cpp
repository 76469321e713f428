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

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli_checks.hpp"
#include "command.hpp"
#include "file_plan.hpp"
#include "page_files.hpp"
#include "report/html/compare_html.hpp"
#include "report/result_reader.hpp"
#include "report/run_comparison.hpp"
#include "report/store/results_store.hpp"

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

// Largest id range one argument may name (a typo such as 1-99999 is refused,
// not loaded).
constexpr int64_t kMaxRange = 1000;

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() < 19 && s.find_first_not_of("0123456789") == std::string::npos;
}

// One argument: an existing file, a run id, or a range of ids "N-M" (both
// ends included).
struct SideItem {
  std::string file;              // set: a result file
  int64_t first = 0, last = -1;  // else ids first..last of the store
};

Result<SideItem> parse_item(const std::string& arg) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(arg, ec)) return SideItem{arg};
  if (all_digits(arg)) return SideItem{"", std::stoll(arg), std::stoll(arg)};
  const size_t dash = arg.find('-');
  if (dash != std::string::npos && all_digits(arg.substr(0, dash)) &&
      all_digits(arg.substr(dash + 1))) {
    const int64_t first = std::stoll(arg.substr(0, dash)), last = std::stoll(arg.substr(dash + 1));
    if (last < first) return make_error(fmt::format("'{}': the range ends before it starts", arg));
    if (last - first >= kMaxRange)
      return make_error(fmt::format("'{}': a range names at most {} runs", arg, kMaxRange));
    return SideItem{"", first, last};
  }
  return make_error(fmt::format(
      "'{}' is neither a result file, a run id nor a range of run ids (12-14) of the store", arg));
}

size_t item_runs(const SideItem& i) {
  return i.file.empty() ? static_cast<size_t>(i.last - i.first + 1) : 1;
}

// A several-device run (`devices_run`): the section --section names, or the
// top-level device with a note saying so.
Result<RunResult> pick_section(Result<RunResult> r, const std::string& name, int section) {
  if (!r) return r;
  if (section >= 0) {
    Result<RunResult> picked = select_device_section(r.value(), static_cast<uint32_t>(section));
    if (!picked)
      return make_error(fmt::format("--section {}: {}", section, picked.error().message));
    return picked;
  }
  if (r->sections.size() > 1) {
    const RunResult& top = r->top_level();
    std::fprintf(stderr,
                 "latlab compare: %s holds %zu device sections; comparing its top-level device "
                 "(section %u: %s); choose another with --section N\n",
                 name.c_str(), r->sections.size(), r->top_section.value_or(0),
                 top.device.name.c_str());
  }
  return r;
}

// A result file's typed result (compare needs no per-frame series).
Result<RunResult> read_run(const std::string& path) {
  Result<ResultDocument> doc = read_result_file(path, ReadOptions{.per_frame = false});
  if (!doc) return doc.error();
  return std::move(doc->result);
}

// The runs of one side, read; the store opened once, on first need.
struct LoadedSide {
  std::vector<RunResult> runs;
  std::vector<std::string> names;
};

Result<LoadedSide> load_side(const std::vector<SideItem>& items, const CompareCliOptions& o,
                             std::unique_ptr<store::ResultsStore>& s) {
  LoadedSide out;
  for (const SideItem& item : items) {
    if (!item.file.empty()) {
      Result<RunResult> r = pick_section(read_run(item.file), item.file, o.section);
      if (!r) return r.error();
      out.runs.push_back(std::move(r.value()));
      out.names.push_back(item.file);
      continue;
    }
    if (!s) {
      Result<std::unique_ptr<store::ResultsStore>> opened =
          store::ResultsStore::open(o.store, store::ResultsStore::Access::read);
      if (!opened) return opened.error();
      s = std::move(opened.value());
    }
    for (int64_t id = item.first; id <= item.last; ++id) {
      const std::string name = fmt::format("run {}", id);
      Result<RunResult> r = pick_section(s->load(id), name, o.section);
      if (!r) return r.error();
      out.runs.push_back(std::move(r.value()));
      out.names.push_back(name);
    }
  }
  return out;
}

Result<std::vector<SideItem>> parse_side(const std::vector<std::string>& args) {
  std::vector<SideItem> out;
  for (const std::string& arg : args) {
    Result<SideItem> item = parse_item(arg);
    if (!item) return item.error();
    out.push_back(std::move(item.value()));
  }
  return out;
}

// The sides, parsed: what compare() loads.
struct ComparePlan {
  std::vector<SideItem> a, b;
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
  Result<std::vector<SideItem>> a_items = parse_side(a_args);
  Result<std::vector<SideItem>> b_items = a_items ? parse_side(b_args) : a_items;
  if (!a_items || !b_items) {
    std::fprintf(stderr, "latlab compare: %s\n",
                 (!a_items ? a_items : b_items).error().message.c_str());
    return kExitUsage;
  }
  size_t na = 0, nb = 0;
  for (const SideItem& i : a_items.value()) na += item_runs(i);
  for (const SideItem& i : b_items.value()) nb += item_runs(i);
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
  for (const std::vector<SideItem>* side : {&plan.a, &plan.b}) {
    for (const SideItem& i : *side) {
      if (i.file.empty())
        files.store = o.store;
      else
        files.inputs.push_back(i.file);
    }
  }
  if (files.store) {
    if (const int rc = store_location_exit("latlab compare", o.store); rc != kExitOk) return rc;
  }
  return o.report.empty() ? kExitOk : check_page_files("latlab compare", files);
}

int compare(const CompareCliOptions& o, const ComparePlan& plan) {
  std::unique_ptr<store::ResultsStore> s;
  Result<LoadedSide> a = load_side(plan.a, o, s);
  if (!a) {
    std::fprintf(stderr, "latlab compare: A: %s\n", a.error().message.c_str());
    return kExitUsage;
  }
  Result<LoadedSide> b = load_side(plan.b, o, s);
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
  auto side = [](const LoadedSide& l) {
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
    if (const int rc = write_page("latlab compare", o.report, page, o.json); rc != kExitOk)
      return rc;
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
