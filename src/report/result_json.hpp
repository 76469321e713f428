// The result's JSON documents as nlohmann objects, for the report's own
// writers and the CLI (private: nlohmann stays out of the public headers;
// users get text from latency_run_json()).
#pragma once

#include <nlohmann/json.hpp>

#include "latlab/bench/latency_report.hpp"
#include "latlab/bench/run_result.hpp"

namespace latlab {

// A Distribution as JSON: count and missing always; the statistics (us) are
// null when count is 0 (an empty distribution has no mean, not a 0 mean).
nlohmann::ordered_json distribution_to_json(const Distribution& d);

// The whole result document of a latency run alone (no Loaded or
// Performance outcome, no per_frame), with the run's score computed from its
// per-frame markers.
nlohmann::ordered_json latency_run_to_json(const LatencyRun& run, const RunMeta& meta);

// The JSON reporter: the whole result document of `r`, built in one pass
// (docs/result-schema.md): a latency run with Loaded's calibration and
// Performance, a Performance-only run, or several devices (`devices_run`).
// `score` is RunResult::score as it is (attach_latency_scores() sets it);
// none when it is nullopt.
nlohmann::ordered_json run_result_to_json(const RunResult& r);

// `load_calibration.size` (and `modes.loaded.load_size`) of the result.
nlohmann::ordered_json load_size_to_json(const LoadSizeChoice& c);

// `clock_model` of the result.
nlohmann::ordered_json clock_model_to_json(const ClockModelReport& cm);

// `unavailable` of the result: the run's own list, then Loaded and
// Performance when they were asked for and did not run (a run without
// latency blocks: its device's missing capabilities; a capture: none here,
// its sources' are in its own section).
std::vector<MissingCapability> result_unavailable(const RunResult& r);

// `settings` of the result (of its top section with several devices; an
// empty object for a capture, which has none).
nlohmann::ordered_json result_settings_to_json(const RunResult& r);

// `load_calibration` of the result: chosen complexity, achieved median and
// spread (verification frames, ms), every step.
nlohmann::ordered_json load_calibration_to_json(const LoadCalibrationReport& r);

// `modes.performance` of the result: the fixed workload, GPU ms per frame and
// fps distributions (ms and frames/s, not us).
nlohmann::ordered_json performance_to_json(const PerformanceReport& r);

// `settings` of a run without latency blocks: mode, backend, device.
nlohmann::ordered_json performance_settings_to_json(const RunMeta& meta);

// A whole result document for a run without latency blocks (`--mode
// performance`): the header of latency_run_to_json (kind "performance_run"),
// `modes.performance` and `unavailable`.
nlohmann::ordered_json performance_run_to_json(const PerformanceReport& r, const DeviceInfo& device,
                                               const RunMeta& meta);

}  // namespace latlab
