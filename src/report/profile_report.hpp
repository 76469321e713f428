// What `latlab profile` prints, from the typed results of run_profile and
// run_profile_queues (latlab/bench/profile_run.hpp, profile_queues_run.hpp):
// text, JSON (the shapes in profile_json.hpp) and findings on stderr.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "latlab/bench/backend.hpp"
#include "latlab/bench/profile_queues_run.hpp"
#include "latlab/bench/profile_run.hpp"
#include "latlab/clock_model.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_trace.hpp"

namespace latlab {

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
