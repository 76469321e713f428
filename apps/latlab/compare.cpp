// latlab compare A B [--store DB] [--alpha 0.05] [--min-effect-pct 5]
//                    [--min-effect-us 1] [--fail-on-regression PCT] [--json]
// A and B are result files or run ids in the store (docs/compare.md).
// Exit codes: 0 compared (changes or not), 2 bad input (unreadable or invalid
// result, unknown run id, store cannot be opened, runs with nothing in
// common), 5 --fail-on-regression: a significant regression at least PCT.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>

#include "cli_checks.hpp"
#include "command.hpp"
#include "report/result_reader.hpp"
#include "report/run_comparison.hpp"
#include "report/store/results_store.hpp"

namespace latlab::cli {
namespace {

struct CompareCliOptions {
  std::string a, b;
  std::string store;
  double alpha = 0.05;
  double min_effect_pct = 5.0;
  double min_effect_us = 1.0;
  double fail_on_regression = -1;  // < 0: not given
  bool json = false;
  int section = -1;  // --section: the device section of a several-device run (< 0: not given)
};

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() < 19 && s.find_first_not_of("0123456789") == std::string::npos;
}

// A side: an existing file is read as a result; otherwise digits are a run id
// in the store (opened once, on first need).
Result<ReadResult> load_side(const std::string& arg, const std::string& store_location,
                             std::unique_ptr<store::ResultsStore>& s) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(arg, ec)) return read_result_file(arg);
  if (!all_digits(arg)) {
    return make_error(fmt::format("'{}' is neither a result file nor a run id of the store", arg));
  }
  if (!s) {
    Result<std::unique_ptr<store::ResultsStore>> opened =
        store::ResultsStore::open(store_location, store::ResultsStore::Access::read);
    if (!opened) return opened.error();
    s = std::move(opened.value());
  }
  return s->load(std::stoll(arg));
}

// A several-device run (`devices_run`): the section --section names, or the
// top-level device with a note saying so.
Result<ReadResult> pick_section(Result<ReadResult> r, const char* side, int section) {
  if (!r) return r;
  if (section >= 0) {
    Result<ReadResult> picked = select_device_section(r.value(), static_cast<uint32_t>(section));
    if (!picked) return make_error(fmt::format("--section {}: {}", section, picked.error().message));
    return picked;
  }
  if (r->device_sections.size() > 1) {
    const uint32_t top = r->top_level_section.value_or(0);
    std::fprintf(stderr,
                 "latlab compare: %s holds %zu device sections; comparing its top-level device "
                 "(section %u: %s); choose another with --section N\n",
                 side, r->device_sections.size(), top, r->device.name.c_str());
  }
  return r;
}

int compare(const CompareCliOptions& o) {
  std::unique_ptr<store::ResultsStore> s;
  Result<ReadResult> a = pick_section(load_side(o.a, o.store, s), "A", o.section);
  if (!a) {
    std::fprintf(stderr, "latlab compare: A: %s\n", a.error().message.c_str());
    return kExitUsage;
  }
  Result<ReadResult> b = pick_section(load_side(o.b, o.store, s), "B", o.section);
  if (!b) {
    std::fprintf(stderr, "latlab compare: B: %s\n", b.error().message.c_str());
    return kExitUsage;
  }
  CompareOptions co;
  co.alpha = o.alpha;
  co.min_effect = o.min_effect_pct / 100.0;
  co.min_effect_us = o.min_effect_us;
  if (o.fail_on_regression >= 0) co.fail_on_regression_pct = o.fail_on_regression;
  auto name = [&](const std::string& arg) {
    return all_digits(arg) && !std::filesystem::is_regular_file(arg) ? "run " + arg : arg;
  };
  Result<Comparison> c = compare_results(a.value(), b.value(), name(o.a), name(o.b), co);
  if (!c) {
    std::fprintf(stderr, "latlab compare: %s\n", c.error().message.c_str());
    return kExitUsage;
  }
  if (o.json) {
    std::fputs(comparison_json(c.value()).c_str(), stdout);
  } else {
    std::fputs(format_comparison(c.value()).c_str(), stdout);
  }
  return c->fails ? kExitRegression : kExitOk;
}

CommandRunner setup(CLI::App& app) {
  auto opts = std::make_shared<CompareCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "compare",
      "Compare two runs (result files or store run ids): p50/p99 per stage and observer, the "
      "shift with its interval, significance over blocks");
  sub->add_option("A", opts->a, "Reference: result file or run id")->required();
  sub->add_option("B", opts->b, "Candidate: result file or run id")->required();
  sub->add_option("--store", opts->store,
                  "Store of the run ids (default: $XDG_DATA_HOME/latlab/results.db)");
  sub->add_option("--alpha", opts->alpha, "Two-sided level of the test; interval at 1-alpha")
      ->check(real_in(0.0001, 0.5))
      ->capture_default_str();
  sub->add_option("--min-effect-pct", opts->min_effect_pct,
                  "Smallest shift flagged, % of A's median block value")
      ->check(real_in(0.0, 1000.0))
      ->capture_default_str();
  sub->add_option("--min-effect-us", opts->min_effect_us, "Smallest shift flagged, us")
      ->check(real_in(0.0, 1e9))
      ->capture_default_str();
  sub->add_option("--fail-on-regression", opts->fail_on_regression,
                  "Exit 5 when a significant regression is at least PCT %")
      ->check(real_in(0.0, 1e6));
  sub->add_flag("--json", opts->json, "Print the comparison as JSON");
  sub->add_option("--section", opts->section,
                  "Runs of several devices (run --device all): compare device section N of both "
                  "(default: each run's top-level device, the first that ran)")
      ->transform(whole_in(0, 1000));
  // A run id is read from the store; the default one needs a home.
  auto check = [opts] {
    const auto run_id = [](const std::string& side) {
      std::error_code ec;
      return !std::filesystem::is_regular_file(side, ec) && all_digits(side);
    };
    if (!run_id(opts->a) && !run_id(opts->b)) return static_cast<int>(kExitOk);
    return store_location_exit("latlab compare", opts->store);
  };
  return {check, [opts] { return compare(*opts); }};
}

const RegisterCommand kRegister{{"compare", setup, 62}};

}  // namespace
}  // namespace latlab::cli
