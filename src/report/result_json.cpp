#include "report/result_json.hpp"

#include <fmt/format.h>

#include <optional>

#include "latlab/bench/latency_report.hpp"
#include "latlab/host_clock.hpp"
#include "report/json_parts.hpp"
#include "report/present_report.hpp"
#include "report/result_fields.hpp"
#include "report/score_report.hpp"

namespace latlab {

using json = nlohmann::ordered_json;

json distribution_to_json(const Distribution& d) {
  json j;
  j["count"] = d.count;
  j["missing"] = d.missing;
  const bool has = !d.empty();
  auto stat = [&](const char* key, double v) { j[key] = has ? json(v) : json(nullptr); };
  stat("mean", d.mean);
  j["stddev"] = d.stddev ? json(*d.stddev) : json(nullptr);  // null below two samples
  stat("min", d.min);
  stat("p50", d.p50);
  stat("p90", d.p90);
  stat("p95", d.p95);
  stat("p99", d.p99);
  stat("p99_9", d.p999);
  stat("max", d.max);
  // Only where the percentiles came from a histogram: exact ones keep the
  // shape every result had.
  if (d.percentile_resolution) j["percentile_resolution"] = *d.percentile_resolution;
  return j;
}

namespace {

// run.modes, or (a run built by hand, without modes) one "baseline" mode from
// the run's totals.
std::vector<LatencyModeResult> modes_of(const LatencyRun& run) {
  if (!run.modes.empty()) return run.modes;
  LatencyModeResult m;
  m.name = "baseline";
  m.workload = run.desc.workload;
  m.measured_frames = run.measured_frames_run();
  m.total = run.total;
  m.total_missing = run.total_missing;
  m.consumer_behind = run.consumer_behind;
  return {m};
}

std::optional<double> ratio(double a, double b, bool valid) {
  if (!valid || b == 0.0) return std::nullopt;
  return a / b;
}

json opt(std::optional<double> v) { return v ? json(*v) : json(nullptr); }

}  // namespace

json score_to_json(const LatencyScore& s) { return fields::write_object(s, fields::kScoreFields); }

json clock_model_to_json(const ClockModelReport& cm) {
  return fields::write_object(cm, fields::kClockModelFields);
}

namespace {

json settings_to_json(const LatencyRun& run, const RunMeta& meta) {
  json j = fields::write_object(meta, fields::kRunSettingsFields);
  fields::append_fields(j, run, fields::kLatencySettingsFields);
  return j;
}

json block_order_to_json(const LatencyRun& run, const std::vector<LatencyModeResult>& run_modes) {
  json order = json::array();
  for (const BlockResult& b : run.blocks) {
    const fields::BlockOrderEntry e{b, b.mode < run_modes.size() ? run_modes[b.mode].name : "?"};
    order.push_back(fields::write_object(e, fields::kBlockOrderFields));
  }
  return order;
}

// p50 and p99 of a measured distribution over the reference's, both sides
// given; a ratio is null when either side is empty or the reference's is 0.
json ratio_pair_json(const Distribution& measured, const Distribution& reference) {
  const bool valid = !measured.empty() && !reference.empty();
  return {{"measured_p50", valid ? json(measured.p50) : json(nullptr)},
          {"reference_p50", !reference.empty() ? json(reference.p50) : json(nullptr)},
          {"p50_ratio", opt(ratio(measured.p50, reference.p50, valid))},
          {"measured_p99", valid ? json(measured.p99) : json(nullptr)},
          {"reference_p99", !reference.empty() ? json(reference.p99) : json(nullptr)},
          {"p99_ratio", opt(ratio(measured.p99, reference.p99, valid))}};
}

// diagnostics.comparison's per-observer ratios against the reference path,
// and the measured path without its deliberate parts (--bare).
void comparison_to_reference_json(const LatencyRun& run, json& cmp) {
  auto m = [&](Series s) -> const Distribution& { return run.total[static_cast<size_t>(s)]; };
  auto r = [&](Series s) -> const Distribution& {
    return run.reference_total[static_cast<size_t>(s)];
  };
  json observers = json::object();
  for (Series s : {Series::core_latency, Series::fence_latency, Series::poll_latency,
                   Series::timer_lateness}) {
    observers[std::string(to_string(s))] = ratio_pair_json(m(s), r(s));
  }
  cmp["observers"] = std::move(observers);
  json lean = ratio_pair_json(run.core_latency_without_deliberate, r(Series::core_latency));
  lean["what"] =
      "measured core latency - cpu_processing - (gpu_execution - the reference frame's "
      "gpu_execution), paired with the reference frame on the same deadline, over the "
      "reference's core latency";
  lean["distribution"] = distribution_to_json(run.core_latency_without_deliberate);
  cmp["core_latency_without_deliberate"] = std::move(lean);
  cmp["workload_submit_cpu_span"] =
      ratio_pair_json(m(Series::workload_submit_cpu_span), r(Series::workload_submit_cpu_span));
  cmp["gpu_execution"] = ratio_pair_json(m(Series::gpu_execution), r(Series::gpu_execution));
}

// diagnostics.bare_loop, .raw_sleep and .comparison (--bare).
void bare_comparison_to_json(const LatencyRun& run, json& diag) {
  diag["bare_loop"] = fields::write_object(run, fields::kBareLoopFields);
  diag["raw_sleep"] = fields::write_object(run, fields::kRawSleepFields);
  const Distribution& core = run.total[static_cast<size_t>(Series::core_latency)];
  const Distribution& fence = run.total[static_cast<size_t>(Series::fence_latency)];
  const Distribution& late = run.total[static_cast<size_t>(Series::timer_lateness)];
  const Distribution& bare = run.bare_total;
  const Distribution& raw = run.raw_total;
  const bool have_bare = !bare.empty();
  diag["comparison"] = {
      {"core_latency_p50_over_bare_p50",
       opt(ratio(core.p50, bare.p50, have_bare && !core.empty()))},
      {"fence_latency_p50_over_bare_p50",
       opt(ratio(fence.p50, bare.p50, have_bare && !fence.empty()))},
      {"fence_latency_p99_over_bare_p99",
       opt(ratio(fence.p99, bare.p99, have_bare && !fence.empty()))},
      {"timer_lateness_p99_over_raw_p99",
       opt(ratio(late.p99, raw.p99, !raw.empty() && !late.empty()))},
  };
  comparison_to_reference_json(run, diag["comparison"]);
}

// latlab's own work beside the frames, and which frames it overlapped.
json bookkeeping_to_json(const LatencyRun& run) {
  json spans = json::array();
  std::vector<double> lengths;
  for (const BookkeepingSpan& s : run.bookkeeping) {
    spans.push_back({s.start_ns, s.end_ns});
    lengths.push_back(static_cast<double>(s.end_ns - s.start_ns) / 1000.0);
  }
  json modes = json::object();
  for (const LatencyModeResult& m : run.modes)
    modes[m.name] = fields::write_object(m.bookkeeping, fields::kBookkeepingModeFields);
  // Each block's thread preparation (block_order's order), before its schedule.
  json preparation = json::array();
  int64_t preparation_total = 0;
  for (const BlockResult& b : run.blocks) {
    preparation.push_back(b.thread_preparation_ns ? json(*b.thread_preparation_ns) : json(nullptr));
    preparation_total += b.thread_preparation_ns.value_or(0);
  }
  return {{"what",
           "clock refreshes: calibration pairs sampled through the device on the calibrator's "
           "thread (GL: a second context made current per pair), beside the frames"},
          {"span_count", run.bookkeeping.size()},
          {"span_duration", distribution_to_json(summarize_in_place(lengths, 0))},
          {"spans", spans},
          {"modes", modes},
          {"thread_preparation_ns", preparation},
          {"thread_preparation_total_ns", preparation_total}};
}

json diagnostics_to_json(const LatencyRun& run, const RunMeta& meta) {
  json diag;
  diag["bookkeeping"] = bookkeeping_to_json(run);
  diag["generator"] = fields::write_object(run, fields::kGeneratorFields);
  diag["cpu_checksum"] = fmt::format("{:016x}", run.cpu_checksum);
  diag["poll"] = fields::write_object(run, fields::kPollFields);
  diag["process_memory"] = fields::write_object(meta, fields::kProcessMemoryFields);
  if (run.desc.bare_comparison) {
    bare_comparison_to_json(run, diag);
  } else {
    diag["bare_loop"] = nullptr;
    diag["raw_sleep"] = nullptr;
    diag["comparison"] = nullptr;
  }
  diag["validation"] = meta.validation
                           ? fields::write_object(*meta.validation, fields::kValidationFields)
                           : json(nullptr);
  return diag;
}

// The mode entries of `r` beyond the run's latency modes: Loaded when it was
// asked for and does not run, Performance when asked for (in that order).
void extra_modes_to_json(const RunResult& r, json& modes) {
  if (r.loaded.asked && !r.loaded.runs)
    modes["loaded"] = fields::write_object(r.loaded, fields::kLoadedUnavailableFields);
  const PerformanceOutcome& perf = r.performance;
  if (!perf.asked) return;
  modes["performance"] = perf.report
                             ? performance_to_json(*perf.report)
                             : fields::write_object(perf, fields::kPerformanceUnavailableFields);
}

// `load_calibration`: calibrated (its report and size), given, or null.
json loaded_calibration_to_json(const LoadedOutcome& loaded) {
  if (loaded.calibration) {
    json j = load_calibration_to_json(*loaded.calibration);
    j["source"] = "calibrated";
    j["size"] = load_size_to_json(loaded.size);
    return j;
  }
  if (loaded.given_complexity > 0) {
    return {{"source", "given"},
            {"complexity", loaded.given_complexity},
            {"size", load_size_to_json(loaded.size)}};
  }
  return nullptr;
}

// The document of a latency run; `r` (optional) adds Loaded's and
// Performance's outcomes, per_frame and the partial flag of the whole run.
json latency_doc(const LatencyRun& run, const RunMeta& meta, const RunResult* r) {
  const std::vector<LatencyModeResult> run_modes = modes_of(run);
  json j = r != nullptr
               ? result_header_to_json("latency_run", meta, r->partial(), r->partial_reason())
               : result_header_to_json("latency_run", meta, run.partial, run.partial_reason);
  j["units"] = {{"distributions", "us"}, {"times", "ns"}};
  j["machine"] = machine_to_json(meta.machine);
  j["host_clock"] = {{"name", kHostClockName}, {"time_source", run.time_source}};
  j["device"] = fields::write_object(run.device, fields::kDeviceFields);
  j["clock_model"] = clock_model_to_json(run.clock_model);
  j["settings"] = settings_to_json(run, meta);
  j["block_order"] = block_order_to_json(run, run_modes);
  json modes = json::object();
  for (uint32_t mi = 0; mi < run_modes.size(); ++mi) {
    fields::ModeDoc d{run_modes[mi], {}, &run};
    for (const BlockResult& b : run.blocks)
      if (b.mode == mi) d.blocks.push_back(b);
    modes[run_modes[mi].name] = fields::write_object(d, fields::kModeFields);
  }
  if (r != nullptr) extra_modes_to_json(*r, modes);
  j["modes"] = modes;
  j["present"] = present_to_json(run);
  j["diagnostics"] = diagnostics_to_json(run, meta);
  j["unavailable"] = capabilities_to_json(r != nullptr ? result_unavailable(*r) : run.unavailable);
  // The run alone: its score computed here; a RunResult: its own, when scored.
  if (r == nullptr) {
    j["score"] = score_to_json(latency_score_of(run, nullptr));
    return j;
  }
  if (r->score) j["score"] = score_to_json(*r->score);
  if (r->per_frame) j["per_frame"] = fields::write_object(*r->per_frame, fields::kPerFrameFields);
  if (r->loaded.asked) j["load_calibration"] = loaded_calibration_to_json(r->loaded);
  return j;
}

// A whole document of kind "capture" (docs/capture.md, "The result").
json capture_doc(const RunResult& r) {
  const CaptureResult& c = *r.capture;
  json j = result_header_to_json("capture", r.meta, !c.partial_reason.empty(), c.partial_reason);
  j["units"] = {{"distributions", "us"}, {"times", "ns"}};
  j["machine"] = machine_to_json(r.meta.machine);
  fields::append_fields(j, c, fields::kCaptureFields);
  return j;
}

// `latlab run` over several devices: the top section's whole document and
// `devices_run` with every section's.
json devices_doc(const RunResult& r) {
  json top = run_result_to_json(r.sections.at(*r.top_section).result.at(0));
  top["devices_run"] = fields::write_object(r, fields::kDevicesRunFields);
  return top;
}

}  // namespace

json latency_run_to_json(const LatencyRun& run, const RunMeta& meta) {
  return latency_doc(run, meta, nullptr);
}

json run_result_to_json(const RunResult& r) {
  if (!r.sections.empty()) return devices_doc(r);
  if (r.capture) return capture_doc(r);
  if (r.latency) return latency_doc(*r.latency, r.meta, &r);
  return performance_run_to_json(*r.performance.report, r.device, r.meta);
}

json load_size_to_json(const LoadSizeChoice& c) {
  return fields::write_object(c, fields::kLoadSizeFields);
}

std::vector<MissingCapability> result_unavailable(const RunResult& r) {
  if (!r.sections.empty()) return result_unavailable(r.sections.at(*r.top_section).result.at(0));
  if (r.capture) return {};
  if (!r.latency) return r.device.missing;
  std::vector<MissingCapability> u = r.latency->unavailable;
  if (r.loaded.asked && !r.loaded.runs) u.push_back({"loaded", r.loaded.unavailable});
  if (r.performance.asked && !r.performance.report)
    u.push_back({"performance", r.performance.unavailable});
  return u;
}

json result_settings_to_json(const RunResult& r) {
  if (!r.sections.empty())
    return result_settings_to_json(r.sections.at(*r.top_section).result.at(0));
  if (r.latency) return settings_to_json(*r.latency, r.meta);
  if (r.capture) return json::object();
  return performance_settings_to_json(r.meta);
}

std::string latency_run_json(const LatencyRun& run, const RunMeta& meta) {
  return latency_run_to_json(run, meta).dump(2) + "\n";
}

}  // namespace latlab
