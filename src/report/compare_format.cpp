// `latlab compare`'s readable table and its JSON document (docs/compare.md).
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "report/run_comparison.hpp"
#include "report/score_compare.hpp"

namespace latlab {

const char* to_string(CompareUnit u) { return u == CompareUnit::runs ? "runs" : "blocks"; }

const char* to_string(ChangeCall c) {
  switch (c) {
    case ChangeCall::no_change:
      return "no_significant_change";
    case ChangeCall::improvement:
      return "improvement";
    case ChangeCall::regression:
      return "regression";
    case ChangeCall::too_few_blocks:
      return "too_few_blocks";
    case ChangeCall::too_few_runs:
      return "too_few_runs";
    case ChangeCall::no_data:
      return "no_data";
  }
  return "?";
}

bool tested(const CompareRow& r) {
  return r.call != ChangeCall::no_data && r.call != ChangeCall::too_few_blocks &&
         r.call != ChangeCall::too_few_runs;
}

std::string run_label(char side, size_t index, size_t runs) {
  return runs == 1 ? std::string(1, side) : fmt::format("{}{}", side, index + 1);
}

namespace {

using json = nlohmann::ordered_json;

std::string num(std::optional<double> v, int precision = 1) {
  return v ? fmt::format("{:.{}f}", *v, precision) : std::string("-");
}

std::string pct(std::optional<double> v) {
  return v ? fmt::format("{:+.1f}%", *v * 100.0) : std::string("-");
}

std::string side_names(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

size_t samples_a(const CompareRow& r, CompareUnit u) {
  return u == CompareUnit::runs ? r.a_runs.size() : r.a_blocks.size();
}
size_t samples_b(const CompareRow& r, CompareUnit u) {
  return u == CompareUnit::runs ? r.b_runs.size() : r.b_blocks.size();
}

}  // namespace

std::string format_comparison(const Comparison& c) {
  std::string out;
  auto o = std::back_inserter(out);
  fmt::format_to(o, "latlab compare: A = {}; B = {}\n", side_names(c.a_names),
                 side_names(c.b_names));
  if (c.unit == CompareUnit::runs) {
    fmt::format_to(o,
                   "  unit: runs ({} A, {} B): each run's p50 or p99 over all its measured frames; "
                   "Welch's t test, two-sided; shift B - A: difference of the runs' means with its "
                   "{:.0f}% interval\n",
                   c.a_names.size(), c.b_names.size(), (1 - c.options.alpha) * 100);
  } else {
    fmt::format_to(o,
                   "  unit: blocks (each block's p50 or p99); Mann-Whitney U two-sided; shift B - "
                   "A: Hodges-Lehmann with its {:.0f}% interval\n",
                   (1 - c.options.alpha) * 100);
  }
  fmt::format_to(o,
                 "  a change is called when p adjusted over the {} tested rows (Holm) < {} and the "
                 "shift is at least {:.1f}% and {} us\n",
                 c.tested_rows, c.options.alpha, c.options.min_effect * 100,
                 c.options.min_effect_us);
  for (const std::string& n : c.notes) fmt::format_to(o, "  note: {}\n", n);
  std::string mode;
  for (const CompareRow& r : c.rows) {
    if (r.mode != mode) {
      mode = r.mode;
      fmt::format_to(o,
                     "{}\n  {:<26} {:>4} {:>10} {:>10} {:>10} {:>22} {:>8} {:>9} {:>9} {:>7}  {}\n",
                     mode, "us", "stat", "A", "B", "shift", "interval", "change", "p", "p adj",
                     c.unit == CompareUnit::runs ? "runs" : "blocks", "call");
    }
    const std::string interval =
        r.ci_low ? fmt::format("[{:.1f}, {:.1f}]", *r.ci_low, *r.ci_high) : "-";
    const bool has_p = tested(r);
    fmt::format_to(o,
                   "  {:<26} {:>4} {:>10} {:>10} {:>10} {:>22} {:>8} {:>9} {:>9} {:>3}/{:<3}  "
                   "{}{}\n",
                   r.series, r.statistic, num(r.a_total), num(r.b_total),
                   r.call != ChangeCall::no_data ? num(r.shift) : "-", interval, pct(r.relative),
                   has_p ? fmt::format("{:.3g}", r.p_value) : "-",
                   has_p ? fmt::format("{:.3g}", r.p_adjusted) : "-", samples_a(r, c.unit),
                   samples_b(r, c.unit), to_string(r.call), r.fails ? "  FAIL" : "");
  }
  out += format_compare_scores(c);
  fmt::format_to(o, "{} significant change(s) of at least the minimum effect{}\n", c.changes,
                 c.options.fail_on_regression_pct
                     ? fmt::format("; regression gate {}%: {}", *c.options.fail_on_regression_pct,
                                   c.fails ? "FAILED" : "passed")
                     : "");
  return out;
}

std::string comparison_json(const Comparison& c) {
  auto opt = [](std::optional<double> v) {
    return v && std::isfinite(*v) ? json(*v) : json(nullptr);
  };
  const bool runs = c.unit == CompareUnit::runs;
  json rows = json::array();
  for (const CompareRow& r : c.rows) {
    const bool has_p = tested(r);
    const bool has_shift = r.call != ChangeCall::no_data;
    json row = {{"mode", r.mode},
                {"series", r.series},
                {"role", r.role},
                {"statistic", r.statistic},
                {"a_total_us", opt(r.a_total)},
                {"b_total_us", opt(r.b_total)},
                {"a_runs_us", r.a_runs},
                {"b_runs_us", r.b_runs},
                {"a_blocks_us", r.a_blocks},
                {"b_blocks_us", r.b_blocks},
                {"shift_us", has_shift ? json(r.shift) : json(nullptr)},
                {"ci_low_us", opt(r.ci_low)},
                {"ci_high_us", opt(r.ci_high)},
                {"a_reference_us", opt(r.a_reference)},
                {"relative", opt(r.relative)},
                {"p_value", has_p ? json(r.p_value) : json(nullptr)},
                {"p_adjusted", has_p ? json(r.p_adjusted) : json(nullptr)}};
    if (runs) {
      row["t"] = has_p && r.run_test.se > 0 ? json(r.run_test.t) : json(nullptr);
      row["df"] = has_p && r.run_test.se > 0 ? json(r.run_test.df) : json(nullptr);
    } else {
      row["u"] = has_shift ? json(r.block_test.u) : json(nullptr);
      row["exact"] = r.block_test.exact;
      row["min_p_value"] = has_shift ? json(r.block_test.min_p_value) : json(nullptr);
    }
    row["call"] = to_string(r.call);
    row["fails"] = r.fails;
    rows.push_back(std::move(row));
  }
  json doc = {{"kind", "latlab_comparison"},
              {"a", c.a_names},
              {"b", c.b_names},
              {"method",
               {{"unit", to_string(c.unit)},
                {"run_to_run_noise_in_test", runs},
                {"samples", runs ? "each run's total statistic over its measured frames"
                                 : "each measured block's statistic"},
                {"test", runs ? "welch_t_two_sided" : "mann_whitney_u_two_sided"},
                {"shift", runs ? "difference_of_means" : "hodges_lehmann"},
                {"family", "holm"},
                {"tested_rows", c.tested_rows},
                {"alpha", c.options.alpha},
                {"confidence", 1 - c.options.alpha},
                {"min_effect", c.options.min_effect},
                {"min_effect_us", c.options.min_effect_us},
                {"fail_on_regression_pct", opt(c.options.fail_on_regression_pct)},
                {"allow_different_settings", c.options.allow_different_settings}}},
              {"notes", c.notes},
              {"rows", rows},
              {"scores", compare_scores_json(c)},
              {"changes", c.changes},
              {"fails", c.fails}};
  return doc.dump(2) + "\n";
}

}  // namespace latlab
