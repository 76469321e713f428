#include "report/run_comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "latlab/bench/frame_markers.hpp"

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

namespace {

using json = nlohmann::ordered_json;

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

// One run of a side, with the name it is known by and its side's label
// ("A2": the second run of A).
struct NamedRun {
  const ReadResult* r;
  std::string name;
  std::string label;
  std::string load_source;  // Loaded's complexity: "calibrated", "given", "" (unknown)
};

// `load_calibration.source` of the run, or of its device section when one
// was picked: whether Loaded's complexity was calibrated or given.
std::string load_source_of(const ReadResult& r) {
  // Without `per_frame` (most of a long run's bytes; the reader skips it too):
  // its tree was several times the file (237 MiB peak for two 32 MiB results).
  const json::parser_callback_t skip_per_frame = [](int depth, json::parse_event_t event,
                                                    json& parsed) {
    return !(depth == 1 && event == json::parse_event_t::key && parsed == "per_frame");
  };
  const json doc = json::parse(r.text, skip_per_frame, false);
  auto member = [](const json* j, const char* key) -> const json* {
    return j != nullptr && j->is_object() && j->contains(key) ? &j->at(key) : nullptr;
  };
  const json* res = &doc;
  if (!r.device_sections.empty() && r.top_level_section) {
    const json* sections = member(member(&doc, "devices_run"), "sections");
    const size_t i = *r.top_level_section;
    res = sections != nullptr && sections->is_array() && i < sections->size()
              ? member(&sections->at(i), "result")
              : nullptr;
  }
  const json* source = member(member(res, "load_calibration"), "source");
  return source != nullptr && source->is_string() ? source->get<std::string>() : "";
}

std::string run_label(const NamedRun& n) {
  return n.name == n.label ? n.label : fmt::format("{} '{}'", n.label, n.name);
}

// The planned size of a run's blocks of one mode: the largest frames_run
// (earlier blocks take the remainder, a partial run's last block is cut).
uint64_t block_size(const ReadMode& m) {
  uint64_t s = 0;
  for (const ReadBlock& b : m.blocks) s = std::max(s, b.frames_run);
  return s;
}

// The settings that shape a mode's frames and blocks, as text per item:
// two runs whose items differ measured different things.
std::vector<std::pair<std::string, std::string>> design_of(const NamedRun& n, const ReadMode& m) {
  const ReadResult& r = *n.r;
  std::vector<std::pair<std::string, std::string>> out;
  const json s = json::parse(r.settings_json, nullptr, false);
  auto item = [&](const char* key) -> std::string {
    if (!s.is_object() || !s.contains(key)) return "?";
    return s.at(key).dump();
  };
  // "all" runs the same latency blocks as "latency", then Performance.
  const std::string asked = r.settings_mode == "all" ? "latency" : r.settings_mode;
  out.emplace_back("mode asked (--mode; latency interleaves baseline and loaded blocks)", asked);
  if (s.is_object() && s.contains("interval_ns") && s.at("interval_ns").is_object()) {
    const json& iv = s.at("interval_ns");
    out.emplace_back("interval range (ns)", fmt::format("{}-{}", iv.value("min", json()).dump(),
                                                        iv.value("max", json()).dump()));
  } else {
    out.emplace_back("interval range (ns)", "?");
  }
  out.emplace_back("CPU step cost (--cpu-iterations)", item("cpu_step_iterations"));
  out.emplace_back("poll observer", item("poll_completion"));
  const ReadWorkload& w = m.workload;
  out.emplace_back(m.name + " workload",
                   fmt::format("{} pass(es), {}x{} {}", w.passes, w.width, w.height, w.form));
  // A calibrated Loaded complexity is an outcome of the device, not a setting.
  if (m.name != "loaded" || n.load_source != "calibrated") {
    out.emplace_back(m.name + " complexity", std::to_string(w.complexity));
  }
  return out;
}

// Fields of the runs that should agree: notes when they do not.
void note_field(const std::vector<NamedRun>& a, const std::vector<NamedRun>& b, const char* what,
                std::string (*get)(const ReadResult&), std::vector<std::string>& notes) {
  auto distinct = [&](const std::vector<NamedRun>& side) {
    std::vector<std::string> v;
    for (const NamedRun& n : side) {
      std::string x = get(*n.r);
      if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(std::move(x));
    }
    return v;
  };
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += (s.empty() ? "'" : ", '") + x + "'";
    return s;
  };
  const std::vector<std::string> va = distinct(a), vb = distinct(b);
  if (va.size() > 1)
    notes.push_back(fmt::format("{} differs between A's runs: {}", what, list(va)));
  if (vb.size() > 1)
    notes.push_back(fmt::format("{} differs between B's runs: {}", what, list(vb)));
  if (va != vb) notes.push_back(fmt::format("{} differs: {} vs {}", what, list(va), list(vb)));
}

