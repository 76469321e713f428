// The result reader: a result document (docs/result-schema.md; kinds
// latency_run, performance_run and capture) turned back into the typed
// result the engine produces (RunResult), for `latlab report`, `compare`,
// `history` and the store: the one place that decides what a valid result
// is. Written then read back, a result compares equal to the original in
// everything its document holds (tests/unit/result_round_trip_test.cpp); what the
// document does not hold (the per-frame markers of the CSV) is empty.
// Strict: schema_version must be one this build reads, every key the result
// needs must be there with its type; an error names the key path
// ("modes.baseline.blocks[2].stages.gpu_execution.p50") or, for text that is
// not JSON, the byte where parsing stopped. Private to src/report and
// apps/latlab.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "latlab/bench/run_result.hpp"
#include "latlab/result.hpp"

namespace latlab {

// The oldest schema_version this build reads (kResultSchemaVersion the newest).
inline constexpr int kOldestResultSchemaVersion = 1;

struct ReadOptions {
  // Read `per_frame` (most of a long run's bytes). compare and the store
  // have no use for it: false leaves RunResult::per_frame empty and the
  // reader's memory at about the text's size.
  bool per_frame = true;
};

// A result document as read: the typed result, the schema version it was
// written in, and its text (the store keeps it byte for byte).
struct ResultDocument {
  RunResult result;
  int schema_version = 0;
  std::string text;
};

// The result in `text`; `source` names it in errors (a path, "run 12").
Result<ResultDocument> read_result_json(std::string text, std::string_view source,
                                        ReadOptions options = {});

// Reads the file at `path` (any size a result can have; a pipe too) and parses it.
Result<ResultDocument> read_result_file(const std::string& path, ReadOptions options = {});

// Device section `section` of a several-device result (`latlab run --device
// all`): its own whole result. Error when `r` has no such section or that
// device has no result.
Result<RunResult> select_device_section(const RunResult& r, uint32_t section);

}  // namespace latlab
