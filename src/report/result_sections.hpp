// The result reader's parts, one per section of a result document
// (docs/result-schema.md, docs/capture.md): each reads its JSON into the
// typed result the engine produces (RunResult), failing with BadResult at the
// first value that is not what the schema says. Keys that results written by
// older latlab versions lack are read when present. Private to src/report.
#pragma once

#include <string>

#include "latlab/bench/run_result.hpp"
#include "report/json_reading.hpp"

namespace latlab::reading {

// The document's own `partial` and `partial_reason`, which the typed result
// derives from its parts (RunResult::partial_reason()).
struct PartialFlag {
  bool partial = false;
  std::string reason;
};

// kind, tool, created_utc, command_line, machine into `meta`; the partial flag.
PartialFlag read_head(const Obj& doc, RunMeta& meta);
// `settings` of a latency run: the run's description, timer slack, execution.
void read_settings(const Obj& s, RunMeta& meta, LatencyRun& run);
std::vector<MissingCapability> read_capabilities(const json& a, const std::string& path);

// modes.<mode>.present (the run's `present` read first: it names the observers).
PresentDistributions read_mode_present(const Obj& p, const LatencyRun& run);
// Every latency mode with its warm-up and measured blocks; a Loaded mode that
// could not run into r.loaded.
void read_modes(const Obj& doc, RunResult& r);
// The bare-loop and raw-sleep blocks (diagnostics), then every block in run
// order with block_order's turn warm-up.
void read_other_blocks(const Obj& doc, LatencyRun& run);
void read_block_order(const Obj& doc, LatencyRun& run);
// `diagnostics` but the blocks: bookkeeping, generator, poll, process
// memory, the bare comparison's totals, validation.
void read_diagnostics(const Obj& doc, RunResult& r);

// `load_calibration`, `modes.performance`, `unavailable` and the partial flag
// of a latency run.
void read_outcomes(const Obj& doc, const PartialFlag& partial, RunResult& r);
// A whole document of kind "performance_run".
void read_performance_run(const Obj& doc, RunResult& r);

}  // namespace latlab::reading