void note_differences(const std::vector<NamedRun>& a, const std::vector<NamedRun>& b,
                      std::vector<std::string>& notes) {
  note_field(
      a, b, "host", [](const ReadResult& r) { return r.machine.hostname; }, notes);
  note_field(
      a, b, "device", [](const ReadResult& r) { return r.device.name; }, notes);
  note_field(
      a, b, "driver", [](const ReadResult& r) { return r.device.driver; }, notes);
  note_field(
      a, b, "backend", [](const ReadResult& r) { return r.device.backend; }, notes);
  note_field(
      a, b, "latlab version", [](const ReadResult& r) { return r.tool_version; }, notes);
  for (const auto* side : {&a, &b}) {
    for (const NamedRun& n : *side) {
      if (n.r->partial)
        notes.push_back(fmt::format("{} is a partial run: {}", run_label(n), n.r->partial_reason));
    }
  }
}

// Checks that every run measured `mode` the same way; differences are an
// error, or notes with allow_different_settings.
Result<void> check_design(const std::string& mode, const std::vector<NamedRun>& all,
                          const CompareOptions& o, std::vector<std::string>& notes) {
  const NamedRun& first = all.front();
  const auto ref = design_of(first, *first.r->find_mode(mode));
  std::vector<std::string> diffs;
  for (size_t i = 1; i < all.size(); ++i) {
    const auto d = design_of(all[i], *all[i].r->find_mode(mode));
    for (size_t k = 0; k < d.size() && k < ref.size(); ++k) {
      if (d[k] != ref[k]) {
        diffs.push_back(fmt::format("{}: {} {} vs {} {}", ref[k].first, run_label(first),
                                    ref[k].second, run_label(all[i]), d[k].second));
      }
    }
    if (d.size() != ref.size()) {
      diffs.push_back(
          fmt::format("{}: Loaded complexity calibrated in one, given in the other "
                      "({} vs {})",
                      mode, run_label(first), run_label(all[i])));
    }
  }
  if (diffs.empty()) return {};
  if (o.allow_different_settings) {
    for (const std::string& d : diffs)
      notes.push_back(fmt::format("{} settings differ: {}", mode, d));
    return {};
  }
  std::string what;
  for (const std::string& d : diffs) what += "\n  " + d;
  return make_error(fmt::format(
      "the runs measured {} with different settings, so a difference would be the settings' as "
      "much as the system's:{}\n(to compare them anyway, as an intended change, pass "
      "--allow-different-settings)",
      mode, what));
}

