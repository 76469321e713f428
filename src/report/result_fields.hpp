// The result document's sections that one field table declares (the
// facility is field_table.hpp): the writer (result_json.cpp, json_parts.cpp),
// the reader (read_*.cpp) and the schema doc's check
// (tests/unit/result_fields_test.cpp) all use these. Private to src/report.
#pragma once

#include <array>

#include "latlab/bench/latency_report.hpp"
#include "latlab/bench/latency_run.hpp"
#include "latlab/bench/signal_generator.hpp"
#include "latlab/bench/tick_mapper.hpp"
#include "latlab/core/latency_device.hpp"
#include "report/field_table.hpp"

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

// The rest of a latency run's `device` (tick_period_ns is derived from the
// fraction: written, not read).
inline constexpr std::array<Field<DeviceInfo>, 7> kDeviceTimingFields = {
    Field<DeviceInfo>{.key = "tick_period_ns", .write = detail::tick_period_ns},
    Field<DeviceInfo>{.key = "tick_period_fraction",
                      .write = detail::tick_fraction,
                      .read = detail::read_tick_fraction}
        .lacking_in_older(),
    Field<DeviceInfo>{
        .key = "timestamp_valid_bits", .write = detail::valid_bits, .read = detail::read_valid_bits}
        .lacking_in_older(),
    field<&DeviceInfo::can_time>("can_time").lacking_in_older(),
    text_or_null<&DeviceInfo::calibration_domain>("calibration_domain").lacking_in_older(),
    field<&DeviceInfo::calibration_estimated>("calibration_estimated").lacking_in_older(),
    records<&DeviceInfo::missing, kCapabilityFields>("missing_capabilities").lacking_in_older(),
};

// One of `clock_model.pairs`.
inline constexpr std::array<Field<CalibrationPair>, 4> kCalibrationPairFields = {
    field<&CalibrationPair::device_ticks>("device_ticks"),
    field<&CalibrationPair::host_ns>("host_ns"),
    field<&CalibrationPair::max_deviation_ns>("max_deviation_ns"),
    field<&CalibrationPair::estimated>("estimated"),
};

namespace detail {
inline bool fit_available(const ClockModelReport& c) { return c.available; }
inline bool no_fit(const ClockModelReport& c) { return !c.available; }
}  // namespace detail

// `clock_model`: every key but `available` is one older documents may lack.
inline constexpr std::array<Field<ClockModelReport>, 21> kClockModelFields = {
    field<&ClockModelReport::available>("available"),
    field<&ClockModelReport::reason>("reason").null_if(detail::fit_available).lacking_in_older(),
    field<&ClockModelReport::source>("source").lacking_in_older(),
    field<&ClockModelReport::drift_ppm>("drift_ppm").null_if(detail::no_fit).lacking_in_older(),
    field<&ClockModelReport::drift_error_ppm>("drift_error_ppm")
        .null_if(detail::no_fit)
        .lacking_in_older(),
    field<&ClockModelReport::error_bound_ns>("error_bound_ns")
        .null_if(detail::no_fit)
        .lacking_in_older(),
    field<&ClockModelReport::pairs_used>("pairs_used").lacking_in_older(),
    field<&ClockModelReport::pairs_accepted>("pairs_accepted").lacking_in_older(),
    field<&ClockModelReport::pairs_rejected>("pairs_rejected").lacking_in_older(),
    field<&ClockModelReport::refreshes>("refreshes").lacking_in_older(),
    field<&ClockModelReport::failed_refreshes>("failed_refreshes").lacking_in_older(),
    field<&ClockModelReport::max_refresh_cost_ns>("max_refresh_cost_ns").lacking_in_older(),
    field<&ClockModelReport::refresh_interval_ns>("refresh_interval_ns").lacking_in_older(),
    field<&ClockModelReport::estimated>("estimated").lacking_in_older(),
    text_or_null<&ClockModelReport::frame_mapping>("frame_mapping").lacking_in_older(),
    field<&ClockModelReport::block_end_pairs>("block_end_pairs").lacking_in_older(),
    field<&ClockModelReport::failed_block_end_pairs>("failed_block_end_pairs").lacking_in_older(),
    field<&ClockModelReport::frames_between_pairs>("frames_between_pairs").lacking_in_older(),
    field<&ClockModelReport::frames_outside_pairs>("frames_outside_pairs").lacking_in_older(),
    field<&ClockModelReport::interpolation_misfit_ns>("interpolation_misfit_ns").lacking_in_older(),
    records<&ClockModelReport::pairs, kCalibrationPairFields>("pairs").lacking_in_older(),
};

// `settings.timer_slack`: -1 (unknown) slacks are written null.
inline constexpr std::array<Field<TimerSlack>, 6> kTimerSlackFields = {
    field<&TimerSlack::requested>("requested"),
    field<&TimerSlack::requested_ns>("requested_ns")
        .null_if(+[](const TimerSlack& t) { return !t.requested; })
        .lacking_in_older(),
    field<&TimerSlack::previous_ns>("previous_ns")
        .null_if(+[](const TimerSlack& t) { return t.previous_ns < 0; })
        .lacking_in_older(),
    field<&TimerSlack::obtained_ns>("obtained_ns")
        .null_if(+[](const TimerSlack& t) { return t.obtained_ns < 0; })
        .lacking_in_older(),
    field<&TimerSlack::applied>("applied").lacking_in_older(),
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
    field<&MissingBreakdown::gpu_not_ok>("gpu_timestamps_not_ok").lacking_in_older(),
    field<&MissingBreakdown::gpu_unmapped>("gpu_timestamps_unmapped").lacking_in_older(),
    field<&MissingBreakdown::fence_not_ok>("fence_not_ok").lacking_in_older(),
    field<&MissingBreakdown::poll_limit>("poll_limit").lacking_in_older(),
    field<&MissingBreakdown::poll_not_ok>("poll_not_ok").lacking_in_older(),
    field<&MissingBreakdown::device_error>("device_error").lacking_in_older(),
    Field<MissingBreakdown>{.key = "gpu_status_counts",
                            .write = detail::status_counts,
                            .read = detail::read_status_counts}
        .lacking_in_older(),
};

// A warm-up, measured or bare-loop block's own keys, after its series.
inline constexpr std::array<Field<BlockResult>, 10> kBlockFields = {
    field<&BlockResult::index>("index"),
    field<&BlockResult::order>("order"),
    field<&BlockResult::first_device_frame>("first_frame_id").lacking_in_older(),
    field<&BlockResult::frames_planned>("frames_planned").lacking_in_older(),
    field<&BlockResult::frames_run>("frames_run"),
    field<&BlockResult::start_ns>("start_ns").lacking_in_older(),
    field<&BlockResult::end_ns>("end_ns").lacking_in_older(),
    object<&BlockResult::missing, kMissingMarkerFields>("missing_markers").lacking_in_older(),
    field<&BlockResult::consumer_behind>("consumer_behind_frames").lacking_in_older(),
    field<&BlockResult::generator_cpu_ns>("generator_cpu_ns").lacking_in_older(),
};

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
    Field<GpuTargetCheck>{
        .key = "measured",  // the definition, in words: not read
        .write =
            +[](const GpuTargetCheck&) { return json("median of total.stages.gpu_execution"); }},
    field<&GpuTargetCheck::error_fraction>("error_fraction"),
    object<&GpuTargetCheck::warmup_check, kWarmupCheckFields>("warmup_check").lacking_in_older(),
};

}  // namespace latlab::fields
