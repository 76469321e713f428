// The result document's sections that one field table declares (the
// facility is field_table.hpp): the writer (result_json.cpp, json_parts.cpp),
// the reader (read_*.cpp) and the schema doc's check
// (tests/unit/result_fields_test.cpp) all use these. Private to src/report.
#pragma once

#include <array>
#include <cmath>

#include "latlab/bench/capture_input.hpp"
#include "latlab/bench/capture_result.hpp"
#include "latlab/bench/latency_report.hpp"
#include "latlab/bench/latency_run.hpp"
#include "latlab/bench/load_calibration.hpp"
#include "latlab/bench/per_frame.hpp"
#include "latlab/bench/performance_mode.hpp"
#include "latlab/bench/run_result.hpp"
#include "latlab/bench/signal_generator.hpp"
#include "latlab/bench/tick_mapper.hpp"
#include "latlab/core/latency_device.hpp"
#include "report/field_table.hpp"
#include "report/latency_score.hpp"
#include "report/present_report.hpp"
#include "report/result_sections.hpp"

namespace latlab::fields {

// `machine` (docs/result-schema.md: "machine").
inline constexpr std::array<Field<MachineInfo>, 6> kMachineFields = {
    field<&MachineInfo::hostname>("hostname"),
    text_or_null<&MachineInfo::os>("os"),
    field<&MachineInfo::kernel>("kernel"),
    field<&MachineInfo::arch>("arch"),
    text_or_null<&MachineInfo::cpu_model>("cpu_model"),
    field<&MachineInfo::logical_cpus>("logical_cpus"),
};

// One `{name, reason}` of `unavailable` and `device.missing_capabilities`.
inline constexpr std::array<Field<MissingCapability>, 2> kCapabilityFields = {
    field<&MissingCapability::name>("name"),
    field<&MissingCapability::reason>("reason"),
};

// The head of every document's `device`.
inline constexpr std::array<Field<DeviceInfo>, 3> kDeviceIdentityFields = {
    field<&DeviceInfo::backend>("backend"),
    field<&DeviceInfo::name>("name"),
    field<&DeviceInfo::driver>("driver"),
};

namespace detail {

// tick_period_fraction: [num, den], neither 0.
inline json tick_fraction(const DeviceInfo& d) {
  return json::array({d.ticks.period_num, d.ticks.period_den});
}
inline void read_tick_fraction(const json& v, const std::string& path, bool null_ok,
                               DeviceInfo& d) {
  if (v.is_null() && null_ok) return;
  if (reading::array_of(v, path).size() != 2) reading::fail(path, "expected [num, den]");
  d.ticks.period_num = reading::u64_value(v[0], path + "[0]");
  d.ticks.period_den = reading::u64_value(v[1], path + "[1]");
  if (d.ticks.period_num == 0 || d.ticks.period_den == 0) reading::fail(path, "a period of 0");
}

inline json valid_bits(const DeviceInfo& d) { return json(d.ticks.valid_bits); }
inline void read_valid_bits(const json& v, const std::string& path, bool null_ok, DeviceInfo& d) {
  if (v.is_null() && null_ok) return;
  d.ticks.valid_bits = reading::u32_value(v, path);
  if (d.ticks.valid_bits < 1 || d.ticks.valid_bits > 64) reading::fail(path, "not in 1..64");
}

inline json tick_period_ns(const DeviceInfo& d) { return json(d.ticks.period_ns()); }

}  // namespace detail

// A latency run's `device`: its identity, then its timing (tick_period_ns
// is derived from the fraction: written, not read).
inline constexpr std::array<Field<DeviceInfo>, 8> kDeviceFields = {
    spread<kDeviceIdentityFields>(),
    Field<DeviceInfo>{.key = "tick_period_ns", .write = detail::tick_period_ns},
    Field<DeviceInfo>{.key = "tick_period_fraction",
                      .write = detail::tick_fraction,
                      .read = detail::read_tick_fraction}
        .lacking_in_older(),
    Field<DeviceInfo>{
        .key = "timestamp_valid_bits", .write = detail::valid_bits, .read = detail::read_valid_bits}
        .lacking_in_older(),
    added<&DeviceInfo::can_time>("can_time"),
    text_or_null<&DeviceInfo::calibration_domain>("calibration_domain").lacking_in_older(),
    added<&DeviceInfo::calibration_estimated>("calibration_estimated"),
    records<kCapabilityFields, &DeviceInfo::missing>("missing_capabilities").lacking_in_older(),
};

// One of `clock_model.pairs`.
inline constexpr std::array<Field<CalibrationPair>, 4> kCalibrationPairFields = {
    field<&CalibrationPair::device_ticks>("device_ticks"),
    field<&CalibrationPair::host_ns>("host_ns"),
    field<&CalibrationPair::max_deviation_ns>("max_deviation_ns"),
    field<&CalibrationPair::estimated>("estimated"),
};

// `clock_model`: every key but `available` is one older documents may lack.
inline constexpr std::array<Field<ClockModelReport>, 21> kClockModelFields = {
    field<&ClockModelReport::available>("available"),
    added<&ClockModelReport::reason>("reason").null_if(when<&ClockModelReport::available>),
    added<&ClockModelReport::source>("source"),
    added<&ClockModelReport::drift_ppm>("drift_ppm").null_if(unless<&ClockModelReport::available>),
    added<&ClockModelReport::drift_error_ppm>("drift_error_ppm")
        .null_if(unless<&ClockModelReport::available>),
    added<&ClockModelReport::error_bound_ns>("error_bound_ns")
        .null_if(unless<&ClockModelReport::available>),
    added<&ClockModelReport::pairs_used>("pairs_used"),
    added<&ClockModelReport::pairs_accepted>("pairs_accepted"),
    added<&ClockModelReport::pairs_rejected>("pairs_rejected"),
    added<&ClockModelReport::refreshes>("refreshes"),
    added<&ClockModelReport::failed_refreshes>("failed_refreshes"),
    added<&ClockModelReport::max_refresh_cost_ns>("max_refresh_cost_ns"),
    added<&ClockModelReport::refresh_interval_ns>("refresh_interval_ns"),
    added<&ClockModelReport::estimated>("estimated"),
    text_or_null<&ClockModelReport::frame_mapping>("frame_mapping").lacking_in_older(),
    added<&ClockModelReport::block_end_pairs>("block_end_pairs"),
    added<&ClockModelReport::failed_block_end_pairs>("failed_block_end_pairs"),
    added<&ClockModelReport::frames_between_pairs>("frames_between_pairs"),
    added<&ClockModelReport::frames_outside_pairs>("frames_outside_pairs"),
    added<&ClockModelReport::interpolation_misfit_ns>("interpolation_misfit_ns"),
    records<kCalibrationPairFields, &ClockModelReport::pairs>("pairs").lacking_in_older(),
};

// `settings.timer_slack`: -1 (unknown) slacks are written null.
inline constexpr std::array<Field<TimerSlack>, 6> kTimerSlackFields = {
    field<&TimerSlack::requested>("requested"),
    added<&TimerSlack::requested_ns>("requested_ns").null_if(unless<&TimerSlack::requested>),
    added<&TimerSlack::previous_ns>("previous_ns").null_if(negative<&TimerSlack::previous_ns>),
    added<&TimerSlack::obtained_ns>("obtained_ns").null_if(negative<&TimerSlack::obtained_ns>),
    added<&TimerSlack::applied>("applied"),
    text_or_null<&TimerSlack::error>("error").lacking_in_older(),
};

namespace detail {

// gpu_status_counts: frames by QueryStatus name.
inline json status_counts(const MissingBreakdown& m) {
  json by = json::object();
  for (size_t i = 0; i < kQueryStatusCount; ++i)
    by[std::string(to_string(static_cast<QueryStatus>(i)))] = m.gpu_status_counts[i];
  return by;
}
inline void read_status_counts(const json& v, const std::string& path, bool null_ok,
                               MissingBreakdown& m) {
  if (v.is_null() && null_ok) return;
  const reading::Obj by(v, path);
  for (size_t i = 0; i < kQueryStatusCount; ++i)
    by.opt(to_string(static_cast<QueryStatus>(i)), m.gpu_status_counts[i]);
}

}  // namespace detail

// `missing_markers` of a block, a mode's total and the bare loop.
inline constexpr std::array<Field<MissingBreakdown>, 7> kMissingMarkerFields = {
    added<&MissingBreakdown::gpu_not_ok>("gpu_timestamps_not_ok"),
    added<&MissingBreakdown::gpu_unmapped>("gpu_timestamps_unmapped"),
    added<&MissingBreakdown::fence_not_ok>("fence_not_ok"),
    added<&MissingBreakdown::poll_limit>("poll_limit"),
    added<&MissingBreakdown::poll_not_ok>("poll_not_ok"),
    added<&MissingBreakdown::device_error>("device_error"),
    Field<MissingBreakdown>{.key = "gpu_status_counts",
                            .write = detail::status_counts,
                            .read = detail::read_status_counts}
        .lacking_in_older(),
};

namespace detail {

// `stages`: a stage this version does not know (a newer file's) is read, not kept.
inline json stages(const SeriesDistributions& s) {
  json j = json::object();
  for (size_t i = 0; i < kStageCount; ++i)
    j[std::string(to_string(static_cast<Series>(i)))] = distribution_to_json(s[i]);
  return j;
}
inline void read_stages(const json& v, const std::string& path, bool, SeriesDistributions& s) {
  const reading::Obj stages(v, path);
  if (v.empty()) reading::fail(path, "no stage");
  for (auto it = v.begin(); it != v.end(); ++it) {
    const Distribution d = reading::distribution_value(it.value(), stages.key_path(it.key()));
    for (size_t i = 0; i < kStageCount; ++i)
      if (to_string(static_cast<Series>(i)) == it.key()) s[i] = d;
  }
}

template <Series S>
constexpr Field<SeriesDistributions> series(std::string_view key) {
  return {
      .key = key,
      .write = +[](const SeriesDistributions& s) { return value_json(s[static_cast<size_t>(S)]); },
      .read =
          +[](const json& v, const std::string& path, bool null_ok, SeriesDistributions& s) {
            if (!(v.is_null() && null_ok))
              s[static_cast<size_t>(S)] = reading::distribution_value(v, path);
          }};
}

inline bool not_bare(const BlockResult& b) { return b.kind != BlockKind::bare_loop; }

}  // namespace detail

// The stages, observers and diagnostics of a block, a mode's total and the
// bare loop (the poll observer's: results written before it lack them).
inline constexpr std::array<Field<SeriesDistributions>, 8> kSeriesFields = {
    Field<SeriesDistributions>{
        .key = "stages", .write = detail::stages, .read = detail::read_stages},
    detail::series<Series::core_latency>("core_latency"),
    detail::series<Series::fence_latency>("fence_latency"),
    detail::series<Series::poll_latency>("poll_latency").lacking_in_older(),
    detail::series<Series::timer_lateness>("timer_lateness"),
    detail::series<Series::clock_map_error>("clock_map_error"),
    detail::series<Series::gpu_end_to_poll_wake>("gpu_end_to_poll_wake").lacking_in_older(),
    detail::series<Series::poll_cpu>("poll_cpu").lacking_in_older(),
};

// A warm-up, measured or bare-loop block: its series, then its own keys (a
// bare-loop block's `latency` last).
inline constexpr std::array<Field<BlockResult>, 12> kBlockFields = {
    spread<&BlockResult::series, kSeriesFields>(),
    field<&BlockResult::index>("index"),
    field<&BlockResult::order>("order"),
    added<&BlockResult::first_device_frame>("first_frame_id"),
    added<&BlockResult::frames_planned>("frames_planned"),
    field<&BlockResult::frames_run>("frames_run"),
    added<&BlockResult::start_ns>("start_ns"),
    added<&BlockResult::end_ns>("end_ns"),
    object<kMissingMarkerFields, &BlockResult::missing>("missing_markers").lacking_in_older(),
    added<&BlockResult::consumer_behind>("consumer_behind_frames"),
    added<&BlockResult::generator_cpu_ns>("generator_cpu_ns"),
    added<&BlockResult::bare_latency>("latency").omitted_if(detail::not_bare),
};

// The blocks of kind K in the owner's blocks M, each by `Fields` (read:
// appended, sorted into run order by the caller).
template <auto M, BlockKind K, const auto& Fields>
constexpr Field<OwnerOf<M>> blocks_of(std::string_view key) {
  using O = OwnerOf<M>;
  return {.key = key,
          .write =
              +[](const O& o) {
                json a = json::array();
                for (const BlockResult& b : o.*M)
                  if (b.kind == K) a.push_back(write_object(b, Fields));
                return a;
              },
          .read =
              +[](const json& v, const std::string& path, bool null_ok, O& o) {
                if (v.is_null() && null_ok) return;
                for (BlockResult& b : read_records<BlockResult>(v, path, Fields)) {
                  b.kind = K;
                  (o.*M).push_back(std::move(b));
                }
              }};
}

// `modes.<mode>.gpu_target.warmup_check`.
inline constexpr std::array<Field<WarmupCheck>, 5> kWarmupCheckFields = {
    field<&WarmupCheck::frames_used>("frames_used"),
    field<&WarmupCheck::median_ms>("median_ms"),
    field<&WarmupCheck::complexity_before>("complexity_before"),
    field<&WarmupCheck::complexity_after>("complexity_after"),
    field<&WarmupCheck::outcome>("outcome"),
};

// `modes.<mode>.gpu_target` (its off_target is the mode's `off_target`).
inline constexpr std::array<Field<GpuTargetCheck>, 6> kGpuTargetFields = {
    field<&GpuTargetCheck::target, &GpuTimeTarget::target_ms>("target_ms"),
    field<&GpuTargetCheck::target, &GpuTimeTarget::tolerance>("tolerance"),
    field<&GpuTargetCheck::measured_ms>("measured_ms"),
    fixed<GpuTargetCheck>("measured", "median of total.stages.gpu_execution"),
    field<&GpuTargetCheck::error_fraction>("error_fraction"),
    object<kWarmupCheckFields, &GpuTargetCheck::warmup_check>("warmup_check").lacking_in_older(),
};

namespace detail {

// "compute" or "fragment".
template <auto M>
json form(const OwnerOf<M>& o) {
  return json(o.*M == WorkloadForm::fragment ? "fragment" : "compute");
}
template <auto M>
void read_form(const json& v, const std::string& path, bool null_ok, OwnerOf<M>& o) {
  if (v.is_null() && null_ok) return;
  const std::string f = reading::str_value(v, path);
  if (f != "compute" && f != "fragment")
    reading::fail(path, "'" + f + "' is not compute or fragment");
  o.*M = f == "fragment" ? WorkloadForm::fragment : WorkloadForm::compute;
}

// A host-clock duration in ns (a member path) written as ms (a double),
// read back rounded.
template <auto M, auto... Ms>
constexpr Field<OwnerOf<M>> ms_of_ns(std::string_view key) {
  using O = OwnerOf<M>;
  return {.key = key,
          .write = +[](const O& o) { return json(static_cast<double>(member<M, Ms...>(o)) / 1e6); },
          .read =
              +[](const json& v, const std::string& path, bool null_ok, O& o) {
                if (!(v.is_null() && null_ok))
                  member<M, Ms...>(o) = std::llround(reading::number_value(v, path) * 1e6);
              }};
}

inline json step_kind(const LoadCalibrationStep& s) { return json(to_string(s.kind)); }
inline void read_step_kind(const json& v, const std::string& path, bool, LoadCalibrationStep& s) {
  const std::string kind = reading::str_value(v, path);
  if (kind != to_string(StepKind::search) && kind != to_string(StepKind::verify))
    reading::fail(path, "'" + kind + "' is not search or verify");
  s.kind = kind == to_string(StepKind::verify) ? StepKind::verify : StepKind::search;
}

// fit: {fixed_ms, ms_per_complexity}, null unless both are known.
inline json fit(const LoadCalibrationReport& r) {
  if (!r.fit_fixed_ms || !r.fit_ms_per_complexity) return nullptr;
  return {{"fixed_ms", *r.fit_fixed_ms}, {"ms_per_complexity", *r.fit_ms_per_complexity}};
}
inline void read_fit(const json& v, const std::string& path, bool, LoadCalibrationReport& r) {
  if (v.is_null()) return;
  const reading::Obj f(v, path);
  r.fit_fixed_ms = f.number("fixed_ms");
  r.fit_ms_per_complexity = f.number("ms_per_complexity");
}

// tried: [{size, reason}] of each size given up.
inline json tried(const LoadSizeChoice& c) {
  json out = json::array();
  for (const auto& [size, why] : c.tried) out.push_back({{"size", size}, {"reason", why}});
  return out;
}
inline void read_tried(const json& v, const std::string& path, bool null_ok, LoadSizeChoice& c) {
  if (v.is_null() && null_ok) return;
  reading::array_of(v, path);
  for (size_t i = 0; i < v.size(); ++i) {
    const reading::Obj t(v[i], fmt::format("{}[{}]", path, i));
    c.tried.emplace_back(t.str("size"), t.str("reason"));
  }
}

}  // namespace detail

// `workload` of the settings, of each mode and of Performance.
inline constexpr std::array<Field<FrameWorkload>, 5> kWorkloadFields = {
    field<&FrameWorkload::passes>("passes"),
    field<&FrameWorkload::complexity>("complexity"),
    field<&FrameWorkload::width>("width"),
    field<&FrameWorkload::height>("height"),
    Field<FrameWorkload>{.key = "form",
                         .write = detail::form<&FrameWorkload::form>,
                         .read = detail::read_form<&FrameWorkload::form>},
};

// One of `load_calibration.steps`.
inline constexpr std::array<Field<LoadCalibrationStep>, 13> kLoadStepFields = {
    field<&LoadCalibrationStep::index>("index"),
    Field<LoadCalibrationStep>{
        .key = "kind", .write = detail::step_kind, .read = detail::read_step_kind},
    field<&LoadCalibrationStep::complexity>("complexity"),
    added<&LoadCalibrationStep::median_ms>("median_ms"),
    added<&LoadCalibrationStep::min_ms>("min_ms"),
    added<&LoadCalibrationStep::max_ms>("max_ms"),
    added<&LoadCalibrationStep::error_fraction>("error_fraction"),
    added<&LoadCalibrationStep::repeat_medians_ms>("repeat_medians_ms"),
    added<&LoadCalibrationStep::spread_fraction>("spread_fraction"),
    added<&LoadCalibrationStep::frames_submitted>("frames_submitted"),
    added<&LoadCalibrationStep::frames_used>("frames_used"),
    added<&LoadCalibrationStep::frames_missing>("frames_missing"),
    added<&LoadCalibrationStep::why>("why"),
};

// The load calibration's report (`calibrate-load --json`, and
// `load_calibration` of a run, which adds `source` and `size`).
inline constexpr std::array<Field<LoadCalibrationReport>, 25> kLoadCalibrationFields = {
    added<&LoadCalibrationReport::target_ms>("target_ms"),
    added<&LoadCalibrationReport::tolerance>("tolerance"),
    added<&LoadCalibrationReport::width>("width"),
    added<&LoadCalibrationReport::height>("height"),
    added<&LoadCalibrationReport::passes>("passes"),
    Field<LoadCalibrationReport>{.key = "form",
                                 .write = detail::form<&LoadCalibrationReport::form>,
                                 .read = detail::read_form<&LoadCalibrationReport::form>}
        .lacking_in_older(),
    field<&LoadCalibrationReport::complexity>("complexity"),
    added<&LoadCalibrationReport::verified>("verified"),
    added<&LoadCalibrationReport::within_tolerance>("within_tolerance"),
    added<&LoadCalibrationReport::median_ms>("median_ms"),
    added<&LoadCalibrationReport::error_fraction>("error_fraction"),
    added<&LoadCalibrationReport::p5_ms>("p5_ms").null_if(unless<&LoadCalibrationReport::verified>),
    added<&LoadCalibrationReport::gpu_ms>("gpu_ms"),
    added<&LoadCalibrationReport::outcome>("outcome"),
    added<&LoadCalibrationReport::noise_fraction>("noise_fraction"),
    added<&LoadCalibrationReport::noise_limited>("noise_limited"),
    added<&LoadCalibrationReport::uncertainty_fraction>("uncertainty_fraction"),
    added<&LoadCalibrationReport::step_ms>("step_ms"),
    added<&LoadCalibrationReport::granularity_limited>("granularity_limited"),
    Field<LoadCalibrationReport>{.key = "fit", .write = detail::fit, .read = detail::read_fit}
        .lacking_in_older(),
    added<&LoadCalibrationReport::evaluations>("evaluations"),
    added<&LoadCalibrationReport::frames_submitted>("frames_submitted"),
    added<&LoadCalibrationReport::frames_missing>("frames_missing"),
    detail::ms_of_ns<&LoadCalibrationReport::wall_ns>("wall_ms").lacking_in_older(),
    records<kLoadStepFields, &LoadCalibrationReport::steps>("steps").lacking_in_older(),
};

// `load_calibration.size` and `modes.loaded.load_size`.
inline constexpr std::array<Field<LoadSizeChoice>, 4> kLoadSizeFields = {
    field<&LoadSizeChoice::asked>("asked"),
    text_or_null<&LoadSizeChoice::used>("used"),
    added<&LoadSizeChoice::why>("why"),
    Field<LoadSizeChoice>{.key = "tried", .write = detail::tried, .read = detail::read_tried}
        .lacking_in_older(),
};

// `modes.performance` of a mode that ran (available, offscreen and units are
// the same in every document: written, not read).
inline constexpr std::array<Field<PerformanceReport>, 10> kPerformanceFields = {
    fixed<PerformanceReport, true>("available"),
    object<kWorkloadFields, &PerformanceReport::work>("workload"),
    fixed<PerformanceReport, true>("offscreen"),
    field<&PerformanceReport::frames>("frames"),
    text_or_null<&PerformanceReport::partial_reason>("partial_reason").lacking_in_older(),
    field<&PerformanceReport::gpu_ms>("gpu_ms"),
    field<&PerformanceReport::fps>("fps"),
    added<&PerformanceReport::gpu_timeline_fps>("gpu_timeline_fps")
        .null_if(not_positive<&PerformanceReport::gpu_timeline_fps>),
    detail::ms_of_ns<&PerformanceReport::wall_ns>("wall_ms").lacking_in_older(),
    Field<PerformanceReport>{.key = "units",
                             .write =
                                 +[](const PerformanceReport&) {
                                   return json{{"gpu_ms", "ms"}, {"fps", "frames per second"}};
                                 }},
};

// A block with its mode's name.
struct BlockOrderEntry {
  BlockResult block;
  std::string mode;
};

inline constexpr auto kOrdered = &BlockOrderEntry::block;

// One of `block_order`: every block in run order (the reader takes the turn
// warm-up, and a bare-loop or raw-sleep block's mode, from here).
inline constexpr std::array<Field<BlockOrderEntry>, 7> kBlockOrderFields = {
    field<kOrdered, &BlockResult::order>("order"),
    Field<BlockOrderEntry>{
        .key = "kind",
        .write = +[](const BlockOrderEntry& e) { return json(to_string(e.block.kind)); }},
    field<kOrdered, &BlockResult::index>("index"),
    field<&BlockOrderEntry::mode>("mode"),
    field<kOrdered, &BlockResult::frames_run>("frames_run"),
    added<kOrdered, &BlockResult::turn_warmup_frames>("turn_warmup_frames"),
    detail::ms_of_ns<kOrdered, &BlockResult::turn_warmup_wall_ns>("turn_warmup_ms")
        .lacking_in_older(),
};

// `modes.performance` of a Performance that did not run, and `modes.loaded`
// of a Loaded that did not (the caller reads `available` first).
inline constexpr std::array<Field<PerformanceOutcome>, 2> kPerformanceUnavailableFields = {
    fixed<PerformanceOutcome, false>("available"),
    added<&PerformanceOutcome::unavailable>("reason"),
};
inline constexpr std::array<Field<LoadedOutcome>, 3> kLoadedUnavailableFields = {
    fixed<LoadedOutcome, false>("available"),
    added<&LoadedOutcome::unavailable>("reason"),
    object<kLoadSizeFields, &LoadedOutcome::size>("load_size")
        .omitted_if(+[](const LoadedOutcome& l) { return l.size.asked.empty(); }),
};

// `modes.<mode>` of a latency mode: the mode, its warm-up and measured blocks
// (run order) and the run, whose present path names the screen observers.
struct ModeDoc {
  LatencyModeResult mode;
  std::vector<BlockResult> blocks;
  const LatencyRun* run = nullptr;  // set before writing or reading
};

// `modes.<mode>.total`: every measured frame of the mode.
inline constexpr std::array<Field<LatencyModeResult>, 4> kModeTotalFields = {
    spread<&LatencyModeResult::total, kSeriesFields>(),
    field<&LatencyModeResult::measured_frames>("frames"),
    object<kMissingMarkerFields, &LatencyModeResult::total_missing>("missing_markers")
        .lacking_in_older(),
    added<&LatencyModeResult::consumer_behind>("consumer_behind_frames"),
};

// `modes.<mode>.observers`: what each observer sees, in words.
inline constexpr std::array<Field<ModeDoc>, 3> kModeObserverFields = {
    fixed<ModeDoc>("core_latency", "GPU end timestamp on the host clock (clock model) - signal"),
    fixed<ModeDoc>("fence_latency", "CPU fence wake (blocking wait returned) - signal"),
    fixed<ModeDoc>("poll_latency", "CPU poll wake (a polling thread saw completion) - signal"),
};

namespace detail {

// off_target: false without a target, null when nothing was measured to judge
// by; read into the target gpu_target then reads (or resets, when null).
inline json off_target(const ModeDoc& d) {
  if (!d.mode.gpu_target) return false;
  const std::optional<bool>& off = d.mode.gpu_target->off_target;
  return off ? json(*off) : json(nullptr);
}
inline void read_off_target(const json& v, const std::string& path, bool, ModeDoc& d) {
  if (!v.is_null()) d.mode.gpu_target.emplace().off_target = reading::bool_value(v, path);
}

// warmup: the mode's warm-up block, or null.
inline json warmup(const ModeDoc& d) {
  for (const BlockResult& b : d.blocks)
    if (b.kind == BlockKind::warmup) return write_object(b, kBlockFields);
  return nullptr;
}
inline void read_warmup(const json& v, const std::string& path, bool, ModeDoc& d) {
  if (v.is_null()) return;
  d.blocks.push_back(read_object<BlockResult>(reading::Obj(v, path), kBlockFields));
  d.blocks.back().kind = BlockKind::warmup;
}

}  // namespace detail

// `modes.<mode>` of a latency mode (the caller reads `available` first).
inline constexpr std::array<Field<ModeDoc>, 9> kModeFields = {
    fixed<ModeDoc, true>("available"),
    Field<ModeDoc>{
        .key = "off_target", .write = detail::off_target, .read = detail::read_off_target}
        .lacking_in_older(),
    object<kWorkloadFields, &ModeDoc::mode, &LatencyModeResult::workload>("workload"),
    object<kGpuTargetFields, &ModeDoc::mode, &LatencyModeResult::gpu_target>("gpu_target")
        .lacking_in_older(),
    Field<ModeDoc>{.key = "warmup", .write = detail::warmup, .read = detail::read_warmup}
        .lacking_in_older(),
    blocks_of<&ModeDoc::blocks, BlockKind::measured, kBlockFields>("blocks"),
    object<kModeTotalFields, &ModeDoc::mode>("total"),
    written_group<kModeObserverFields>("observers"),
    Field<ModeDoc>{.key = "present",
                   .write = +[](const ModeDoc& d) { return mode_present_to_json(*d.run, d.mode); },
                   .read =
                       +[](const json& v, const std::string& path, bool, ModeDoc& d) {
                         if (!v.is_null())
                           d.mode.present =
                               reading::read_mode_present(reading::Obj(v, path), *d.run);
                       }}
        .lacking_in_older(),
};

// `settings`: as asked, in every document (a performance_run's has these alone).
inline constexpr std::array<Field<RunMeta>, 3> kRunSettingsFields = {
    field<&RunMeta::mode>("mode"),
    field<&RunMeta::backend>("backend"),
    added<&RunMeta::device>("device"),
};

inline constexpr auto kDesc = &LatencyRun::desc;
inline constexpr auto kSchedule = &LatencyRunDesc::schedule;

// `settings.interval_ns`.
inline constexpr std::array<Field<LatencyRun>, 2> kIntervalNsFields = {
    field<kDesc, kSchedule, &ScheduleDesc::min_interval_ns>("min"),
    field<kDesc, kSchedule, &ScheduleDesc::max_interval_ns>("max"),
};

namespace detail {

// interval_ms: interval_ns in ms, written, not read.
inline json interval_ms(const LatencyRun& r) {
  const ScheduleDesc& s = r.desc.schedule;
  return {{"min", static_cast<double>(s.min_interval_ns) / 1e6},
          {"max", static_cast<double>(s.max_interval_ns) / 1e6}};
}

// The plan: one entry per block index (each mode runs the same sizes),
// whether or not the block ran; what ran is in block_order.
inline json frames_per_block(const LatencyRun& r) {
  json per_block = json::array();
  for (uint32_t b = 0; b < r.desc.blocks; ++b) per_block.push_back(planned_block_frames(r.desc, b));
  return per_block;
}

// The first latency mode's workload (a run without modes: the desc's), read
// into the desc's.
inline json first_workload(const LatencyRun& r) {
  return write_object(r.modes.empty() ? r.desc.workload : r.modes[0].workload, kWorkloadFields);
}
inline void read_first_workload(const json& v, const std::string& path, bool null_ok,
                                LatencyRun& r) {
  if (!(v.is_null() && null_ok))
    r.desc.workload = read_object<FrameWorkload>(reading::Obj(v, path), kWorkloadFields);
}

}  // namespace detail

// `settings` of a latency run after kRunSettingsFields.
inline constexpr std::array<Field<LatencyRun>, 17> kLatencySettingsFields = {
    field<kDesc, kSchedule, &ScheduleDesc::seed>("seed"),
    Field<LatencyRun>{.key = "interval_ms", .write = detail::interval_ms},
    group<kIntervalNsFields>("interval_ns").lacking_in_older(),
    fixed<LatencyRun>("schedule_generator",
                      "splitmix64 + Lemire uniform integer ns, inclusive range"),
    field<kDesc, &LatencyRunDesc::frames>("frames"),
    field<kDesc, &LatencyRunDesc::blocks>("blocks"),
    Field<LatencyRun>{.key = "frames_per_block", .write = detail::frames_per_block},
    added<kDesc, &LatencyRunDesc::warmup_frames>("warmup_frames"),
    added<kDesc, &LatencyRunDesc::cpu_step_iterations>("cpu_step_iterations"),
    Field<LatencyRun>{
        .key = "workload", .write = detail::first_workload, .read = detail::read_first_workload}
        .lacking_in_older(),
    object<kTimerSlackFields, &LatencyRun::timer_slack>("timer_slack").lacking_in_older(),
    added<kDesc, &LatencyRunDesc::bare_comparison>("bare_comparison"),
    added<kDesc, &LatencyRunDesc::poll_completion>("poll_completion"),
    added<kDesc, &LatencyRunDesc::poll_limit_ns>("poll_limit_ns")
        .null_if(unless<kDesc, &LatencyRunDesc::poll_completion>),
    added<kDesc, &LatencyRunDesc::block_lead_ns>("block_lead_ns"),
    added<kDesc, &LatencyRunDesc::turn_warmup_ns>("turn_warmup_ns"),
    added<&LatencyRun::execution>("execution"),
};

namespace detail {

// cpu_fraction_of_core: CPU time over wall time, null without a wall time.
template <auto Cpu, auto Wall>
json cpu_fraction(const OwnerOf<Cpu>& o) {
  return o.*Wall > 0 ? json(static_cast<double>(o.*Cpu) / static_cast<double>(o.*Wall))
                     : json(nullptr);
}

// A polled observer's keys: left out for the others.
inline bool not_polled(const ScreenObserverInfo& o) {
  return !(o.poll_period_ns > 0 && o.available);
}
template <auto M>
constexpr Field<ScreenObserverInfo> polled(std::string_view key) {
  return field<M>(key).omitted_if(not_polled);
}
template <auto M>
constexpr Field<ScreenObserverInfo> polled_ns(std::string_view key) {
  return polled<M>(key).null_if(not_positive<M>);
}

}  // namespace detail

// One of `present.screen_observers`.
inline constexpr std::array<Field<ScreenObserverInfo>, 16> kPresentObserverFields = {
    field<&ScreenObserverInfo::name>("name"),
    field<&ScreenObserverInfo::available>("available"),
    added<&ScreenObserverInfo::reason>("reason").null_if(when<&ScreenObserverInfo::available>),
    added<&ScreenObserverInfo::observes>("observes"),
    added<&ScreenObserverInfo::error>("error"),
    detail::polled<&ScreenObserverInfo::poll_period_ns>("poll_period_ns"),
    detail::polled<&ScreenObserverInfo::polls>("polls"),
    detail::polled<&ScreenObserverInfo::unreadable_polls>("unreadable_polls"),
    detail::polled<&ScreenObserverInfo::frames_seen>("frames_seen"),
    detail::polled_ns<&ScreenObserverInfo::error_p50_ns>("error_p50_ns"),
    detail::polled_ns<&ScreenObserverInfo::error_bound_ns>("error_bound_ns"),
    detail::polled_ns<&ScreenObserverInfo::read_p50_ns>("read_p50_ns"),
    detail::polled_ns<&ScreenObserverInfo::read_p99_ns>("read_p99_ns"),
    detail::polled<&ScreenObserverInfo::cpu_ns>("cpu_ns"),
    detail::polled<&ScreenObserverInfo::wall_ns>("wall_ns"),
    Field<ScreenObserverInfo>{
        .key = "cpu_fraction_of_core",
        .write = detail::cpu_fraction<&ScreenObserverInfo::cpu_ns, &ScreenObserverInfo::wall_ns>,
        .omit_when = detail::not_polled},
};

inline constexpr auto kPresent = &LatencyRun::present;

// `present.present_complete`.
inline constexpr std::array<Field<LatencyRun>, 2> kPresentCompleteFields = {
    field<kPresent, &PresentInfo::present_wait>("available"),
    added<kPresent, &PresentInfo::present_wait_reason>("reason").null_if(
        when<kPresent, &PresentInfo::present_wait>),
};

// `present` of a run with a present path (its writer's and reader's callers
// see to the path: null without one).
inline constexpr std::array<Field<LatencyRun>, 13> kPresentFields = {
    field<kPresent, &PresentInfo::api>("api"),
    added<kPresent, &PresentInfo::surface>("surface"),
    added<kPresent, &PresentInfo::present_mode>("present_mode"),
    added<kPresent, &PresentInfo::modes_offered>("present_modes_offered"),
    fixed<LatencyRun>("mode_preference", "immediate, else mailbox, else fifo"),
    added<kPresent, &PresentInfo::swapchain_images>("swapchain_images"),
    fixed<LatencyRun, 1>("frames_in_flight"),
    added<kPresent, &PresentInfo::image_content>("image_content"),
    added<kPresent, &PresentInfo::hold_ns>("hold_ns"),
    group<kPresentCompleteFields>("present_complete").lacking_in_older(),
    added<&LatencyRun::present_errors>("present_errors"),
    added<&LatencyRun::present_first_error>("first_present_error")
        .null_if(not_positive<&LatencyRun::present_errors>),
    Field<LatencyRun>{.key = "screen_observers",
                      .write =
                          +[](const LatencyRun& r) {
                            return write_records(r.present->observers, kPresentObserverFields);
                          },
                      .read =
                          +[](const json& v, const std::string& path, bool null_ok, LatencyRun& r) {
                            if (!(v.is_null() && null_ok))
                              r.present->observers =
                                  read_records<ScreenObserverInfo>(v, path, kPresentObserverFields);
                          }}
        .lacking_in_older(),
};

// `diagnostics.generator`.
inline constexpr std::array<Field<LatencyRun>, 3> kGeneratorFields = {
    added<&LatencyRun::generator_cpu_ns>("cpu_ns"),
    added<&LatencyRun::generator_wall_ns>("wall_ns"),
    Field<LatencyRun>{
        .key = "cpu_fraction_of_core",
        .write =
            detail::cpu_fraction<&LatencyRun::generator_cpu_ns, &LatencyRun::generator_wall_ns>},
};

// `diagnostics.poll`: `ran` is read; the rest is the settings' and the
// totals', written here too.
inline constexpr std::array<Field<LatencyRun>, 5> kPollFields = {
    fixed<LatencyRun>("what",
                      "a third thread spins on each frame's completion (vkGetFenceStatus, "
                      "cudaEventQuery, glClientWaitSync with timeout 0) while the consumer blocks "
                      "in its wait; poll_cpu is its CPU time per frame (CLOCK_THREAD_CPUTIME_ID), "
                      "us"),
    added<&LatencyRun::polled>("ran"),
    Field<LatencyRun>{.key = "limit_ns",
                      .write = +[](const LatencyRun& r) { return json(r.desc.poll_limit_ns); },
                      .null_when = unless<kDesc, &LatencyRunDesc::poll_completion>},
    Field<LatencyRun>{.key = "cpu_per_frame",
                      .write =
                          +[](const LatencyRun& r) {
                            return value_json(r.total[static_cast<size_t>(Series::poll_cpu)]);
                          }},
    Field<LatencyRun>{
        .key = "frames_past_limit",
        .write = +[](const LatencyRun& r) { return json(r.total_missing.poll_limit); }},
};

namespace detail {

template <auto M>
constexpr Field<RunMeta> kb(std::string_view key) {
  return added<M, &ProcessMemory::rss_kb>(key).null_if(negative<M, &ProcessMemory::rss_kb>);
}

}  // namespace detail

// `diagnostics.process_memory`: kB, null when unknown.
inline constexpr std::array<Field<RunMeta>, 5> kProcessMemoryFields = {
    detail::kb<&RunMeta::memory_before>("rss_kb_before_run"),
    detail::kb<&RunMeta::memory_after>("rss_kb_after_run"),
    added<&RunMeta::memory_after, &ProcessMemory::peak_rss_kb>("peak_rss_kb")
        .null_if(negative<&RunMeta::memory_after, &ProcessMemory::peak_rss_kb>),
    Field<RunMeta>{.key = "peak_growth_kb",
                   .write =
                       +[](const RunMeta& m) {
                         return m.memory_before.rss_kb >= 0 && m.memory_after.peak_rss_kb >= 0
                                    ? json(m.memory_after.peak_rss_kb - m.memory_before.rss_kb)
                                    : json(nullptr);
                       }},
    fixed<RunMeta, sizeof(FrameRecord)>("frame_record_bytes"),
};

namespace detail {

// A number above 0, read strictly (the score's value, components and interval).
inline double positive(const json& v, const std::string& path) {
  const double x = reading::number_value(v, path);
  if (!(x > 0)) reading::fail(path, "expected a finite number above 0");
  return x;
}
template <auto M>
constexpr Field<OwnerOf<M>> positive(std::string_view key) {
  return {.key = key,
          .write = field<M>(key).write,
          .read = +[](const json& v, const std::string& path, bool null_ok, OwnerOf<M>& o) {
            if (!(v.is_null() && null_ok)) o.*M = positive(v, path);
          }};
}

// ci95: [low, high], null without a value.
inline json ci95(const LatencyScore& s) {
  auto opt = [](const std::optional<double>& x) { return x ? json(*x) : json(nullptr); };
  return json::array({opt(s.ci_low), opt(s.ci_high)});
}
inline void read_ci95(const json& v, const std::string& path, bool, LatencyScore& s) {
  if (v.is_null() && !s.value) return;
  if (!v.is_array() || v.size() != 2) reading::fail(path, "expected [low, high]");
  s.ci_low = positive(v[0], path + "[0]");
  s.ci_high = positive(v[1], path + "[1]");
  if (*s.ci_low > *s.ci_high) reading::fail(path, "low above high");
}

}  // namespace detail

// One of `score.components`.
inline constexpr std::array<Field<ScoreComponent>, 5> kScoreComponentFields = {
    field<&ScoreComponent::mode>("mode"),
    fixed<ScoreComponent>("series", "core_latency"),
    field<&ScoreComponent::statistic>("statistic"),
    detail::positive<&ScoreComponent::value_us>("value_us"),
    detail::positive<&ScoreComponent::weight>("weight"),
};

// `score.interval.blocks`.
inline constexpr std::array<Field<LatencyScore>, 2> kScoreBlockFields = {
    field<&LatencyScore::baseline_blocks>("baseline"),
    field<&LatencyScore::loaded_blocks>("loaded"),
};

// `score.interval`.
inline constexpr std::array<Field<LatencyScore>, 6> kScoreIntervalFields = {
    fixed<LatencyScore>("method",
                        "percentile bootstrap: each mode's measured blocks resampled with "
                        "replacement, the components recomputed from their frames"),
    // A double is no template argument for clang 14 (the fuzz build).
    Field<LatencyScore>{.key = "confidence",
                        .write = +[](const LatencyScore&) { return json(kScoreConfidence); }},
    field<&LatencyScore::resamples>("resamples"),
    field<&LatencyScore::seed>("seed"),
    group<kScoreBlockFields>("blocks"),
    fixed<LatencyScore>("covers", "block-to-block noise within this run, not run-to-run noise"),
};

// `score` (docs/score.md): without a value, the reason alone is read.
inline constexpr std::array<Field<LatencyScore>, 7> kScoreFields = {
    Field<LatencyScore>{.key = "formula",
                        .write = field<&LatencyScore::formula>("").write,
                        .read =
                            +[](const json& v, const std::string& path, bool, LatencyScore& s) {
                              s.formula = reading::str_value(v, path);
                              if (s.formula.empty()) reading::fail(path, "empty");
                            }},
    detail::positive<&LatencyScore::value>("value").null_if(unless<&LatencyScore::value>),
    Field<LatencyScore>{.key = "ci95", .write = detail::ci95, .read = detail::read_ci95}.null_if(
        unless<&LatencyScore::value>),
    fixed<LatencyScore, true>("higher_is_better"),
    Field<LatencyScore>{
        .key = "components",
        .write = records<kScoreComponentFields, &LatencyScore::components>("").write,
        .read =
            +[](const json& v, const std::string& path, bool, LatencyScore& s) {
              if (!s.value) return;
              if (!v.is_array() || v.size() != 4) reading::fail(path, "expected an array of 4");
              s.components = read_records<ScoreComponent>(v, path, kScoreComponentFields);
            }},
    group<kScoreIntervalFields>("interval").null_if(unless<&LatencyScore::value>),
    Field<LatencyScore>{.key = "unavailable_reason",
                        .write = field<&LatencyScore::unavailable_reason>("").write,
                        .read =
                            +[](const json& v, const std::string& path, bool, LatencyScore& s) {
                              if (s.value) return;
                              s.unavailable_reason = reading::str_value(v, path);
                              if (s.unavailable_reason.empty())
                                reading::fail(path, "empty, but value is null");
                            }}
        .null_if(when<&LatencyScore::value>),
};

namespace detail {

// A per-frame column of ns or null (absent in that frame), `n` long.
inline std::vector<std::optional<int64_t>> ns_column(const json& v, const std::string& path,
                                                     size_t n) {
  auto column = scalar_value<std::vector<std::optional<int64_t>>>(v, path);
  if (column.size() != n)
    reading::fail(path, fmt::format("{} entries, frame_id has {}", column.size(), n));
  return column;
}

// series_ns: a column per series (results written before the poll observer
// lack its series: no values).
inline json series_ns(const PerFrameMode& m) {
  json by = json::object();
  for (size_t s = 0; s < kSeriesCount; ++s)
    by[std::string(to_string(static_cast<Series>(s)))] = value_json(m.series_ns[s]);
  return by;
}
inline void read_series_ns(const json& v, const std::string& path, bool, PerFrameMode& m) {
  const reading::Obj by(v, path);
  for (size_t s = 0; s < kSeriesCount; ++s) {
    const std::string key(to_string(static_cast<Series>(s)));
    m.series_ns[s] = by.has(key) ? ns_column(by.at(key), by.key_path(key), m.frame_id.size())
                                 : std::vector<std::optional<int64_t>>(m.frame_id.size());
  }
}

}  // namespace detail

// `per_frame.modes.<mode>`: columns of one entry per measured frame.
inline constexpr std::array<Field<PerFrameMode>, 4> kPerFrameModeFields = {
    field<&PerFrameMode::frame_id>("frame_id"),
    Field<PerFrameMode>{.key = "block_index",
                        .write = field<&PerFrameMode::block_index>("").write,
                        .read =
                            +[](const json& v, const std::string& path, bool, PerFrameMode& m) {
                              m.block_index = scalar_value<std::vector<uint32_t>>(v, path);
                              if (m.block_index.size() != m.frame_id.size())
                                reading::fail(path, "not as long as frame_id");
                            }},
    Field<PerFrameMode>{.key = "deadline_ns",
                        .write = field<&PerFrameMode::deadline_ns>("").write,
                        .read =
                            +[](const json& v, const std::string& path, bool, PerFrameMode& m) {
                              m.deadline_ns = detail::ns_column(v, path, m.frame_id.size());
                            }},
    Field<PerFrameMode>{
        .key = "series_ns", .write = detail::series_ns, .read = detail::read_series_ns},
};

// `per_frame` (--per-frame): every measured frame's series, per mode, in ns.
inline constexpr std::array<Field<PerFrameSeries>, 3> kPerFrameFields = {
    fixed<PerFrameSeries>("units", "ns"),
    fixed<PerFrameSeries>("frames", "measured"),
    Field<PerFrameSeries>{.key = "modes",
                          .write =
                              +[](const PerFrameSeries& p) {
                                json by = json::object();
                                for (const PerFrameMode& m : p.modes)
                                  by[m.mode] = write_object(m, kPerFrameModeFields);
                                return by;
                              },
                          .read =
                              +[](const json& v, const std::string& path, bool, PerFrameSeries& p) {
                                const reading::Obj by(v, path);
                                for (auto it = v.begin(); it != v.end(); ++it) {
                                  p.modes.push_back(read_object<PerFrameMode>(by.obj(it.key()),
                                                                              kPerFrameModeFields));
                                  p.modes.back().mode = it.key();
                                }
                              }},
};

// `diagnostics.validation` (with --validation).
inline constexpr std::array<Field<ValidationReport>, 2> kValidationFields = {
    field<&ValidationReport::error_count>("errors"),
    field<&ValidationReport::messages>("messages"),
};

// `diagnostics.bookkeeping.modes.<mode>`.
inline constexpr std::array<Field<BookkeepingSummary>, 4> kBookkeepingModeFields = {
    added<&BookkeepingSummary::frames_overlapped>("frames_overlapped"),
    added<&BookkeepingSummary::overlap>("overlap"),
    added<&BookkeepingSummary::core_latency_overlapped>("core_latency_overlapped"),
    added<&BookkeepingSummary::core_latency_clear>("core_latency_clear"),
};

// One of `diagnostics.raw_sleep.blocks`.
inline constexpr std::array<Field<BlockResult>, 4> kRawSleepBlockFields = {
    field<&BlockResult::index>("index"),
    field<&BlockResult::order>("order"),
    field<&BlockResult::frames_run>("frames_run"),
    added<&BlockResult::raw_lateness>("lateness"),
};

// `diagnostics.bare_loop` (--bare): the reference path's frames, as a mode's
// total; `latency` is their fence latency.
inline constexpr std::array<Field<LatencyRun>, 5> kBareLoopFields = {
    spread<&LatencyRun::reference_total, kSeriesFields>(),
    text_or_null<&LatencyRun::reference_what>("what").lacking_in_older(),
    added<&LatencyRun::bare_total>("latency"),
    object<kMissingMarkerFields, &LatencyRun::reference_missing>("missing_markers")
        .lacking_in_older(),
    blocks_of<&LatencyRun::blocks, BlockKind::bare_loop, kBlockFields>("blocks").lacking_in_older(),
};

// `diagnostics.raw_sleep` (--bare): cpu_ns and wall_ns are null when unknown
// (a schema_version 1 document read back).
inline constexpr std::array<Field<LatencyRun>, 6> kRawSleepFields = {
    fixed<LatencyRun>("what",
                      "clock_nanosleep(TIMER_ABSTIME) alone on the measured blocks' deadlines"),
    added<&LatencyRun::raw_total>("lateness"),
    added<&LatencyRun::raw_sleep_cpu_ns>("cpu_ns").null_if(
        not_positive<&LatencyRun::raw_sleep_wall_ns>),
    added<&LatencyRun::raw_sleep_wall_ns>("wall_ns").null_if(
        not_positive<&LatencyRun::raw_sleep_wall_ns>),
    Field<LatencyRun>{
        .key = "cpu_fraction_of_core",
        .write =
            detail::cpu_fraction<&LatencyRun::raw_sleep_cpu_ns, &LatencyRun::raw_sleep_wall_ns>},
    blocks_of<&LatencyRun::blocks, BlockKind::raw_sleep, kRawSleepBlockFields>("blocks")
        .lacking_in_older(),
};

inline constexpr auto kHead = &DeviceSectionResult::head;

namespace detail {

// uuid and pci_bus_id: null without a physical device, or when the API does not say.
template <auto M>
bool unknown(const DeviceSectionResult& s) {
  return !s.head.physical_device || (s.head.*M).empty();
}

inline void read_status(const json& v, const std::string& path, bool, DeviceSectionResult& s) {
  s.status = reading::str_value(v, path);
  if (s.status != "ok" && s.status != "partial" && s.status != "failed")
    reading::fail(path, "'" + s.status + "' is not ok, partial or failed");
}

}  // namespace detail

// One of `devices_run.sections` (and of `clocks --json`'s `per_device`, with
// a result of its own). `result`, a whole document, is read by the caller.
inline constexpr std::array<Field<DeviceSectionResult>, 10> kSectionFields = {
    field<kHead, &DeviceSectionHead::section>("section"),
    field<kHead, &DeviceSectionHead::backend>("backend"),
    field<kHead, &DeviceSectionHead::selector>("selector"),
    text_or_null<kHead, &DeviceSectionHead::name>("name"),
    field<kHead, &DeviceSectionHead::physical_device>("physical_device"),
    field<kHead, &DeviceSectionHead::uuid>("uuid").null_if(
        detail::unknown<&DeviceSectionHead::uuid>),
    field<kHead, &DeviceSectionHead::pci_bus_id>("pci_bus_id")
        .null_if(detail::unknown<&DeviceSectionHead::pci_bus_id>),
    Field<DeviceSectionResult>{.key = "status",
                               .write = field<&DeviceSectionResult::status>("").write,
                               .read = detail::read_status},
    text_or_null<&DeviceSectionResult::failure>("failure"),
    Field<DeviceSectionResult>{.key = "result",
                               .write =
                                   +[](const DeviceSectionResult& s) {
                                     return s.result.empty() ? json(nullptr)
                                                             : run_result_to_json(s.result.front());
                                   }},
};

// `devices_run` of a several-device run: its sections are read by the caller.
inline constexpr std::array<Field<RunResult>, 3> kDevicesRunFields = {
    fixed<RunResult>("interleaving",
                     "block by block: each block (in plan order) of every device in section "
                     "order, one block at a time, the same deadlines for blocks of one index"),
    field<&RunResult::top_section>("top_level_section"),
    Field<RunResult>{
        .key = "sections",
        .write = +[](const RunResult& r) { return write_records(r.sections, kSectionFields); }},
};

// A capture's `program`.
inline constexpr std::array<Field<CapturedProgram>, 5> kCapturedProgramFields = {
    field<&CapturedProgram::argv>("argv"),
    field<&CapturedProgram::pid>("pid"),
    field<&CapturedProgram::exit_code>("exit_code"),
    field<&CapturedProgram::signal>("signal"),
    field<&CapturedProgram::running_when_written>("running_when_written"),
};

// A capture's `capture`: how the recording stopped.
inline constexpr std::array<Field<CaptureStop>, 8> kCaptureStopFields = {
    field<&CaptureStop::stopped_by>("stopped_by"),
    field<&CaptureStop::frames_limit>("frames_limit"),
    field<&CaptureStop::seconds_limit>("seconds_limit"),
    added<&CaptureStop::terminate>("terminate"),
    added<&CaptureStop::signal_sent>("signal_sent"),
    added<&CaptureStop::records_dropped>("records_dropped"),
    added<&CaptureStop::records_malformed>("records_malformed"),
    added<&CaptureStop::records_unknown>("records_unknown"),
};

// One of a capture's `sources`.
inline constexpr std::array<Field<CaptureSourceInfo>, 7> kCaptureSourceFields = {
    field<&CaptureSourceInfo::pid>("pid"),
    field<&CaptureSourceInfo::api>("api"),
    text_or_null<&CaptureSourceInfo::device>("device"),
    text_or_null<&CaptureSourceInfo::clock_method>("clock_method"),
    field<&CaptureSourceInfo::source>("source"),
    text_or_null<&CaptureSourceInfo::present_method>("present_method").lacking_in_older(),
    field<&CaptureSourceInfo::ended>("ended"),
};

// One of a capture's `unavailable`.
inline constexpr std::array<Field<CaptureUnavailable>, 3> kCaptureUnavailableFields = {
    field<&CaptureUnavailable::name>("name"),
    field<&CaptureUnavailable::reason>("reason"),
    field<&CaptureUnavailable::pid>("pid"),
};

// One of a capture's `screen_observers`.
inline constexpr std::array<Field<CaptureScreenObserver>, 11> kScreenObserverFields = {
    field<&CaptureScreenObserver::name>("name"),
    field<&CaptureScreenObserver::observes>("observes"),
    field<&CaptureScreenObserver::available>("available"),
    text_or_null<&CaptureScreenObserver::reason>("reason"),
    text_or_null<&CaptureScreenObserver::display>("display"),
    field<&CaptureScreenObserver::windows>("windows"),
    field<&CaptureScreenObserver::frames_watched>("frames_watched"),
    field<&CaptureScreenObserver::frames_matched>("frames_matched"),
    field<&CaptureScreenObserver::events>("events"),
    field<&CaptureScreenObserver::events_unmatched>("events_unmatched"),
    field<&CaptureScreenObserver::figures>("figures"),
};

// A capture's `input` (with --input).
inline constexpr std::array<Field<CaptureInput>, 23> kCaptureInputFields = {
    field<&CaptureInput::spec>("spec"),
    field<&CaptureInput::seed>("seed"),
    field<&CaptureInput::min_interval_ns>("min_interval_ns"),
    field<&CaptureInput::max_interval_ns>("max_interval_ns"),
    field<&CaptureInput::reaction>("reaction"),
    text_or_null<&CaptureInput::region>("region"),
    text_or_null<&CaptureInput::display>("display"),
    field<&CaptureInput::window>("window").null_if(not_positive<&CaptureInput::window>),
    text_or_null<&CaptureInput::window_found_by>("window_found_by"),
    field<&CaptureInput::timer_slack_ns>("timer_slack_ns")
        .null_if(negative<&CaptureInput::timer_slack_ns>),
    field<&CaptureInput::scheduled>("scheduled"),
    field<&CaptureInput::sent>("sent"),
    field<&CaptureInput::seen>("seen"),
    field<&CaptureInput::other_events>("other_events"),
    field<&CaptureInput::assigned>("assigned"),
    field<&CaptureInput::not_assigned>("not_assigned"),
    field<&CaptureInput::reactions>("reactions").null_if(unless<&CaptureInput::reaction>),
    field<&CaptureInput::no_reaction>("no_reaction"),
    field<&CaptureInput::injector_lateness>("injector_lateness"),
    field<&CaptureInput::timer_lateness>("timer_lateness"),
    field<&CaptureInput::figures>("figures"),
    field<&CaptureInput::server_offset_min_ms>("server_offset_min_ms"),
    field<&CaptureInput::server_offset_max_ms>("server_offset_max_ms"),
};

// A capture's `display.flags`: shown frames by the compositor's flags.
inline constexpr std::array<Field<CaptureDisplay>, 4> kDisplayFlagFields = {
    field<&CaptureDisplay::vsync>("vsync"),
    field<&CaptureDisplay::hw_clock>("hw_clock"),
    field<&CaptureDisplay::hw_completion>("hw_completion"),
    field<&CaptureDisplay::zero_copy>("zero_copy"),
};

// A capture's `display`.
inline constexpr std::array<Field<CaptureDisplay>, 4> kDisplayFields = {
    field<&CaptureDisplay::shown>("shown"),
    field<&CaptureDisplay::discarded>("discarded"),
    added<&CaptureDisplay::refresh_us>("refresh_us"),
    group<kDisplayFlagFields>("flags"),
};

// A capture's `overhead`: the layer's distributions (of the result), then
// what the capture cost the program (CaptureOverhead).
inline constexpr std::array<Field<CaptureOverhead>, 14> kOverheadFields = {
    added<&CaptureOverhead::threads_cpu_per_frame_us>("threads_cpu_per_frame_us"),
    added<&CaptureOverhead::layer_cpu_per_frame_us>("layer_cpu_per_frame_us"),
    added<&CaptureOverhead::driver_cpu_per_frame_us>("driver_cpu_per_frame_us"),
    added<&CaptureOverhead::gpu_per_frame_us>("gpu_per_frame_us"),
    added<&CaptureOverhead::layer_cpu_us>("layer_cpu_us"),
    added<&CaptureOverhead::driver_cpu_us>("driver_cpu_us"),
    added<&CaptureOverhead::gpu_us>("gpu_us"),
    added<&CaptureOverhead::threads>("threads"),
    added<&CaptureOverhead::bracketed_submits>("bracketed_submits"),
    added<&CaptureOverhead::leaves_out>("leaves_out"),
    added<&CaptureOverhead::gpu_span_budget_percent>("gpu_span_budget_percent"),
    added<&CaptureOverhead::gpu_span_price_us>("gpu_span_price_us"),
    text_or_null<&CaptureOverhead::gpu_span_price_from>("gpu_span_price_from").lacking_in_older(),
    added<&CaptureOverhead::setup_ms>("setup_ms"),
};

inline constexpr std::array<Field<CaptureResult>, 3> kLayerCostFields = {
    field<&CaptureResult::layer_cpu_per_submit>("layer_cpu_per_submit"),
    field<&CaptureResult::layer_cpu_per_present>("layer_cpu_per_present"),
    spread<&CaptureResult::overhead, kOverheadFields>(),
};

// `bracketing[].before_us` and `.after_us`.
inline constexpr std::array<Field<CaptureBracketing>, 3> kBracketBeforeFields = {
    field<&CaptureBracketing::before_p50_us>("p50"),
    field<&CaptureBracketing::before_min_us>("min"),
    field<&CaptureBracketing::before_max_us>("max"),
};
inline constexpr std::array<Field<CaptureBracketing>, 3> kBracketAfterFields = {
    field<&CaptureBracketing::after_p50_us>("p50"),
    field<&CaptureBracketing::after_min_us>("min"),
    field<&CaptureBracketing::after_max_us>("max"),
};

// One of a capture's `bracketing`: what the layer's command buffers cost a
// submission, per queue.
inline constexpr std::array<Field<CaptureBracketing>, 7> kBracketingFields = {
    field<&CaptureBracketing::pid>("pid"),
    field<&CaptureBracketing::queue_family>("queue_family"),
    field<&CaptureBracketing::queue_index>("queue_index"),
    field<&CaptureBracketing::rounds>("rounds"),
    group<kBracketBeforeFields>("before_us"),
    group<kBracketAfterFields>("after_us"),
    field<&CaptureBracketing::cpu_per_submit_us>("cpu_per_submit_us"),
};

// `fps` of a capture and of each `per_swapchain[]`: derived from the frame
// times (CaptureResult::fps), written, not read.
inline constexpr std::array<Field<CaptureFps>, 5> kFpsFields = {
    fixed<CaptureFps>("frame_time", "between_presents"),
    field<&CaptureFps::frame_times>("frame_times"),
    field<&CaptureFps::average>("average"),
    field<&CaptureFps::low_1_percent>("low_1_percent"),
    field<&CaptureFps::low_0_1_percent>("low_0_1_percent"),
};

// A capture's `frame_times`: columns of one entry per bucket.
inline constexpr std::array<Field<CaptureFrameTimes>, 7> kFrameTimeFields = {
    fixed<CaptureFrameTimes>("frame_time", "between_presents"),
    field<&CaptureFrameTimes::frames_per_bucket>("frames_per_bucket"),
    column<&CaptureFrameTimes::buckets, &CaptureFrameTimeBucket::t_s, true>("t_s"),
    column<&CaptureFrameTimes::buckets, &CaptureFrameTimeBucket::frames>("frames"),
    column<&CaptureFrameTimes::buckets, &CaptureFrameTimeBucket::min_us>("min_us"),
    column<&CaptureFrameTimes::buckets, &CaptureFrameTimeBucket::mean_us>("mean_us"),
    column<&CaptureFrameTimes::buckets, &CaptureFrameTimeBucket::max_us>("max_us"),
};

// One of a capture's `per_swapchain`.
inline constexpr std::array<Field<CaptureSwapchainFigures>, 6> kSwapchainFields = {
    field<&CaptureSwapchainFigures::pid>("pid"),
    field<&CaptureSwapchainFigures::source>("source"),
    field<&CaptureSwapchainFigures::swapchain>("swapchain"),
    field<&CaptureSwapchainFigures::frames>("frames"),
    Field<CaptureSwapchainFigures>{
        .key = "fps",
        .write =
            +[](const CaptureSwapchainFigures& w) { return write_object(w.fps(), kFpsFields); }},
    field<&CaptureSwapchainFigures::figures>("figures"),
};

// A capture document after its head (docs/capture.md, "The result").
inline constexpr std::array<Field<CaptureResult>, 21> kCaptureFields = {
    object<kCapturedProgramFields, &CaptureResult::program>("program"),
    object<kCaptureStopFields, &CaptureResult::stop>("capture"),
    records<kCaptureSourceFields, &CaptureResult::sources>("sources"),
    field<&CaptureResult::frames>("frames"),
    field<&CaptureResult::submits>("submits"),
    added<&CaptureResult::submits_without_work>("submits_without_work"),
    added<&CaptureResult::gpu_spans_missing>("gpu_spans_missing"),
    added<&CaptureResult::frames_with_missing_gpu>("frames_with_missing_gpu"),
    added<&CaptureResult::submit_spans>("submit_spans"),
    added<&CaptureResult::present_complete>("present_complete"),
    object<kDisplayFields, &CaptureResult::display>("display").lacking_in_older(),
    Field<CaptureResult>{
        .key = "fps",
        .write = +[](const CaptureResult& c) { return write_object(c.fps(), kFpsFields); }},
    object<kFrameTimeFields, &CaptureResult::frame_times>("frame_times").lacking_in_older(),
    field<&CaptureResult::figures>("figures"),
    field<&CaptureResult::submit_figures>("submit_figures"),
    records<kSwapchainFields, &CaptureResult::per_swapchain>("per_swapchain").lacking_in_older(),
    group<kLayerCostFields>("overhead").lacking_in_older(),
    records<kBracketingFields, &CaptureResult::bracketing>("bracketing").lacking_in_older(),
    records<kCaptureUnavailableFields, &CaptureResult::unavailable>("unavailable"),
    records<kScreenObserverFields, &CaptureResult::screen_observers>("screen_observers")
        .lacking_in_older(),
    object<kCaptureInputFields, &CaptureResult::input>("input").omitted_if(
        unless<&CaptureResult::input>),
};

}  // namespace latlab::fields
