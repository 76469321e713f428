// The latency score (docs/score.md, formula latency-score/1): one number
// from four measured values, the Core Latency p50 and p99 of Baseline and of
// Loaded, always with those components and a 95 % interval from a seeded
// bootstrap over each mode's measured blocks. Pure: no I/O, no clock, no
// global state; the same input gives the same score, interval included.
// The result types (LatencyScore) are latlab/bench/score_result.hpp.
// Private to src/report and apps/latlab.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "latlab/bench/score_result.hpp"

namespace latlab {

inline constexpr double kScoreConfidence = 0.95;  // of the interval
inline constexpr uint32_t kScoreMinBlocks = 2;    // measured blocks a mode needs

// One mode's Core Latency as measured.
struct ScoreMode {
  // Per measured block (run order), the Core Latency (us) of each frame
  // that has one.
  std::vector<std::vector<double>> blocks;
  uint64_t frames = 0;   // measured frames run
  uint64_t missing = 0;  // measured frames without a Core Latency
  // Against the mode's GPU time target: false within it or without a
  // target; true off target; nullopt when no GPU time was measured.
  std::optional<bool> off_target = false;
  std::string target_note;  // off target: measured against target, in words
};

struct ScoreInput {
  std::optional<ScoreMode> baseline, loaded;   // nullopt: the mode did not run
  std::string baseline_absent, loaded_absent;  // why it did not (when nullopt)
  std::string partial_reason;                  // not "": the run stopped early
};

// 1000 / the weighted geometric mean of `values_us` in ms (weights
// kScoreWeight): 1 ms everywhere gives 1000. Every value must be > 0.
double score_of_components(const std::array<double, 4>& values_us);

// The score of `in`, or why there is none.
LatencyScore compute_latency_score(const ScoreInput& in);

// A mode's blocks pooled and sorted once, for the bootstrap's resamples.
class PooledBlocks {
 public:
  explicit PooledBlocks(const std::vector<std::vector<double>>& blocks);
  size_t block_count() const { return sizes_.size(); }
  // The type-7 p50 and p99 (stats.hpp's percentile_sorted) of the multiset
  // holding every value of block b copies[b] times: one resample; all 1,
  // the blocks pooled. nullopt when that multiset is empty. `copies` holds
  // one count per block.
  std::optional<std::array<double, 2>> p50_p99(std::span<const uint32_t> copies) const;

 private:
  std::vector<std::pair<double, uint32_t>> sorted_;  // (value, block), ascending
  std::vector<uint64_t> sizes_;                      // values per block
};

}  // namespace latlab