// Blocks must be alike in size to be tested against each other: a block's
// p99 depends on its frame count.
Result<void> check_block_sizes(const std::string& mode, const std::vector<NamedRun>& all,
                               CompareUnit unit, std::vector<std::string>& notes) {
  uint64_t lo = UINT64_MAX, hi = 0;
  const NamedRun *lo_run = nullptr, *hi_run = nullptr;
  for (const NamedRun& n : all) {
    const uint64_t s = block_size(*n.r->find_mode(mode));
    if (s < lo) {
      lo = s;
      lo_run = &n;
    }
    if (s > hi) {
      hi = s;
      hi_run = &n;
    }
  }
  if (hi <= lo + 1) return {};
  const std::string what = fmt::format("{} blocks differ in size: {} {} frames, {} {} frames", mode,
                                       run_label(*lo_run), lo, run_label(*hi_run), hi);
  if (unit == CompareUnit::runs) {
    notes.push_back(what +
                    " (the unit is the run's total over every frame: block size does not "
                    "enter the test)");
    return {};
  }
  return make_error(fmt::format(
      "{}: a block's p99 (and p50) depends on how many frames it holds, so blocks of different "
      "sizes are not samples of the same thing and are not tested against each other; run both "
      "with the same --frames / --blocks, or compare at least {} runs a side (the unit is then "
      "each run's total over every measured frame, which does not depend on block size)",
      what, kMinRunsPerSide));
}

std::optional<double> total_stat(const ReadMode& m, const std::string& series,
                                 const std::string& statistic) {
  const Distribution* d = m.total.find(series);
  if (d == nullptr || d->empty()) return std::nullopt;
  return stat_of(*d, statistic);
}

// Each run's total statistic and each block's statistic of a side; blocks cut
// short (a partial run's last block, more than a frame below the run's block
// size) are left out.
void side_samples(const std::vector<NamedRun>& side, const std::string& mode,
                  const std::string& series, const std::string& statistic,
                  std::vector<double>& runs, std::vector<double>& blocks) {
  for (const NamedRun& n : side) {
    const ReadMode& m = *n.r->find_mode(mode);
    if (const std::optional<double> t = total_stat(m, series, statistic)) runs.push_back(*t);
    const uint64_t size = block_size(m);
    for (const ReadBlock& b : m.blocks) {
      if (b.frames_run + 1 < size) continue;
      const Distribution* d = b.series.find(series);
      if (d != nullptr && !d->empty()) blocks.push_back(stat_of(*d, statistic));
    }
  }
}

size_t cut_blocks(const std::vector<NamedRun>& all, const std::string& mode) {
  size_t n = 0;
  for (const NamedRun& r : all) {
    const ReadMode& m = *r.r->find_mode(mode);
    const uint64_t size = block_size(m);
    for (const ReadBlock& b : m.blocks) n += b.frames_run + 1 < size ? 1 : 0;
  }
  return n;
}

// The unit's test of a row; its call is settled after Holm's adjustment.
void test_row(CompareRow& r, CompareUnit unit, const CompareOptions& o) {
  if (!r.a_runs.empty()) r.a_total = mean_of(r.a_runs);
  if (!r.b_runs.empty()) r.b_total = mean_of(r.b_runs);
  if (unit == CompareUnit::runs) {
    if (r.a_runs.empty() || r.b_runs.empty()) {
      r.call = ChangeCall::no_data;
      return;
    }
    r.run_test = welch_test(r.a_runs, r.b_runs, o.alpha);
    r.shift = r.run_test.shift;
    r.a_reference = r.run_test.mean_a;
    if (r.a_runs.size() < kMinRunsPerSide || r.b_runs.size() < kMinRunsPerSide) {
      r.call = ChangeCall::too_few_runs;
      return;
    }
    r.ci_low = r.run_test.ci_low;
    r.ci_high = r.run_test.ci_high;
    r.p_value = r.run_test.p_value;
  } else {
    if (r.a_blocks.empty() || r.b_blocks.empty()) {
      r.call = ChangeCall::no_data;
      return;
    }
    r.block_test = shift_test(r.a_blocks, r.b_blocks, o.alpha);
    r.shift = r.block_test.shift;
    r.a_reference = median_of(r.a_blocks);
    r.ci_low = r.block_test.ci_low;
    r.ci_high = r.block_test.ci_high;
    r.p_value = r.block_test.p_value;
    if (r.block_test.min_p_value >= o.alpha) {
      r.call = ChangeCall::too_few_blocks;
      return;
    }
  }
  r.call = ChangeCall::no_change;  // tested; judged after the adjustment
}

