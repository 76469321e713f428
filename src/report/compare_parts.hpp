// Parts of `latlab compare` (run_comparison.hpp) shared by its files: one
// run of a side, what compare reads of a typed result (its modes, their
// totals and measured blocks; a capture is one mode, "capture", whose
// per-frame figures are its stages and which has no blocks), and the checks
// that the runs measured the same thing. Private to src/report.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "latlab/bench/run_result.hpp"
#include "latlab/result.hpp"
#include "report/run_comparison.hpp"

namespace latlab::compare {

// One run of a side, with the name it is known by and its side's label
// ("A2": the second run of A).
struct NamedRun {
  const RunResult* r = nullptr;  // one device: a several-device run's top section
  std::string name;
  std::string label;
  std::string load_source;  // Loaded's complexity: "calibrated", "given", "" (unknown)
};
std::string run_label(const NamedRun& n);

// The mode of a capture.
inline constexpr const char* kCaptureMode = "capture";

// Every mode of `r` in the document's order, available or not.
std::vector<std::string> mode_names(const RunResult& r);
bool mode_available(const RunResult& r, const std::string& mode);
// The distribution of `series` over every measured frame of `mode`; null
// when the run has none of that name.
const Distribution* total_of(const RunResult& r, const std::string& mode,
                             const std::string& series);
uint64_t measured_frames(const RunResult& r, const std::string& mode);

// A measured block of a mode.
struct BlockView {
  uint64_t frames_run = 0;
  const SeriesDistributions* series = nullptr;
};
std::vector<BlockView> measured_blocks(const RunResult& r, const std::string& mode);
const Distribution* block_series(const BlockView& b, const std::string& series);
// The planned size of a run's blocks of one mode: the largest frames_run
// (earlier blocks take the remainder, a partial run's last block is cut).
uint64_t block_size(const RunResult& r, const std::string& mode);

// What compare looks at, (series, role): a latency run's stages, then the
// observers of completion (diagnostics stay out); a capture's per-frame
// figures, as stages.
std::vector<std::pair<std::string, std::string>> compared_series(const RunResult& r);

// Each run of a side is a latency run or a capture, of one kind, and none twice.
Result<void> check_runs(const std::vector<NamedRun>& side, char name);
// What differs between the runs (host, device, driver, version, partial) as notes.
void note_differences(const std::vector<NamedRun>& a, const std::vector<NamedRun>& b,
                      std::vector<std::string>& notes);
// Every run measured `mode` the same way: an error, or notes with
// allow_different_settings.
Result<void> check_design(const std::string& mode, const std::vector<NamedRun>& all,
                          const CompareOptions& o, std::vector<std::string>& notes);
// Blocks of different sizes are not tested against each other.
Result<void> check_block_sizes(const std::string& mode, const std::vector<NamedRun>& all,
                               CompareUnit unit, std::vector<std::string>& notes);

}  // namespace latlab::compare
