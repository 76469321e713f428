// Reports of a latency run: the JSON result (docs/result-schema.md,
// schema_version 3), the per-frame CSV, the stdout table, and atomic file
// writes. Nothing here measures; it only formats what LatencyRun holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "latlab/bench/latency_run.hpp"
#include "latlab/bench/load_calibration.hpp"
#include "latlab/bench/performance_mode.hpp"
#include "latlab/result.hpp"
#include "latlab/stats.hpp"
#include "latlab/version.hpp"

namespace latlab {

// The result document's version: 2 added diagnostics.raw_sleep.cpu_ns and
// wall_ns (1 had only their ratio); 3 added `score` (docs/score.md).
// Readers take 1 to 3.
inline constexpr int kResultSchemaVersion = 3;

struct MachineInfo {
  std::string hostname;
  std::string os;         // /etc/os-release PRETTY_NAME, "" if unknown
  std::string kernel;     // uname: sysname release version
  std::string arch;       // uname machine
  std::string cpu_model;  // /proc/cpuinfo "model name", "" if unknown
  uint32_t logical_cpus = 0;
  bool operator==(const MachineInfo&) const = default;
};
MachineInfo collect_machine_info();

// CPUs this process may run on (sched_getaffinity).
int usable_cpus();

// --poll auto turns the poll observer on with at least this many usable CPUs.
inline constexpr int kPollAutoMinCpus = 4;
// Whether --poll `mode` (auto, on, off) runs the poll observer here: auto
// only with kPollAutoMinCpus, where the spinning thread does not compete with
// the blocking waiter and the generator (docs/BENCHMARKS.md).
bool poll_observer_on(const std::string& mode);

// The process's resident memory (/proc/self/status VmRSS, VmHWM), kB; -1 if unknown.
struct ProcessMemory {
  int64_t rss_kb = -1;
  int64_t peak_rss_kb = -1;
  bool operator==(const ProcessMemory&) const = default;
};
ProcessMemory read_process_memory();

// Vulkan validation-layer findings of the run (when validation was on).
struct ValidationReport {
  uint64_t error_count = 0;
  std::vector<std::string> messages;  // oldest first, bounded by the backend
  bool operator==(const ValidationReport&) const = default;
};

// What the CLI knows that the run does not.
struct RunMeta {
  std::string mode = "baseline";
  std::string backend;  // as requested
  std::string device;   // selector as given ("" = default)
  std::string command_line;
  std::string created_utc;  // ISO 8601, e.g. 2026-01-31T12:00:00Z
  std::string tool_version = kVersion;
  MachineInfo machine;
  ProcessMemory memory_before;  // just before the run started (after the device opened)
  ProcessMemory memory_after;   // after the run, before the report was built
  std::optional<ValidationReport> validation;  // set when validation was on
  bool operator==(const RunMeta&) const = default;
};

// ISO 8601 UTC of now.
std::string utc_now_iso8601();

// The whole result document (JSON, see docs/result-schema.md) as text.
std::string latency_run_json(const LatencyRun& run, const RunMeta& meta);

// Writes `content` to `path`. A regular file (or a new name) atomically: a
// temporary ".latlab-XXXXXX" in the same directory, fsync, rename over
// `path`, fsync of the directory; on any failure `path` is untouched and the
// temporary file is removed. A replaced file keeps its mode and (where
// permitted) owner; its other hard links keep the old contents. A symbolic
// link is followed and kept. A FIFO, a character device (/dev/null), "-" or
// /dev/stdout are written through, not atomically. A directory, block device
// or socket is refused.
Result<void> write_file_atomic(const std::string& path, std::string_view content);

// Per-frame markers of the warm-up and measured frames as CSV (one row per
// scheduled frame; absent markers are empty cells), written atomically.
Result<void> write_frames_csv(const std::string& path, const LatencyRun& run);

struct RunResult;

// The per-frame CSV of a latency result: one file for every device section.
// With several sections each row starts with `device_section` (the section's
// position); with one device (or one section) the file is the LatencyRun's,
// byte for byte. Error when no section has a latency run.
Result<void> write_frames_csv(const std::string& path, const RunResult& result);

// The readable summary printed on stdout.
std::string format_run_table(const LatencyRun& run);

// The readable summary of Performance mode.
std::string format_performance(const PerformanceReport& r);

}  // namespace latlab