bool tested(const CompareRow& r) {
  return r.call != ChangeCall::no_data && r.call != ChangeCall::too_few_blocks &&
         r.call != ChangeCall::too_few_runs;
}

void judge(CompareRow& r, const CompareOptions& o) {
  if (r.a_reference && *r.a_reference > 0) r.relative = r.shift / *r.a_reference;
  if (!tested(r)) return;
  const bool significant = r.p_adjusted < o.alpha;
  const bool big_abs = std::abs(r.shift) >= o.min_effect_us;
  // No relative change of a reference <= 0: the absolute minimum decides.
  const bool big_rel = !r.relative || std::abs(*r.relative) >= o.min_effect;
  if (significant && big_abs && big_rel) {
    r.call = r.shift > 0 ? ChangeCall::regression : ChangeCall::improvement;
  }
  if (o.fail_on_regression_pct && r.call == ChangeCall::regression &&
      (!r.relative || *r.relative * 100.0 >= *o.fail_on_regression_pct)) {
    r.fails = true;
  }
}

std::vector<NamedRun> named(const CompareSide& s, char side) {
  std::vector<NamedRun> out;
  for (size_t i = 0; i < s.runs.size(); ++i) {
    std::string label =
        s.runs.size() == 1 ? std::string(1, side) : fmt::format("{}{}", side, i + 1);
    out.push_back(NamedRun{s.runs[i], i < s.names.size() ? s.names[i] : label, label,
                           load_source_of(*s.runs[i])});
  }
  return out;
}

Result<void> check_runs(const std::vector<NamedRun>& side, char name) {
  if (side.empty()) return make_error(fmt::format("side {} has no run", name));
  for (size_t i = 0; i < side.size(); ++i) {
    const ReadResult& r = *side[i].r;
    if (r.kind != "latency_run") {
      return make_error(fmt::format("{} is a {}: compare needs latency runs (their blocks)",
                                    run_label(side[i]), r.kind));
    }
    for (size_t j = 0; j < i; ++j) {
      // The same document twice would pass for two runs that agree.
      if (side[j].r == side[i].r || (!r.text.empty() && side[j].r->text == r.text &&
                                     side[j].r->top_level_section == r.top_level_section)) {
        return make_error(fmt::format(
            "{} and {} are the same run: the runs of a side must be separate repetitions",
            run_label(side[j]), run_label(side[i])));
      }
    }
  }
  return {};
}

}  // namespace

