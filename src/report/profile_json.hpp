// The JSON shapes `latlab profile` writes for one and several queues: the
// zone table, the counters, the clock fit and the trace. Private to the
// report (profile_report.cpp, profile_result_report.cpp,
// profile_queues_report.cpp).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "latlab/clock_model.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_trace.hpp"

namespace latlab {

// The zone table: one object per zone name, in first-seen order.
nlohmann::json profile_stats_json(const std::vector<ZoneStat>& stats);
// frames_collected, zones_ok, zones_dropped, zones_invalid, zones_overlapped,
// frames_without_queries.
nlohmann::json profile_counters_json(const ProfilerCounters& counters);
// pairs_used, drift_ppm, base_error_ns, estimated; null without a fit.
nlohmann::json profile_clock_fit_json(const std::shared_ptr<const ClockFit>& fit);
// `trace` of the JSON output: path, spans, gpu_zones_unmapped, spans_late,
// written, partial.
nlohmann::json profile_trace_json(const std::string& path, const ChromeTraceWriter& trace,
                                  bool written, bool partial);
}  // namespace latlab
