#include "report/run_comparison.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "latlab/frame_markers.hpp"

namespace latlab {

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
    case ChangeCall::no_data:
      return "no_data";
  }
  return "?";
}

namespace {

// What compare looks at: the stages, then the observers of completion.
// Diagnostics (timer lateness, clock map error) stay out.
std::vector<std::pair<std::string, std::string>> compared_series() {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 0; i < kStageCount; ++i)
    out.emplace_back(std::string(to_string(static_cast<Series>(i))), "stage");
  out.emplace_back("core_latency", "observer");
  out.emplace_back("fence_latency", "observer");
  out.emplace_back("poll_latency", "observer");
  return out;
}

double stat_of(const Distribution& d, const std::string& statistic) {
  return statistic == "p50" ? d.p50 : d.p99;
}

std::optional<double> total_stat(const ReadMode& m, const std::string& series,
                                 const std::string& statistic) {
  const Distribution* d = m.total.find(series);
  if (d == nullptr || d->empty()) return std::nullopt;
  return stat_of(*d, statistic);
}

std::vector<double> block_stats(const ReadMode& m, const std::string& series,
                                const std::string& statistic) {
  std::vector<double> out;
  for (const ReadBlock& b : m.blocks) {
    const Distribution* d = b.series.find(series);
    if (d != nullptr && !d->empty()) out.push_back(stat_of(*d, statistic));
  }
  return out;
}

void judge(CompareRow& r, const CompareOptions& o) {
  if (r.a_blocks.empty() || r.b_blocks.empty()) {
    r.call = ChangeCall::no_data;
    return;
  }
  r.test = shift_test(r.a_blocks, r.b_blocks, o.alpha);
  r.a_block_median = median_of(r.a_blocks);
  if (*r.a_block_median > 0) r.relative = r.test.shift / *r.a_block_median;
  const bool significant = r.test.p_value < o.alpha;
  const bool big_abs = std::abs(r.test.shift) >= o.min_effect_us;
  const bool big_rel = r.relative && std::abs(*r.relative) >= o.min_effect;
  if (r.test.min_p_value >= o.alpha) {
    r.call = ChangeCall::too_few_blocks;
  } else if (significant && big_abs && big_rel) {
    r.call = r.test.shift > 0 ? ChangeCall::regression : ChangeCall::improvement;
  } else {
    r.call = ChangeCall::no_change;
  }
  if (o.fail_on_regression_pct && significant && big_abs && r.test.shift > 0 && r.relative &&
      *r.relative * 100.0 >= *o.fail_on_regression_pct) {
    r.fails = true;
  }
}

void note_differences(const ReadResult& a, const ReadResult& b, std::vector<std::string>& notes) {
  auto differ = [&](const char* what, const std::string& x, const std::string& y) {
    if (x != y) notes.push_back(fmt::format("{} differs: '{}' vs '{}'", what, x, y));
  };
  differ("host", a.machine.hostname, b.machine.hostname);
  differ("device", a.device.name, b.device.name);
  differ("driver", a.device.driver, b.device.driver);
  differ("backend", a.device.backend, b.device.backend);
  differ("latlab version", a.tool_version, b.tool_version);
  if (a.partial) notes.push_back("A is a partial run: " + a.partial_reason);
  if (b.partial) notes.push_back("B is a partial run: " + b.partial_reason);
}

}  // namespace

Result<Comparison> compare_results(const ReadResult& a, const ReadResult& b, std::string a_name,
                                   std::string b_name, const CompareOptions& options) {
  for (const auto* r : {&a, &b}) {
    if (r->kind != "latency_run") {
      return make_error(fmt::format("{} is a {}: compare needs latency runs (their blocks)",
                                    r == &a ? a_name : b_name, r->kind));
    }
  }
  Comparison c;
  c.a_name = std::move(a_name);
  c.b_name = std::move(b_name);
  c.options = options;
  note_differences(a, b, c.notes);
  for (const ReadMode& ma : a.modes) {
    const ReadMode* mb = b.find_mode(ma.name);
    if (mb == nullptr || !mb->available || !ma.available) {
      c.notes.push_back(fmt::format("mode {} is not available on both sides: not compared", ma.name));
      continue;
    }
    const ReadWorkload& wa = ma.workload;
    const ReadWorkload& wb = mb->workload;
    if (wa.passes != wb.passes || wa.complexity != wb.complexity || wa.width != wb.width ||
        wa.height != wb.height || wa.form != wb.form) {
      c.notes.push_back(fmt::format(
          "{} workload differs: {} passes, complexity {}, {}x{} {} vs {} passes, complexity {}, "
          "{}x{} {}",
          ma.name, wa.passes, wa.complexity, wa.width, wa.height, wa.form, wb.passes,
          wb.complexity, wb.width, wb.height, wb.form));
    }
    for (const auto& [series, role] : compared_series()) {
      for (const char* statistic : {"p50", "p99"}) {
        CompareRow r;
        r.mode = ma.name;
        r.series = series;
        r.role = role;
        r.statistic = statistic;
        r.a_total = total_stat(ma, series, statistic);
        r.b_total = total_stat(*mb, series, statistic);
        r.a_blocks = block_stats(ma, series, statistic);
        r.b_blocks = block_stats(*mb, series, statistic);
        judge(r, options);
        if (r.call == ChangeCall::improvement || r.call == ChangeCall::regression) ++c.changes;
        c.fails = c.fails || r.fails;
        c.rows.push_back(std::move(r));
      }
    }
  }
  for (const ReadMode& mb : b.modes) {
    if (a.find_mode(mb.name) == nullptr)
      c.notes.push_back(fmt::format("mode {} is only in B: not compared", mb.name));
  }
  if (c.rows.empty()) return make_error("the two runs share no available latency mode");
  return c;
}

