// The latency score as the typed result holds it (RunResult::score; JSON
// `score`, docs/result-schema.md): its value, 95 % interval and the four
// components beside it, or why there is none. The definition and how it is
// computed are docs/score.md; the engine does not compute it (the report
// layer does, from the engine's per-frame Core Latency).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace latlab {

inline constexpr const char* kScoreFormula = "latency-score/1";
inline constexpr double kScoreWeight = 0.25;       // each of the four components
inline constexpr uint32_t kScoreResamples = 2000;  // bootstrap resamples (B)
inline constexpr uint64_t kScoreSeed = 1;          // splitmix64 state of the bootstrap

// One of the four inputs: Core Latency `statistic` of `mode` over every
// measured frame of the mode, us.
struct ScoreComponent {
  std::string mode;       // "baseline" or "loaded"
  std::string statistic;  // "p50" or "p99"
  double value_us = 0;
  double weight = kScoreWeight;
  bool operator==(const ScoreComponent&) const = default;
};

struct LatencyScore {
  std::string formula = kScoreFormula;
  std::optional<double> value;             // nullopt: no score, see unavailable_reason
  std::optional<double> ci_low, ci_high;   // the 95 % interval, set with value
  std::vector<ScoreComponent> components;  // the four, when value is set
  uint32_t resamples = kScoreResamples;
  uint64_t seed = kScoreSeed;
  uint32_t baseline_blocks = 0, loaded_blocks = 0;  // measured blocks resampled
  std::string unavailable_reason;                   // "" when value is set
  bool operator==(const LatencyScore&) const = default;
};

}  // namespace latlab
