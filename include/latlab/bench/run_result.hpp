// The typed result of a benchmark run: what the engine (run_engine.hpp) and
// `latlab capture` return, what every reporter (console table, JSON, CSV,
// HTML, the results store, compare) consumes, and what the result reader
// (src/report/result_reader.hpp) turns a result file back into. Nothing is
// written to text to be parsed back; the JSON shape is
// docs/result-schema.md. Read back from a file, a result holds everything
// its document does; the per-frame markers (LatencyRun::frames, the CSV's)
// are not in the document and stay empty.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "latlab/bench/capture_result.hpp"
#include "latlab/bench/latency_report.hpp"
#include "latlab/bench/latency_run.hpp"
#include "latlab/bench/load_calibration.hpp"
#include "latlab/bench/per_frame.hpp"
#include "latlab/bench/performance_mode.hpp"
#include "latlab/bench/score_result.hpp"
#include "latlab/core/latency_device.hpp"

namespace latlab {

// The load size as asked and as used: with auto, the first size of
// auto_load_sizes() at which the load calibration reaches the target.
struct LoadSizeChoice {
  std::string asked;  // "auto" or "WxH"; "" when Loaded was not set up
  std::string used;   // "WxH"; "" when no size worked
  std::string why;    // one line
  std::vector<std::pair<std::string, std::string>> tried;  // (size, why not) of each size given up
  bool operator==(const LoadSizeChoice&) const = default;
};

// Loaded's workload on one device: given, or calibrated before any block
// (timestamps are never rescaled afterwards).
struct LoadedOutcome {
  bool asked = false;                                // the plan wants Loaded
  uint32_t given_complexity = 0;                     // given by the plan; 0: calibrated
  LoadSizeChoice size;                               // set when Loaded was asked for
  std::optional<LoadCalibrationReport> calibration;  // set when calibration returned a report
  std::string unavailable;     // why Loaded does not run; "" when it runs or was not asked for
  bool runs = false;           // asked and available
  uint64_t next_frame_id = 0;  // the first frame id after calibration's frames
  // Set when the interrupt stopped the calibration: where ("interrupted
  // during load calibration at 640x360, evaluation #3 ..."); the run stops.
  std::string interrupted;
  bool operator==(const LoadedOutcome&) const = default;
};

// Performance after the latency blocks (mode all) or alone.
struct PerformanceOutcome {
  bool asked = false;
  std::optional<PerformanceReport> report;  // partial_reason set when an interrupt cut it short
  std::string unavailable;                  // why there is no report, when one was asked for
  // An interrupt stopped Performance (its report, or `unavailable` when no
  // measured frame ran, says where): the whole run is partial.
  std::string interrupted;
  bool operator==(const PerformanceOutcome&) const = default;
};

// Which device a section of a several-device run is.
struct DeviceSectionHead {
  uint32_t section = 0;
  std::string backend;
  std::string selector;                // what opened it: its index
  std::string name;                    // as the backend lists it; "" unknown
  std::optional<int> physical_device;  // group of the physical identity; nullopt unknown
  std::string uuid, pci_bus_id;        // "" unknown
  bool operator==(const DeviceSectionHead&) const = default;
};

struct RunResult;

// One device of a several-device run: its head, how it went ("ok",
// "partial", "failed") and, when it ran, its own whole result.
struct DeviceSectionResult {
  DeviceSectionHead head;
  std::string status;
  std::string failure;            // why it failed or is partial; "" otherwise
  std::string device_name;        // the opened device's name (else head.name); not in the JSON
  std::vector<RunResult> result;  // zero or one (RunResult is incomplete here)
  bool operator==(const DeviceSectionResult& o) const;  // run_result.cpp: RunResult is complete
};

struct RunResult {
  RunMeta meta;  // tool, time, command line, machine, settings' mode/backend/device,
                 // process memory, validation findings
  // The latency run (kind "latency_run"); nullopt for a Performance-only run
  // (kind "performance_run") and a capture.
  std::optional<LatencyRun> latency;
  DeviceInfo device;  // the run's device (a Performance-only run's identity)
  LoadedOutcome loaded;
  PerformanceOutcome performance;
  // Every measured frame's series (the JSON's `per_frame`), when the plan
  // asked for them (--per-frame, --report).
  std::optional<PerFrameSeries> per_frame;
  // `latlab capture` (kind "capture"): the program's frames. A capture has
  // no latency run, device or settings; `meta` holds its head.
  std::optional<CaptureResult> capture;
  // The latency score of a latency run (docs/score.md): its value with
  // interval and components, or why it has none (a result read from
  // schema_version 1 or 2: written before the score). Set by the report
  // layer (attach_latency_scores), not by the engine; nullopt for a
  // Performance-only run, a capture and a latency run nobody scored.
  std::optional<LatencyScore> score;
  // Several devices: every section; the top-level keys describe section
  // `top_section` (its result; `latency` here stays empty). Empty for a
  // one-device run.
  std::vector<DeviceSectionResult> sections;
  std::optional<uint32_t> top_section;

  // The one-device result the document's top-level keys describe: this, or
  // the top section's result of a several-device run.
  const RunResult& top_level() const;
  // "latency_run", "performance_run" or "capture" (several devices: the
  // top section's).
  std::string_view kind() const;
  // Partial: the latency run stopped early, Performance (after it, or
  // alone) was interrupted, or a capture lost frames.
  bool partial() const;
  std::string partial_reason() const;  // "" unless partial
  bool operator==(const RunResult&) const = default;
};

}  // namespace latlab
