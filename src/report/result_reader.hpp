// The result reader: a `latlab run` result (docs/result-schema.md) parsed
// back into a model, for `latlab store add`, `latlab compare` and `latlab
// report`: the one place that decides what a valid result is. Strict:
// schema_version must be one this build reads, every key the model needs must
// be there with its type; an error names the key path ("modes.baseline.
// blocks[2].stages.gpu_execution.p50") or, for text that is not JSON, the
// byte where parsing stopped. Private to src/report and apps/latlab.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "latlab/bench/latency_report.hpp"
#include "latlab/result.hpp"
#include "latlab/stats.hpp"

namespace latlab {

// The largest magnitude of a distribution's statistic (us) a result can
// hold: the host clock's int64 nanoseconds (about 107 days). A reader
// refuses statistics beyond it ("p50": 1e308 is no measurement).
inline constexpr double kMaxResultUs = 9.223372036854775807e15;

// One distribution per series name, in the document's order: the stages,
// then core_latency, fence_latency, timer_lateness, clock_map_error, then
// (when the document has them) poll_latency, gpu_end_to_poll_wake, poll_cpu. A
// distribution with count 0 has its statistics at 0 and empty() true (they
// were null in the JSON).
struct ReadSeries {
  std::vector<std::pair<std::string, Distribution>> series;
  const Distribution* find(std::string_view name) const;
  bool operator==(const ReadSeries&) const = default;
};

struct ReadBlock {
  uint32_t index = 0;
  uint32_t order = 0;
  uint64_t frames_run = 0;
  ReadSeries series;
  bool operator==(const ReadBlock&) const = default;
};

struct ReadWorkload {
  uint32_t passes = 0, complexity = 0, width = 0, height = 0;
  std::string form;
  bool operator==(const ReadWorkload&) const = default;
};

// modes.<name> of a latency run.
struct ReadMode {
  std::string name;  // "baseline", "loaded"
  bool available = false;
  std::string reason;  // why not, when !available
  ReadWorkload workload;
  std::vector<ReadBlock> blocks;  // measured blocks, in run order
  ReadSeries total;
  uint64_t total_frames = 0;
  bool operator==(const ReadMode&) const = default;
};

struct ReadDevice {
  std::string backend, name, driver;
  bool operator==(const ReadDevice&) const = default;
};

// One section of `devices_run` (`latlab run --device all`): a device and, when
// it ran, its own result's device, partial flag and modes.
struct ReadDeviceSection {
  uint32_t section = 0;
  std::string backend, selector, name;  // name "" when null
  std::optional<int64_t> physical_device;
  std::string status;   // "ok", "partial", "failed"
  std::string failure;  // "" when null
  bool has_result = false;
  ReadDevice device;  // the rest: only when has_result
  bool partial = false;
  std::string partial_reason;
  std::vector<ReadMode> modes;
  bool operator==(const ReadDeviceSection&) const = default;
};

struct ReadResult {
  int schema_version = 0;
  std::string kind;  // "latency_run" or "performance_run"
  std::string tool_version;
  std::string created_utc;
  std::string command_line;
  bool partial = false;
  std::string partial_reason;
  MachineInfo machine;
  ReadDevice device;
  std::string settings_mode, settings_backend;
  std::optional<uint64_t> seed;    // absent in a performance_run
  std::optional<uint64_t> frames;  // measured frames per mode
  std::optional<uint64_t> blocks;  // measured blocks per mode
  std::string settings_json;       // `settings` as compact JSON text
  std::vector<ReadMode> modes;     // latency modes (baseline, loaded), document order
  // `devices_run` (several devices): every device's section, and which of
  // them the top-level keys describe. Empty / nullopt for a one-device run.
  std::vector<ReadDeviceSection> device_sections;
  std::optional<uint32_t> top_level_section;
  std::string text;  // the document as read

  const ReadMode* find_mode(std::string_view name) const;
  bool operator==(const ReadResult&) const = default;
};

// The result in `text`; `source` names it in errors (a path, "run 12").
Result<ReadResult> read_result_json(std::string text, std::string_view source);

// `r` with its device, partial flag and modes taken from device section
// `section` (the rest, settings and machine, is shared). Error when `r` has
// no such section or that device has no result.
Result<ReadResult> select_device_section(const ReadResult& r, uint32_t section);

// Reads the file at `path` (any size a result can have) and parses it. The
// text is held once (ReadResult::text); `per_frame` is not kept in the
// parsed model, so reading costs about the file's size in memory.
Result<ReadResult> read_result_file(const std::string& path);

}  // namespace latlab
