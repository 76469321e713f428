// `latlab compare`'s checks that the runs can be compared and measured the
// same thing (compare_parts.hpp).
#include <fmt/format.h>

#include <algorithm>

#include "report/compare_parts.hpp"
#include "report/json_parts.hpp"

namespace latlab::compare {

Result<void> check_runs(const std::vector<NamedRun>& side, char name) {
  if (side.empty()) return make_error(fmt::format("side {} has no run", name));
  for (size_t i = 0; i < side.size(); ++i) {
    const RunResult& r = *side[i].r;
    if (!r.latency && !r.capture) {
      return make_error(fmt::format("{} is a {}: compare needs latency runs (their blocks)",
                                    run_label(side[i]), r.kind()));
    }
    for (size_t j = 0; j < i; ++j) {
      // The same result twice would pass for two runs that agree.
      if (side[j].r == side[i].r || *side[j].r == r) {
        return make_error(fmt::format(
            "{} and {} are the same run: the runs of a side must be separate repetitions",
            run_label(side[j]), run_label(side[i])));
      }
    }
  }
  return {};
}

namespace {

// Fields of the runs that should agree: notes when they do not.
void note_field(const std::vector<NamedRun>& a, const std::vector<NamedRun>& b, const char* what,
                std::string (*get)(const RunResult&), std::vector<std::string>& notes) {
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

// The device a result measured: its latency run's, or a capture's first source's.
const DeviceInfo& device_of(const RunResult& r) { return r.latency ? r.latency->device : r.device; }
std::string device_name(const RunResult& r) {
  if (r.capture) return r.capture->sources.empty() ? "" : r.capture->sources[0].device;
  return device_of(r).name;
}
std::string backend(const RunResult& r) {
  if (r.capture) return r.capture->sources.empty() ? "" : r.capture->sources[0].api;
  return device_of(r).backend;
}

}  // namespace

void note_differences(const std::vector<NamedRun>& a, const std::vector<NamedRun>& b,
                      std::vector<std::string>& notes) {
  note_field(
      a, b, "host", [](const RunResult& r) { return r.meta.machine.hostname; }, notes);
  note_field(a, b, "device", device_name, notes);
  note_field(
      a, b, "driver", [](const RunResult& r) { return device_of(r).driver; }, notes);
  note_field(a, b, "backend", backend, notes);
  note_field(
      a, b, "latlab version", [](const RunResult& r) { return r.meta.tool_version; }, notes);
  for (const auto* side : {&a, &b}) {
    for (const NamedRun& n : *side) {
      if (n.r->partial())
        notes.push_back(
            fmt::format("{} is a partial run: {}", run_label(n), n.r->partial_reason()));
    }
  }
}

namespace {

using Design = std::vector<std::pair<std::string, std::string>>;

// A capture's design: the program it ran.
Design capture_design(const CaptureResult& c) {
  std::string argv;
  for (const std::string& a : c.program.argv) argv += (argv.empty() ? "" : " ") + a;
  return {{"program", argv}};
}

// The settings that shape a mode's frames and blocks, as text per item:
// two runs whose items differ measured different things.
Design design_of(const NamedRun& n, const std::string& mode) {
  const RunResult& r = *n.r;
  if (r.capture) return capture_design(*r.capture);
  const LatencyRunDesc& d = r.latency->desc;
  Design out;
  // "all" runs the same latency blocks as "latency", then Performance.
  out.emplace_back("mode asked (--mode; latency interleaves baseline and loaded blocks)",
                   r.meta.mode == "all" ? "latency" : r.meta.mode);
  out.emplace_back("interval range (ns)",
                   fmt::format("{}-{}", d.schedule.min_interval_ns, d.schedule.max_interval_ns));
  out.emplace_back("CPU step cost (--cpu-iterations)", std::to_string(d.cpu_step_iterations));
  out.emplace_back("poll observer", d.poll_completion ? "true" : "false");
  const LatencyModeResult& m =
      *std::find_if(r.latency->modes.begin(), r.latency->modes.end(),
                    [&](const LatencyModeResult& x) { return x.name == mode; });
  const FrameWorkload& w = m.workload;
  out.emplace_back(mode + " workload", fmt::format("{} pass(es), {}x{} {}", w.passes, w.width,
                                                   w.height, form_name(w.form)));
  // A calibrated Loaded complexity is an outcome of the device, not a setting.
  if (mode != "loaded" || n.load_source != "calibrated")
    out.emplace_back(mode + " complexity", std::to_string(w.complexity));
  return out;
}

std::vector<std::string> design_differences(const std::string& mode,
                                            const std::vector<NamedRun>& all) {
  const NamedRun& first = all.front();
  const Design ref = design_of(first, mode);
  std::vector<std::string> diffs;
  for (size_t i = 1; i < all.size(); ++i) {
    const Design d = design_of(all[i], mode);
    for (size_t k = 0; k < d.size() && k < ref.size(); ++k) {
      if (d[k] != ref[k]) {
        diffs.push_back(fmt::format("{}: {} {} vs {} {}", ref[k].first, run_label(first),
                                    ref[k].second, run_label(all[i]), d[k].second));
      }
    }
    if (d.size() != ref.size()) {
      diffs.push_back(
          fmt::format("{}: Loaded complexity calibrated in one, given in the other ({} vs {})",
                      mode, run_label(first), run_label(all[i])));
    }
  }
  return diffs;
}

}  // namespace

Result<void> check_design(const std::string& mode, const std::vector<NamedRun>& all,
                          const CompareOptions& o, std::vector<std::string>& notes) {
  const std::vector<std::string> diffs = design_differences(mode, all);
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

Result<void> check_block_sizes(const std::string& mode, const std::vector<NamedRun>& all,
                               CompareUnit unit, std::vector<std::string>& notes) {
  uint64_t lo = UINT64_MAX, hi = 0;
  const NamedRun *lo_run = nullptr, *hi_run = nullptr;
  for (const NamedRun& n : all) {
    const uint64_t s = block_size(*n.r, mode);
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

}  // namespace latlab::compare
