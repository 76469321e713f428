#include "report/latency_score.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <tuple>

#include "latlab/bench/schedule.hpp"
#include "latlab/stats.hpp"

namespace latlab {

double score_of_components(const std::array<double, 4>& values_us) {
  double log_mean = 0;
  for (double us : values_us) log_mean += kScoreWeight * std::log(us / 1000.0);
  return 1000.0 / std::exp(log_mean);
}

PooledBlocks::PooledBlocks(const std::vector<std::vector<double>>& blocks) {
  for (uint32_t b = 0; b < blocks.size(); ++b) {
    sizes_.push_back(blocks[b].size());
    for (double v : blocks[b]) sorted_.emplace_back(v, b);
  }
  std::sort(sorted_.begin(), sorted_.end());
}

namespace {

// The values at positions `pos` (any order) of the ascending multiset in
// which each (value, block) of `sorted` stands copies[block] times.
std::array<double, 4> values_at(const std::vector<std::pair<double, uint32_t>>& sorted,
                                const std::array<uint64_t, 4>& pos,
                                std::span<const uint32_t> copies) {
  std::array<size_t, 4> order{0, 1, 2, 3};
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return pos[a] < pos[b]; });
  std::array<double, 4> out{};
  size_t k = 0;
  uint64_t end = 0;  // positions below `end` hold the values walked so far
  for (const auto& [value, block] : sorted) {
    end += copies[block];
    while (k < order.size() && pos[order[k]] < end) out[order[k++]] = value;
    if (k == order.size()) break;
  }
  return out;
}

}  // namespace

std::optional<std::array<double, 2>> PooledBlocks::p50_p99(std::span<const uint32_t> copies) const {
  assert(copies.size() == sizes_.size());
  uint64_t size = 0;
  for (size_t b = 0; b < sizes_.size(); ++b) size += copies[b] * sizes_[b];
  if (size == 0) return std::nullopt;
  // As percentile_sorted: the values at floor(rank) and the next, interpolated.
  constexpr std::array<double, 2> kQ = {0.50, 0.99};
  std::array<uint64_t, 4> pos{};
  std::array<double, 2> frac{};
  for (size_t i = 0; i < kQ.size(); ++i) {
    const double rank = kQ[i] * static_cast<double>(size - 1);
    const auto lo = static_cast<uint64_t>(std::floor(rank));
    pos[2 * i] = lo;
    pos[2 * i + 1] = std::min(lo + 1, size - 1);
    frac[i] = rank - static_cast<double>(lo);
  }
  const std::array<double, 4> v = values_at(sorted_, pos, copies);
  return std::array<double, 2>{v[0] + (v[1] - v[0]) * frac[0], v[2] + (v[3] - v[2]) * frac[1]};
}

namespace {

// The percentiles of the bootstrap's scores that bound the 95 % interval.
constexpr double kLowTail = 0.025, kHighTail = 0.975;

// Why `m` (named `name`) gives no component; "" when it does.
std::string mode_problem(const ScoreMode& m, const char* name) {
  if (!m.off_target) {
    return fmt::format(
        "{}'s GPU time could not be checked against its target (no measured gpu_execution)", name);
  }
  if (*m.off_target) {
    return fmt::format(
        "{} is off target ({}): its Core Latency was measured under another load than the one "
        "it was calibrated to, so a score would look comparable and not be",
        name, m.target_note);
  }
  if (m.blocks.size() < kScoreMinBlocks) {
    return fmt::format(
        "{} has {} measured block(s): the interval needs at least {} (--blocks, default 5)", name,
        m.blocks.size(), kScoreMinBlocks);
  }
  if (m.missing > 0) {
    return fmt::format(
        "{} of {} measured {} frames have no Core Latency: a p99 over the others could hide the "
        "slowest",
        m.missing, m.frames, name);
  }
  for (size_t b = 0; b < m.blocks.size(); ++b) {
    if (m.blocks[b].empty()) return fmt::format("{} block {} has no measured frame", name, b);
    const double low = *std::min_element(m.blocks[b].begin(), m.blocks[b].end());
    if (!(low > 0)) {
      return fmt::format("{} has a Core Latency of {} us, not above 0: no geometric mean of it",
                         name, low);
    }
  }
  return "";
}

std::string why_no_score(const ScoreInput& in) {
  if (!in.partial_reason.empty()) {
    return fmt::format(
        "the run is partial ({}): its blocks are not the planned ones, so a score would not be "
        "comparable",
        in.partial_reason);
  }
  if (!in.baseline)
    return in.baseline_absent.empty() ? "the run has no Baseline mode" : in.baseline_absent;
  if (!in.loaded) return in.loaded_absent.empty() ? "the run has no Loaded mode" : in.loaded_absent;
  if (std::string p = mode_problem(*in.baseline, "Baseline"); !p.empty()) return p;
  return mode_problem(*in.loaded, "Loaded");
}

// Baseline p50, p99, Loaded p50, p99 of one resample (all copies 1: the run).
std::array<double, 4> components_of(const PooledBlocks& base, std::span<const uint32_t> cb,
                                    const PooledBlocks& loaded, std::span<const uint32_t> cl) {
  const std::array<double, 2> b = base.p50_p99(cb).value();
  const std::array<double, 2> l = loaded.p50_p99(cl).value();
  return {b[0], b[1], l[0], l[1]};
}

// One resample of n blocks: n block indices drawn uniformly, with replacement.
void draw_copies(SplitMix64& rng, std::vector<uint32_t>& copies) {
  std::fill(copies.begin(), copies.end(), 0u);
  for (size_t i = 0; i < copies.size(); ++i) ++copies[rng.below(copies.size())];
}

// The 2.5 and 97.5 percentiles of the score over kScoreResamples resamples:
// per resample Baseline's blocks are drawn, then Loaded's, from one stream.
std::pair<double, double> bootstrap_interval(const PooledBlocks& base, const PooledBlocks& loaded) {
  SplitMix64 rng(kScoreSeed);
  std::vector<uint32_t> cb(base.block_count()), cl(loaded.block_count());
  std::vector<double> scores;
  scores.reserve(kScoreResamples);
  for (uint32_t i = 0; i < kScoreResamples; ++i) {
    draw_copies(rng, cb);
    draw_copies(rng, cl);
    scores.push_back(score_of_components(components_of(base, cb, loaded, cl)));
  }
  std::sort(scores.begin(), scores.end());
  return {*percentile_sorted(scores, kLowTail), *percentile_sorted(scores, kHighTail)};
}

}  // namespace

LatencyScore compute_latency_score(const ScoreInput& in) {
  LatencyScore s;
  s.unavailable_reason = why_no_score(in);
  if (!s.unavailable_reason.empty()) return s;
  const PooledBlocks base(in.baseline->blocks), loaded(in.loaded->blocks);
  const std::vector<uint32_t> all_b(base.block_count(), 1), all_l(loaded.block_count(), 1);
  const std::array<double, 4> c = components_of(base, all_b, loaded, all_l);
  s.value = score_of_components(c);
  const char* modes[] = {"baseline", "baseline", "loaded", "loaded"};
  const char* stats[] = {"p50", "p99", "p50", "p99"};
  for (size_t i = 0; i < c.size(); ++i)
    s.components.push_back({modes[i], stats[i], c[i], kScoreWeight});
  std::tie(s.ci_low, s.ci_high) = bootstrap_interval(base, loaded);
  s.baseline_blocks = static_cast<uint32_t>(base.block_count());
  s.loaded_blocks = static_cast<uint32_t>(loaded.block_count());
  return s;
}

}  // namespace latlab
