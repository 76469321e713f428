// What `latlab profile` prints, shared by its driver (apps/latlab/profile.cpp, over every
// backend's rig) and `--queues all` (profile_queues.cpp): one JSON shape for
// the zone table, the counters and the clock fit, and the newest frame's tree.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "latlab/bench/backend.hpp"
#include "latlab/bench/profile_queues_run.hpp"
#include "latlab/bench/profile_run.hpp"
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
// The text output's lines every backend prints: "  host mapping: ..." with the
// fit (before the table), the counters line, and the trace line (when written).
void print_host_mapping_line(const std::string& mapping,
                             const std::shared_ptr<const ClockFit>& fit);
void print_counters_line(const ProfilerCounters& c);
void print_trace_line(const std::string& path, const ChromeTraceWriter& trace, bool written,
                      bool partial);
// Says on stderr how many zones have a time when that is not `expected`.
void warn_untimed_zones(const ProfilerCounters& c, uint64_t expected);
// Opens the streamed trace at `path` (empty: no trace, true); false, with the
// reason on stderr, when it cannot be written.
bool open_trace_file(const std::string& path, ChromeTraceWriter& trace);
// Closes the trace opened by open_trace_file (not open: true): whole, or
// partial with `partial_reason` when that is not empty; false, with the
// reason on stderr, when it could not be written.
bool close_trace_file(ChromeTraceWriter& trace, const std::string& partial_reason);
// Prints the tree of the newest retained frame with zones (the very last
// one closed is empty); nothing if none is retained.
void print_newest_frame_tree(const GpuProfiler& prof, const std::string& queue_name);

// `latlab profile` on one rig (profile_result_report.cpp): the JSON document
// of `result` (run on `backend`, its rig opened with `rig`), on stdout.
void print_profile_json(const ProfilePlan& plan, const ProfileRigDesc& rig, Backend backend,
                        const ProfileResult& result);
// The text output: host mapping, stat table, newest frame, counters, notes,
// trace line, footer.
void print_profile_text(const ProfilePlan& plan, const ProfileResult& result);
// On stderr, after a run: why it stopped early, the zones without a time,
// why the trace could not be written, the rig's own findings.
void print_profile_findings(const ProfileResult& result);

// `latlab profile --queues all` and device lists
// (profile_queues_report.cpp): the queues a device used, its roles' notes and
// the families left out; its tables, overlaps and footer; its findings on
// stderr (zones without a time, validation messages); the JSON document of
// every device (`several`: {"devices": [...]}), on stdout.
void print_queues_used(const QueuesDeviceResult& device);
void print_queues_device_text(const QueuesDeviceResult& device);
void print_queues_device_findings(const QueuesDeviceResult& device);
void print_profile_queues_json(const QueuesProfilePlan& plan, const ProfileRigDesc& rig,
                               const QueuesProfileResult& result, bool several);

}  // namespace latlab