namespace {

std::string num(std::optional<double> v, int precision = 1) {
  return v ? fmt::format("{:.{}f}", *v, precision) : std::string("-");
}

std::string pct(std::optional<double> v) {
  return v ? fmt::format("{:+.1f}%", *v * 100.0) : std::string("-");
}

}  // namespace

std::string format_comparison(const Comparison& c) {
  std::string out;
  auto o = std::back_inserter(out);
  fmt::format_to(o, "latlab compare: A = {}, B = {}\n", c.a_name, c.b_name);
  fmt::format_to(o,
                 "  samples: blocks (each block's p50 or p99), Mann-Whitney U two-sided, alpha "
                 "{}; shift B - A: Hodges-Lehmann with its {:.0f}% interval; a change is flagged "
                 "when significant and at least {:.1f}% and {} us\n",
                 c.options.alpha, (1 - c.options.alpha) * 100, c.options.min_effect * 100,
                 c.options.min_effect_us);
  for (const std::string& n : c.notes) fmt::format_to(o, "  note: {}\n", n);
  std::string mode;
  for (const CompareRow& r : c.rows) {
    if (r.mode != mode) {
      mode = r.mode;
      fmt::format_to(o,
                     "{}\n  {:<26} {:>4} {:>10} {:>10} {:>10} {:>22} {:>8} {:>9} {:>5}  {}\n",
                     mode, "us", "stat", "A", "B", "shift", "interval", "change", "p", "blocks",
                     "call");
    }
    const std::string interval =
        r.test.ci_low ? fmt::format("[{:.1f}, {:.1f}]", *r.test.ci_low, *r.test.ci_high) : "-";
    const bool tested = r.call != ChangeCall::no_data;
    fmt::format_to(o, "  {:<26} {:>4} {:>10} {:>10} {:>10} {:>22} {:>8} {:>9} {:>2}/{:<2}  {}{}\n",
                   r.series, r.statistic, num(r.a_total), num(r.b_total),
                   tested ? num(r.test.shift) : "-", interval, pct(r.relative),
                   tested ? fmt::format("{:.3g}", r.test.p_value) : "-", r.a_blocks.size(),
                   r.b_blocks.size(), to_string(r.call), r.fails ? "  FAIL" : "");
  }
  fmt::format_to(o, "{} significant change(s) of at least the minimum effect{}\n", c.changes,
                 c.options.fail_on_regression_pct
                     ? fmt::format("; regression gate {}%: {}", *c.options.fail_on_regression_pct,
                                   c.fails ? "FAILED" : "passed")
                     : "");
  return out;
}

std::string comparison_json(const Comparison& c) {
  using json = nlohmann::ordered_json;
  auto opt = [](std::optional<double> v) { return v ? json(*v) : json(nullptr); };
  json rows = json::array();
  for (const CompareRow& r : c.rows) {
    const bool tested = r.call != ChangeCall::no_data;
    rows.push_back({{"mode", r.mode},
                    {"series", r.series},
                    {"role", r.role},
                    {"statistic", r.statistic},
                    {"a_total_us", opt(r.a_total)},
                    {"b_total_us", opt(r.b_total)},
                    {"a_blocks_us", r.a_blocks},
                    {"b_blocks_us", r.b_blocks},
                    {"shift_us", tested ? json(r.test.shift) : json(nullptr)},
                    {"ci_low_us", opt(r.test.ci_low)},
                    {"ci_high_us", opt(r.test.ci_high)},
                    {"a_block_median_us", opt(r.a_block_median)},
                    {"relative", opt(r.relative)},
                    {"u", tested ? json(r.test.u) : json(nullptr)},
                    {"p_value", tested ? json(r.test.p_value) : json(nullptr)},
                    {"exact", r.test.exact},
                    {"min_p_value", tested ? json(r.test.min_p_value) : json(nullptr)},
                    {"call", to_string(r.call)},
                    {"fails", r.fails}});
  }
  json doc = {{"kind", "latlab_comparison"},
              {"a", c.a_name},
              {"b", c.b_name},
              {"method",
               {{"samples", "blocks"},
                {"test", "mann_whitney_u_two_sided"},
                {"shift", "hodges_lehmann"},
                {"alpha", c.options.alpha},
                {"confidence", 1 - c.options.alpha},
                {"min_effect", c.options.min_effect},
                {"min_effect_us", c.options.min_effect_us},
                {"fail_on_regression_pct", opt(c.options.fail_on_regression_pct)}}},
              {"notes", c.notes},
              {"rows", rows},
              {"changes", c.changes},
              {"fails", c.fails}};
  return doc.dump(2) + "\n";
}

}  // namespace latlab