Result<Comparison> compare_sides(const CompareSide& side_a, const CompareSide& side_b,
                                 const CompareOptions& options) {
  const std::vector<NamedRun> a = named(side_a, 'A'), b = named(side_b, 'B');
  for (const auto& [side, name] : {std::pair{&a, 'A'}, std::pair{&b, 'B'}}) {
    if (Result<void> ok = check_runs(*side, name); !ok) return ok.error();
  }
  std::vector<NamedRun> all = a;
  all.insert(all.end(), b.begin(), b.end());

  Comparison c;
  for (const NamedRun& n : a) c.a_names.push_back(n.name);
  for (const NamedRun& n : b) c.b_names.push_back(n.name);
  c.options = options;
  c.unit = a.size() >= kMinRunsPerSide && b.size() >= kMinRunsPerSide ? CompareUnit::runs
                                                                      : CompareUnit::blocks;
  if (c.unit == CompareUnit::blocks) {
    c.notes.push_back(fmt::format(
        "run-to-run noise is not in this test ({} run(s) in A, {} in B; the unit is the block): an "
        "effect tied to one process or to when it ran (machine load, CPU placement, clocks) "
        "moves all of its blocks together and is called a change. Compare at least {} runs a "
        "side for a test over runs, or set --min-effect-pct from a measured A/A spread "
        "(docs/compare.md)",
        a.size(), b.size(), kMinRunsPerSide));
  }
  note_differences(a, b, c.notes);

  // The modes every run has available, in the order first seen.
  std::vector<std::string> seen, modes;
  for (const NamedRun& n : all) {
    for (const ReadMode& m : n.r->modes) {
      if (std::find(seen.begin(), seen.end(), m.name) == seen.end()) seen.push_back(m.name);
    }
  }
  for (const std::string& name : seen) {
    bool everywhere = true;
    for (const NamedRun& n : all) {
      const ReadMode* x = n.r->find_mode(name);
      everywhere = everywhere && x != nullptr && x->available;
    }
    if (everywhere) {
      modes.push_back(name);
    } else {
      c.notes.push_back(fmt::format("mode {} is not available in every run: not compared", name));
    }
  }
  if (modes.empty()) return make_error("the runs share no available latency mode");

  for (const std::string& mode : modes) {
    if (Result<void> ok = check_design(mode, all, options, c.notes); !ok) return ok.error();
    if (Result<void> ok = check_block_sizes(mode, all, c.unit, c.notes); !ok) return ok.error();
    if (c.unit == CompareUnit::blocks) {
      if (const size_t cut = cut_blocks(all, mode); cut > 0) {
        c.notes.push_back(fmt::format(
            "{}: {} block(s) cut short (a partial run's last block) are left out", mode, cut));
      }
    }
    std::vector<uint64_t> frames;
    for (const NamedRun& n : all) frames.push_back(n.r->find_mode(mode)->total_frames);
    const auto [fewest, most] = std::minmax_element(frames.begin(), frames.end());
    if (*fewest != *most) {
      c.notes.push_back(fmt::format(
          "{}: the runs measured different numbers of frames ({} to {}): a run's p99 over fewer "
          "frames is noisier",
          mode, *fewest, *most));
    }
    for (const auto& [series, role] : compared_series()) {
      for (const char* statistic : {"p50", "p99"}) {
        CompareRow r;
        r.mode = mode;
        r.series = series;
        r.role = role;
        r.statistic = statistic;
        side_samples(a, mode, series, statistic, r.a_runs, r.a_blocks);
        side_samples(b, mode, series, statistic, r.b_runs, r.b_blocks);
        test_row(r, c.unit, options);
        c.rows.push_back(std::move(r));
      }
    }
  }

  // Holm over the tested rows: an A/A comparison calls any row with a chance
  // of at most alpha, however many rows there are.
  std::vector<double> p;
  for (const CompareRow& r : c.rows) {
    if (tested(r)) p.push_back(r.p_value);
  }
  c.tested_rows = p.size();
  const std::vector<double> adjusted = holm_adjust(p);
  double smallest_reachable = 1;
  for (size_t i = 0, k = 0; i < c.rows.size(); ++i) {
    CompareRow& r = c.rows[i];
    if (tested(r)) {
      r.p_adjusted = adjusted[k++];
      if (c.unit == CompareUnit::blocks)
        smallest_reachable = std::min(smallest_reachable, r.block_test.min_p_value);
    }
    judge(r, options);
    if (r.call == ChangeCall::improvement || r.call == ChangeCall::regression) ++c.changes;
    c.fails = c.fails || r.fails;
  }
  if (c.unit == CompareUnit::blocks && c.tested_rows > 0 &&
      smallest_reachable * static_cast<double>(c.tested_rows) >= options.alpha) {
    c.notes.push_back(fmt::format(
        "no row can be called: with these block counts the smallest p is {:.3g}, and the first "
        "of {} rows is called only below alpha / {} = {:.3g} (Holm); run more --blocks, or "
        "compare at least {} runs a side",
        smallest_reachable, c.tested_rows, c.tested_rows,
        options.alpha / static_cast<double>(c.tested_rows), kMinRunsPerSide));
  }
  return c;
}

Result<Comparison> compare_results(const ReadResult& a, const ReadResult& b, std::string a_name,
                                   std::string b_name, const CompareOptions& options) {
  return compare_sides(CompareSide{{&a}, {std::move(a_name)}},
                       CompareSide{{&b}, {std::move(b_name)}}, options);
}

namespace {

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
              {"changes", c.changes},
              {"fails", c.fails}};
  return doc.dump(2) + "\n";
}

}  // namespace latlab
