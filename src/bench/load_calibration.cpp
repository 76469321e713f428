#include "latlab/bench/load_calibration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "latlab/host_clock.hpp"

namespace latlab {

const char* to_string(StepKind kind) { return kind == StepKind::verify ? "verify" : "search"; }

namespace {

std::string num(double v, int significant = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", significant, v);
  return buf;
}

const char* form_name(WorkloadForm f) {
  return f == WorkloadForm::fragment ? "fragment" : "compute";
}

Result<void> validate(const LoadCalibrationDesc& d) {
  auto bad = [](std::string what) { return make_error("load calibration: " + std::move(what)); };
  if (!(d.target_ms > 0.0) || !std::isfinite(d.target_ms))
    return bad("target_ms must be a positive number of ms, got " + num(d.target_ms));
  if (!(d.tolerance > 0.0) || d.tolerance > 0.5)
    return bad("tolerance must be in (0, 0.5], got " + num(d.tolerance));
  if (!(d.refine_fraction > 0.0) || d.refine_fraction > 1.0)
    return bad("refine_fraction must be in (0, 1], got " + num(d.refine_fraction));
  if (d.width == 0 || d.height == 0) return bad("width and height must be at least 1 pixel");
  if (d.passes == 0) return bad("passes must be at least 1");
  if (d.min_complexity < kMinLoadComplexity || d.max_complexity > kMaxLoadComplexity ||
      d.min_complexity > d.max_complexity) {
    return bad("complexity range " + std::to_string(d.min_complexity) + ".." +
               std::to_string(d.max_complexity) + " must lie within " +
               std::to_string(kMinLoadComplexity) + ".." + std::to_string(kMaxLoadComplexity));
  }
  if (d.frames_per_eval == 0 || d.verify_frames == 0)
    return bad("frames_per_eval and verify_frames must be at least 1");
  if (d.repeats == 0 || d.repeats > 16) return bad("repeats must be in 1..16");
  if (d.max_evaluations < 2)
    return bad("max_evaluations must be at least 2 (one search, one verification)");
  if (!(d.max_growth > 1.0)) return bad("max_growth must be > 1");
  if (d.max_wall_ns <= 0) return bad("max_wall_ns must be positive");
  return {};
}

std::string pct(double fraction) { return num(fraction * 100.0, 3) + "%"; }

// One measured complexity: the best knowledge we have of its GPU time.
struct Point {
  double ms = 0;
  double fastest_ms = 0;  // the fastest repeat's median (ms when there was one repeat)
  bool verified = false;
  uint32_t frames = 0;
  // Standard error of the median relative to it: the larger of the frames'
  // MAD estimate and the repeats' range estimate (0 = no noise seen).
  double rel_se = 0;
};

// d2: expected range of n normal samples in standard deviations (n = 2..10).
double range_to_sigma(size_t n) {
  static constexpr double kD2[] = {1.0,   1.0,   1.128, 1.693, 2.059, 2.326,
                                   2.534, 2.704, 2.847, 2.970, 3.078};
  return kD2[std::min<size_t>(n, 10)];
}

struct AffineFit {
  double fixed_ms = 0, per_complexity_ms = 0;
  bool usable() const { return per_complexity_ms > 0.0 && std::isfinite(per_complexity_ms); }
  double solve(double target_ms) const { return (target_ms - fixed_ms) / per_complexity_ms; }
};

AffineFit fit_two(uint32_t c1, double t1, uint32_t c2, double t2) {
  AffineFit f;
  if (c1 == c2) return f;
  f.per_complexity_ms = (t2 - t1) / (static_cast<double>(c2) - static_cast<double>(c1));
  f.fixed_ms = t1 - f.per_complexity_ms * static_cast<double>(c1);
  return f;
}

uint32_t round_clamp(double c, uint32_t lo, uint32_t hi) {
  if (!std::isfinite(c)) return c > 0 ? hi : lo;
  const double r = std::round(c);
  if (r <= static_cast<double>(lo)) return lo;
  if (r >= static_cast<double>(hi)) return hi;
  return static_cast<uint32_t>(r);
}

// The complexities measured either side of the target; see current_bracket().
struct Bracket {
  std::optional<uint32_t> lo, hi;
  // The crossing lies between two neighbouring complexities: nothing left to search.
  bool adjacent() const { return lo && hi && *hi - *lo <= 1; }
};

// The next search complexity and why it was chosen.
struct SearchStep {
  uint32_t complexity = 0;
  std::string why;
};

class Calibration {
 public:
  Calibration(LatencyDevice& device, const LoadCalibrationDesc& desc)
      : dev_(device), d_(desc), start_ns_(host_now_ns()), next_frame_id_(desc.first_frame_id) {
    r_.target_ms = d_.target_ms;
    r_.tolerance = d_.tolerance;
    r_.width = d_.width;
    r_.height = d_.height;
    r_.passes = d_.passes;
    r_.form = d_.form;
  }

  Result<LoadCalibrationReport> run();

 private:
  double err(double ms) const { return (ms - d_.target_ms) / d_.target_ms; }
  bool within(double ms, double fraction) const { return std::fabs(err(ms)) <= fraction; }
  bool evaluations_left(uint32_t n = 1) const { return r_.evaluations + n <= d_.max_evaluations; }
  bool time_left() const { return host_now_ns() - start_ns_ < d_.max_wall_ns; }
  bool can_evaluate() const { return evaluations_left() && time_left(); }
  double seconds_left() const {
    return static_cast<double>(d_.max_wall_ns - (host_now_ns() - start_ns_)) / 1e9;
  }
  // Frames in all whose pooled median would be known to within the
  // tolerance (twice its standard error), at `p`'s measured noise.
  double frames_for_precision(const Point& p) const {
    const double ratio = 2.0 * p.rel_se / d_.tolerance;
    return static_cast<double>(p.frames) * ratio * ratio;
  }
  std::string out_of_evaluations() const {
    return "max_evaluations (" + std::to_string(d_.max_evaluations) + ") reached";
  }

  Result<LoadCalibrationStep> evaluate(uint32_t complexity, StepKind kind, std::string why);
  Result<std::vector<std::vector<double>>> measure_frames(uint32_t complexity, uint32_t measured,
                                                          uint32_t repeats, LoadCalibrationStep& s);
  void remember(uint32_t complexity, StepKind kind, const LoadCalibrationStep& s,
                std::vector<double> sorted_ms);
  std::optional<std::string> budget_spent() const;
  Bracket current_bracket() const;
  std::optional<uint32_t> best_unverified() const;
  std::optional<uint32_t> verify_candidate(const Bracket& b) const;
  Result<LoadCalibrationStep> verify(uint32_t candidate);
  SearchStep bracket_step(uint32_t lo);
  SearchStep refine_step(uint32_t a, uint32_t b);
  std::string size_text() const {
    return std::to_string(d_.width) + "x" + std::to_string(d_.height) + ", " +
           std::to_string(d_.passes) + " " + form_name(d_.form) + " passes";
  }
  Result<void> reverify_while_uncertain(uint32_t verified);
  Result<LoadCalibrationReport> polish(uint32_t verified);
  std::optional<double> noise() const;
  bool noisy() const { return noise().value_or(0.0) > d_.tolerance; }
  std::string noise_text() const {
    return "the device's timing spread of " + pct(noise().value_or(0.0)) +
           " exceeds the tolerance " + pct(d_.tolerance);
  }
  struct StepEstimate {
    double fraction = 0;  // GPU time of one complexity step / target
    double sigma = 0;     // its standard error, from the two points' uncertainties
  };
  std::optional<StepEstimate> step_estimate(uint32_t near) const;
  std::optional<uint32_t> crossing_estimate(double slope_ms) const;
  std::string adjacent_text(const Bracket& b, double step) const;
  Result<LoadCalibrationReport> too_low();
  Result<LoadCalibrationReport> too_high();
  LoadCalibrationReport finish(std::string outcome);

  LatencyDevice& dev_;
  const LoadCalibrationDesc& d_;
  int64_t start_ns_;
  uint64_t next_frame_id_;
  LoadCalibrationReport r_;
  std::map<uint32_t, Point> points_;
  // Per verified complexity: its verifications' frames (ms, sorted) and repeat
  // medians, pooled when it was verified again.
  std::map<uint32_t, std::vector<double>> verified_samples_;
  std::map<uint32_t, std::vector<double>> verified_repeats_;
  // Regula falsi state: how many refine steps in a row replaced the same
  // bracket end (Illinois: the other end's residual is halved each time), and
  // the bracket widths seen, to fall back to bisection when it stops shrinking.
  uint32_t lo_repeats_ = 0, hi_repeats_ = 0;
  std::vector<uint32_t> widths_;
  // Set when neighbouring complexities straddled the target although one
  // step changes the GPU time by less than the tolerance: noise or a
  // non-monotonic cost, said in the outcome.
  std::string not_monotonic_;
  bool granular_ = false;  // the target lies between neighbours a step apart > tolerance
};

// Bracket, refine, verify (docs/load-calibration.md): every pass either
// verifies a candidate or measures one more search point, until a
// verification lands within the tolerance or the budget runs out.
Result<LoadCalibrationReport> Calibration::run() {
  const double tol = d_.tolerance;
  const uint32_t cmin = d_.min_complexity, cmax = d_.max_complexity;

  auto first = evaluate(cmin, StepKind::search, "start of the range");
  if (!first) return first.error();
  if (first->median_ms > d_.target_ms * (1.0 + tol)) return too_low();

  for (;;) {
    if (std::optional<std::string> stop = budget_spent()) return finish(std::move(*stop));
    const Bracket b = current_bracket();
    if (!b.lo) return too_low();  // only when a verification moved cmin above the target
    // Fastest setting still too fast: unreachable, whatever budget is left.
    if (!b.hi && *b.lo >= cmax && !within(points_.at(cmax).ms, tol)) return too_high();

    // 1. Is there something worth verifying?
    if (const std::optional<uint32_t> candidate = verify_candidate(b)) {
      auto v = verify(*candidate);
      if (!v) return v.error();
      if (within(v->median_ms, tol)) {
        if (Result<void> again = reverify_while_uncertain(*candidate); !again) return again.error();
        if (within(points_.at(*candidate).ms, tol)) return polish(*candidate);
      }
      continue;  // the verified point feeds the bracket; search on
    }
    if (b.adjacent()) {
      // Granularity only when one step really is larger than the tolerance
      // (the long-baseline slope, which noise hardly moves); otherwise noise
      // or a wobbling cost put a crossing between neighbours.
      const std::optional<StepEstimate> est = step_estimate(*b.lo);
      const std::optional<double> step = est ? std::optional<double>(est->fraction) : std::nullopt;
      // A step estimated from noisy points is granularity only when it
      // exceeds the tolerance by more than twice its own uncertainty.
      if (!est || est->fraction - 2.0 * est->sigma > tol) {
        granular_ = true;
        return finish(
            "no complexity within tolerance: the target falls between adjacent complexities " +
            std::to_string(*b.lo) + " and " + std::to_string(*b.hi) +
            (step ? " (one step changes the GPU time by ~" + pct(*step) + ")" : std::string()));
      }
      not_monotonic_ = adjacent_text(b, *step);
      const double slope = *step * d_.target_ms;
      const std::optional<uint32_t> c = crossing_estimate(slope);
      if (c && !(points_.contains(*c) && points_.at(*c).verified) && can_evaluate()) {
        auto v = evaluate(*c, StepKind::verify,
                          "verify: neighbours " + std::to_string(*b.lo) + " and " +
                              std::to_string(*b.hi) +
                              " straddle the target against the slope; the measured points, "
                              "each moved along the slope, cross it at " +
                              std::to_string(*c));
        if (!v) return v.error();
        if (within(v->median_ms, tol)) {
          if (Result<void> again = reverify_while_uncertain(*c); !again) return again.error();
          if (within(points_.at(*c).ms, tol)) return polish(*c);
        }
        continue;
      }
      return finish("no complexity verified within tolerance");
    }
    if (!evaluations_left(2)) {  // the last evaluation is kept for a verification
      return finish(out_of_evaluations() + " (the last one kept for a verification)");
    }

    // 2. Next search complexity: extend towards a bracket, or refine inside it.
    if (!b.hi && *b.lo >= cmax) return too_high();
    const SearchStep next = b.hi ? refine_step(*b.lo, *b.hi) : bracket_step(*b.lo);
    auto s = evaluate(next.complexity, StepKind::search, next.why);
    if (!s) return s.error();
    if (b.hi) {
      const bool below = s->median_ms <= d_.target_ms;
      lo_repeats_ = below ? lo_repeats_ + 1 : 0;
      hi_repeats_ = below ? 0 : hi_repeats_ + 1;
    }
  }
}

// One evaluation: discard_frames warm-up frames, then `repeats` short
// measurements of frames_per_eval frames (search) or verify_frames frames
// split over the repeats (verification); the median of all their frames is
// the point, the spread of the repeats' medians its noise.
Result<LoadCalibrationStep> Calibration::evaluate(uint32_t complexity, StepKind kind,
                                                  std::string why) {
  const bool verify = kind == StepKind::verify;
  const uint32_t repeats = verify ? std::min(d_.repeats, d_.verify_frames) : d_.repeats;
  const uint32_t measured = verify ? d_.verify_frames : d_.repeats * d_.frames_per_eval;
  LoadCalibrationStep s;
  s.index = r_.evaluations++;
  s.kind = kind;
  s.complexity = complexity;
  s.why = std::move(why);
  auto groups = measure_frames(complexity, measured, repeats, s);
  if (!groups) return groups.error();
  std::vector<double> ms;
  for (std::vector<double>& g : *groups) {
    if (g.empty()) continue;
    ms.insert(ms.end(), g.begin(), g.end());
    std::sort(g.begin(), g.end());
    s.repeat_medians_ms.push_back(*percentile_sorted(g, 0.5));
  }
  std::sort(ms.begin(), ms.end());
  s.median_ms = *percentile_sorted(ms, 0.5);  // measure_frames returns at least one frame
  s.min_ms = ms.front();
  s.max_ms = ms.back();
  s.error_fraction = err(s.median_ms);
  if (s.repeat_medians_ms.size() >= 2 && s.median_ms > 0) {
    const auto [lo, hi] =
        std::minmax_element(s.repeat_medians_ms.begin(), s.repeat_medians_ms.end());
    s.spread_fraction = (*hi - *lo) / s.median_ms;
  }
  remember(complexity, kind, s, std::move(ms));
  r_.steps.push_back(s);
  if (d_.on_step) d_.on_step(s);
  return s;
}

// Submits and waits for the evaluation's frames one at a time; returns the
// GPU ms of the measured frames with ok timestamps (unsorted), per repeat
// (consecutive runs of frames), and counts the frames in `s` and the report.
// Fewer than half usable is an error.
Result<std::vector<std::vector<double>>> Calibration::measure_frames(uint32_t complexity,
                                                                     uint32_t measured,
                                                                     uint32_t repeats,
                                                                     LoadCalibrationStep& s) {
  const uint32_t total = d_.discard_frames + measured;
  const FrameWorkload work{d_.passes, complexity, d_.width, d_.height, d_.form};
  const TickFormat& ticks = dev_.info().ticks;
  std::vector<std::vector<double>> groups(repeats);
  size_t used = 0;
  std::map<QueryStatus, uint32_t> bad_status;
  // One frame at a time, as Loaded latency runs them: the GPU time of a
  // frame does not depend on whether others queue behind it, and waiting
  // keeps a slow device from piling up seconds of work.
  for (uint32_t i = 0; i < total; ++i) {
    if (d_.interrupt != nullptr && d_.interrupt->load(std::memory_order_relaxed)) {
      return make_error("interrupted during load calibration at " + std::to_string(d_.width) + "x" +
                        std::to_string(d_.height) + ", evaluation #" + std::to_string(s.index) +
                        " (" + to_string(s.kind) + " at complexity " + std::to_string(complexity) +
                        ", after " + std::to_string(i) + " of " + std::to_string(total) +
                        " frames)");
    }
    const uint64_t id = next_frame_id_++;
    if (auto sub = dev_.submit_frame(id, work); !sub) {
      return make_error("load calibration: submitting frame " + std::to_string(id) +
                        " at complexity " + std::to_string(complexity) +
                        " failed: " + sub.error().message);
    }
    auto timing = dev_.wait_frame(id);
    ++s.frames_submitted;
    ++r_.frames_submitted;
    if (!timing) {
      return make_error("load calibration: waiting for frame " + std::to_string(id) +
                        " at complexity " + std::to_string(complexity) +
                        " failed: " + timing.error().message);
    }
    if (i < d_.discard_frames) continue;  // warm-up: caches, clocks, pipeline creation
    if (timing->gpu_status != QueryStatus::ok) {
      ++s.frames_missing;
      ++bad_status[timing->gpu_status];
      continue;
    }
    const uint64_t j = i - d_.discard_frames;  // measured frame j belongs to repeat j*R/N
    groups[j * repeats / measured].push_back(
        static_cast<double>(ticks.span_ns(timing->gpu_begin_ticks, timing->gpu_end_ticks)) / 1e6);
    ++used;
  }
  r_.frames_missing += s.frames_missing;
  s.frames_used = static_cast<uint32_t>(used);
  if (used * 2 < measured || used == 0) {
    std::string statuses;
    for (const auto& [st, n] : bad_status) {
      statuses +=
          (statuses.empty() ? "" : ", ") + std::string(to_string(st)) + ": " + std::to_string(n);
    }
    return make_error("load calibration: only " + std::to_string(used) + " of " +
                      std::to_string(measured) + " measured frames at complexity " +
                      std::to_string(complexity) + " had usable GPU timestamps (" + statuses +
                      ") on device '" + dev_.info().name +
                      "'; the GPU time cannot be calibrated without them");
  }
  return groups;
}

// Records an evaluation's median (and a verification's frames) as the point
// of its complexity. A complexity verified again pools its verifications'
// frames and repeats: the point is their median, known more precisely.
void Calibration::remember(uint32_t complexity, StepKind kind, const LoadCalibrationStep& s,
                           std::vector<double> sorted_ms) {
  std::vector<double> repeats = s.repeat_medians_ms;
  double median = s.median_ms;
  if (kind == StepKind::verify) {
    if (auto it = verified_samples_.find(complexity); it != verified_samples_.end()) {
      sorted_ms.insert(sorted_ms.end(), it->second.begin(), it->second.end());
      std::sort(sorted_ms.begin(), sorted_ms.end());
      const std::vector<double>& before = verified_repeats_.at(complexity);
      repeats.insert(repeats.begin(), before.begin(), before.end());
      median = *percentile_sorted(sorted_ms, 0.5);
    }
  }
  double rel_se =
      median > 0 ? median_standard_error(sorted_ms, median).value_or(0.0) / median : 0.0;
  // Noise that lasts longer than a frame (another process on a CPU device)
  // shows between the repeats, not between neighbouring frames. From three
  // repeats on, their MAD (one repeat hit by a hiccup moves the median of
  // all frames little, and must not pass for the noise of all); with two,
  // their range.
  const size_t n = repeats.size();
  if (n >= 3 && median > 0) {
    std::vector<double> sorted_repeats = repeats;
    std::sort(sorted_repeats.begin(), sorted_repeats.end());
    const double repeat_median = *percentile_sorted(sorted_repeats, 0.5);
    rel_se = std::max(
        rel_se, median_standard_error(repeats, repeat_median).value_or(0.0) / 1.2533 / median);
  } else if (n == 2 && median > 0) {
    const auto [lo, hi] = std::minmax_element(repeats.begin(), repeats.end());
    rel_se = std::max(rel_se,
                      (*hi - *lo) / median / range_to_sigma(n) / std::sqrt(static_cast<double>(n)));
  }
  const double fastest = n ? *std::min_element(repeats.begin(), repeats.end()) : median;

  // A verification is worth more than a search measurement; never let a
  // later, smaller sample overwrite it.
  Point p{median, fastest, kind == StepKind::verify, static_cast<uint32_t>(sorted_ms.size()),
          rel_se};
  auto it = points_.find(complexity);
  if (it == points_.end() || p.verified || !it->second.verified) points_[complexity] = p;
  if (kind == StepKind::verify) {
    verified_samples_[complexity] = std::move(sorted_ms);
    verified_repeats_[complexity] = std::move(repeats);
  }
}

// After a verification of `verified` within the tolerance: while its own
// uncertainty (twice its relative standard error) exceeds the tolerance,
// verify it again, pooled, as long as evaluations remain and the frames a
// precise enough median needs (the standard error shrinks as 1/sqrt(frames))
// fit in the time left. finish() accepts only a certain one, and says what
// it would have needed.
Result<void> Calibration::reverify_while_uncertain(uint32_t verified) {
  while (can_evaluate()) {
    const Point p = points_.at(verified);
    const double uncertainty = 2.0 * p.rel_se;
    if (!within(p.ms, d_.tolerance) || uncertainty <= d_.tolerance) return {};
    const double frames_needed = frames_for_precision(p);
    const double seconds_needed = (frames_needed - p.frames) * p.ms / 1e3;
    if (seconds_needed > seconds_left()) return {};
    auto v = evaluate(verified, StepKind::verify,
                      "verify again, pooled: median " + num(p.ms) +
                          " ms is within the tolerance but uncertain by +/-" + pct(uncertainty) +
                          ", more than the tolerance");
    if (!v) return v.error();
  }
  return {};
}

// Why the search must stop before another evaluation, if it must.
std::optional<std::string> Calibration::budget_spent() const {
  if (!evaluations_left()) return out_of_evaluations();
  if (!time_left()) {
    return "time budget (" + num(static_cast<double>(d_.max_wall_ns) / 1e9) + " s) spent";
  }
  return std::nullopt;
}

// lo: the highest complexity measured at or below the target that lies under
// hi; hi: the lowest complexity measured above it. Recomputed from every
// point, so a verification that moves a point to the other side, or a
// non-monotonic cost, still leaves a valid bracket (a crossing lies between).
Bracket Calibration::current_bracket() const {
  Bracket b;
  for (const auto& [c, p] : points_) {
    if (p.ms > d_.target_ms) {
      b.hi = c;
      break;
    }
  }
  for (const auto& [c, p] : points_) {
    if (b.hi && c >= *b.hi) break;
    if (p.ms <= d_.target_ms) b.lo = c;
  }
  return b;
}

std::optional<uint32_t> Calibration::best_unverified() const {
  std::optional<uint32_t> best;
  double best_err = std::numeric_limits<double>::infinity();
  for (const auto& [c, p] : points_) {
    if (p.verified) continue;
    if (std::fabs(err(p.ms)) < best_err) {
      best_err = std::fabs(err(p.ms));
      best = c;
    }
  }
  return best;
}

// The unverified point worth a verification now, if any.
std::optional<uint32_t> Calibration::verify_candidate(const Bracket& b) const {
  const double tol = d_.tolerance;
  const double aim = d_.tolerance * d_.refine_fraction;
  bool any_verified = false;
  for (const auto& [c, p] : points_) any_verified = any_verified || p.verified;
  const bool adjacent = b.adjacent();
  std::optional<uint32_t> pick = best_unverified();
  if (adjacent) {
    // The crossing lies between the two bracket ends: prefer them.
    std::optional<uint32_t> end;
    for (uint32_t c : {*b.lo, *b.hi}) {
      if (!points_.at(c).verified &&
          (!end || std::fabs(err(points_.at(c).ms)) < std::fabs(err(points_.at(*end).ms))))
        end = c;
    }
    if (end) pick = end;
  }
  if (!pick) return std::nullopt;
  const Point& p = points_.at(*pick);
  const double e = std::fabs(err(p.ms));
  // Close: near enough, or within tolerance and within this measurement's
  // own noise (more search frames would chase noise; a verification
  // averages it out). Plausible: could be within tolerance given noise.
  const bool close = e <= aim || (e <= tol && e <= 2.0 * p.rel_se);
  const bool plausible = e <= tol + 3.0 * p.rel_se;
  const bool cornered = adjacent || !evaluations_left(2);
  if (close || (cornered && (plausible || !any_verified))) return pick;
  return std::nullopt;
}

Result<LoadCalibrationStep> Calibration::verify(uint32_t candidate) {
  const Point before = points_.at(candidate);
  return evaluate(candidate, StepKind::verify,
                  "verify: search median " + num(before.ms) + " ms is " +
                      num(err(before.ms) * 100, 3) + "% from the target");
}

// Below the target everywhere so far (lo is the highest point): extrapolate
// towards a bracket, growth-limited.
SearchStep Calibration::bracket_step(uint32_t lo) {
  const uint32_t cmax = d_.max_complexity;
  const uint32_t upper = static_cast<uint32_t>(
      std::min<double>(cmax, std::floor(static_cast<double>(lo) * d_.max_growth)));
  std::vector<uint32_t> below;
  for (const auto& [c, p] : points_) below.push_back(c);  // all are <= lo and below target
  AffineFit f;
  if (below.size() >= 2) {
    const uint32_t c1 = below[below.size() - 2], c2 = below.back();
    f = fit_two(c1, points_.at(c1).ms, c2, points_.at(c2).ms);
  }
  SearchStep next;
  if (f.usable()) {
    r_.fit_fixed_ms = f.fixed_ms;
    r_.fit_ms_per_complexity = f.per_complexity_ms;
    next.complexity = round_clamp(f.solve(d_.target_ms), lo + 1, std::max(upper, lo + 1));
    next.why = "affine fit " + num(f.fixed_ms) + " + " + num(f.per_complexity_ms) +
               " ms/complexity reaches the target at " + num(f.solve(d_.target_ms), 6);
  } else if (below.size() >= 2) {
    next.complexity = round_clamp(static_cast<double>(lo) * 4.0, lo + 1, std::max(upper, lo + 1));
    next.why = "GPU time did not grow with complexity; growing 4x";
  } else {
    const Point& p = points_.at(lo);
    next.complexity = round_clamp(static_cast<double>(lo) * d_.target_ms / std::max(p.ms, 1e-9),
                                  lo + 1, std::max(upper, lo + 1));
    next.why = "proportional guess from complexity " + std::to_string(lo);
  }
  if (next.complexity >= cmax)
    next.why += " (capped at the highest complexity)";
  else if (next.complexity >= upper)
    next.why += " (growth capped)";
  return next;
}

// Inside the bracket a..b: Illinois-weighted regula falsi, or bisection when
// the bracket did not halve in three steps.
SearchStep Calibration::refine_step(uint32_t a, uint32_t b) {
  widths_.push_back(b - a);
  const bool stalled = widths_.size() >= 4 && widths_.back() * 2 > widths_[widths_.size() - 4];
  const double ya =
      (points_.at(a).ms - d_.target_ms) * std::pow(0.5, hi_repeats_ > 1 ? hi_repeats_ - 1 : 0);
  const double yb =
      (points_.at(b).ms - d_.target_ms) * std::pow(0.5, lo_repeats_ > 1 ? lo_repeats_ - 1 : 0);
  const double x = static_cast<double>(a) +
                   (0.0 - ya) * (static_cast<double>(b) - static_cast<double>(a)) / (yb - ya);
  SearchStep next;
  if (!stalled && std::isfinite(x) && yb > ya) {
    const AffineFit f = fit_two(a, points_.at(a).ms, b, points_.at(b).ms);
    r_.fit_fixed_ms = f.fixed_ms;
    r_.fit_ms_per_complexity = f.per_complexity_ms;
    next.complexity = round_clamp(x, a + 1, b - 1);
    next.why = "interpolation between " + std::to_string(a) + " and " + std::to_string(b) +
               ((lo_repeats_ > 1 || hi_repeats_ > 1) ? " (Illinois-weighted)" : "") +
               " reaches the target at " + num(x, 6);
  } else {
    // Geometric midpoint while the bracket spans a wide ratio, else arithmetic.
    const double mid = static_cast<double>(b) > 4.0 * static_cast<double>(a)
                           ? std::sqrt(static_cast<double>(a) * static_cast<double>(b))
                           : 0.5 * (static_cast<double>(a) + static_cast<double>(b));
    next.complexity = round_clamp(mid, a + 1, b - 1);
    next.why = "bisection of " + std::to_string(a) + ".." + std::to_string(b) +
               " (the bracket did not halve in three steps)";
  }
  return next;
}

// A verification inside the tolerance but clearly off centre (beyond the
// refine aim and beyond its own noise) gets one more verification at the
// complexity the long-baseline slope predicts; the closer of the two wins.
Result<LoadCalibrationReport> Calibration::polish(uint32_t verified) {
  const Point p = points_.at(verified);
  const double e = std::fabs(err(p.ms));
  if (e <= d_.tolerance * d_.refine_fraction || e <= 2.0 * p.rel_se || !can_evaluate()) {
    return finish("verified within tolerance");
  }
  // Slope from the point farthest away in GPU time: noise matters least there.
  std::optional<uint32_t> far;
  for (const auto& [c, q] : points_) {
    if (c != verified && (!far || std::fabs(q.ms - p.ms) > std::fabs(points_.at(*far).ms - p.ms)))
      far = c;
  }
  if (!far) return finish("verified within tolerance");
  const AffineFit f = fit_two(*far, points_.at(*far).ms, verified, p.ms);
  if (!f.usable()) return finish("verified within tolerance");
  const double x = static_cast<double>(verified) + (d_.target_ms - p.ms) / f.per_complexity_ms;
  const uint32_t next = round_clamp(x, d_.min_complexity, d_.max_complexity);
  if (next == verified || (points_.contains(next) && points_.at(next).verified)) {
    return finish("verified within tolerance");
  }
  auto v = evaluate(next, StepKind::verify,
                    "polish: verified " + num(err(p.ms) * 100, 3) + "% off; slope " +
                        num(f.per_complexity_ms) + " ms/complexity from complexity " +
                        std::to_string(*far) + " puts the target at " + num(x, 6));
  if (!v) return v.error();
  return finish("verified within tolerance");
}

Result<LoadCalibrationReport> Calibration::too_low() {
  const uint32_t cmin = d_.min_complexity, cmax = d_.max_complexity;
  Point p = points_.at(cmin);
  // A near miss measured over a few frames, or one whose fastest repeat
  // reached the target (the others were slowed by noise), is confirmed over
  // verify_frames.
  const bool fastest_reached = p.fastest_ms <= d_.target_ms * (1.0 + d_.tolerance);
  if (!p.verified && (within(p.ms, 3.0 * d_.tolerance) || fastest_reached) && can_evaluate()) {
    auto v = evaluate(cmin, StepKind::verify, "confirm the lower end of the range");
    if (!v) return v.error();
    if (within(v->median_ms, d_.tolerance))
      return finish("verified within tolerance at the lowest complexity");
    p = points_.at(cmin);
  }
  if (within(p.ms, d_.tolerance)) {  // no budget left to confirm: report it, unverified
    return finish(
        "the lowest complexity is within tolerance by its search median; no budget left to verify "
        "it");
  }
  std::string upper;
  if (cmax == cmin) {
    upper = num(p.ms);
  } else {
    const uint32_t c2 = std::min(cmax, std::max(cmin + 1, 2 * cmin));
    if (!points_.contains(c2) && d_.estimate_top_when_unreachable && can_evaluate()) {
      auto s = evaluate(c2, StepKind::search,
                        "second point, to estimate the top of the reachable range");
      if (!s) return s.error();
    }
    if (points_.contains(c2)) {
      const AffineFit f = fit_two(cmin, p.ms, c2, points_.at(c2).ms);
      upper = f.usable() ? "~" + num(f.fixed_ms + f.per_complexity_ms * cmax) + " (extrapolated)"
                         : "unknown";
    } else {
      upper = "unknown";
    }
  }
  std::string noise_note;
  if (p.fastest_ms <= d_.target_ms * (1.0 + d_.tolerance) && noisy()) {
    noise_note = " (" + noise_text() + ": the fastest repeated measurement at complexity " +
                 std::to_string(cmin) + ", " + num(p.fastest_ms) +
                 " ms, reached the target; a quieter device may reach it)";
  } else if (const std::optional<double> n = noise()) {
    noise_note = " (timing spread between repeated measurements: " + pct(*n) + ")";
  }
  return make_error("load calibration: target " + num(d_.target_ms, 7) +
                    " ms is below the lowest reachable GPU time " + num(p.ms) +
                    " ms at complexity " + std::to_string(cmin) + "; reachable: " + num(p.ms) +
                    " .. " + upper + " ms at this size (" + size_text() +
                    "). Use a smaller size or a larger target." + noise_note);
}

Result<LoadCalibrationReport> Calibration::too_high() {
  const uint32_t cmin = d_.min_complexity, cmax = d_.max_complexity;
  Point p = points_.at(cmax);
  if (!p.verified && within(p.ms, 3.0 * d_.tolerance) && can_evaluate()) {
    auto v = evaluate(cmax, StepKind::verify, "confirm the upper end of the range");
    if (!v) return v.error();
    if (within(v->median_ms, d_.tolerance))
      return finish("verified within tolerance at the highest complexity");
    p = points_.at(cmax);
  }
  if (within(p.ms, d_.tolerance)) {
    return finish(
        "the highest complexity is within tolerance by its search median; no budget left to verify "
        "it");
  }
  return make_error(
      "load calibration: target " + num(d_.target_ms, 7) +
      " ms is above the highest reachable GPU time " + num(p.ms) + " ms at complexity " +
      std::to_string(cmax) + "; reachable: " + num(points_.at(cmin).ms) + " .. " + num(p.ms) +
      " ms at this size (" + size_text() + "). Use a larger size or a smaller target.");
}

// The median of the steps' spreads: the device's timing noise.
std::optional<double> Calibration::noise() const {
  std::vector<double> spreads;
  for (const LoadCalibrationStep& s : r_.steps) {
    if (s.spread_fraction) spreads.push_back(*s.spread_fraction);
  }
  if (spreads.empty()) return std::nullopt;
  std::sort(spreads.begin(), spreads.end());
  return *percentile_sorted(spreads, 0.5);
}

// How much one complexity step near `near` changes the GPU time, relative to
// the target, with its uncertainty: the slope to the measured point farthest
// away within a factor of two in complexity (a long baseline, which noise
// moves least, that still says what one step costs here: the cost is not
// affine far away, and the first measurements at a size run slow), else to
// the nearest point outside that window. nullopt without one.
std::optional<Calibration::StepEstimate> Calibration::step_estimate(uint32_t near) const {
  const auto dist = [near](uint32_t x) { return x > near ? x - near : near - x; };
  const auto local = [near](uint32_t x) {
    return 2 * static_cast<uint64_t>(x) >= near && x <= 2 * static_cast<uint64_t>(near);
  };
  std::optional<uint32_t> far;
  for (const auto& [c, q] : points_) {
    if (c == near || !far) {
      if (c != near) far = c;
      continue;
    }
    const bool better = local(c) == local(*far) ? (local(c) ? dist(c) > dist(*far)
                                                            : dist(c) < dist(*far))
                                                : local(c);
    if (better) far = c;
  }
  if (!far) return std::nullopt;
  const Point& a = points_.at(*far);
  const Point& b = points_.at(near);
  const AffineFit f = fit_two(*far, a.ms, near, b.ms);
  if (!f.usable()) return std::nullopt;
  const double span = std::fabs(static_cast<double>(near) - static_cast<double>(*far));
  return StepEstimate{f.per_complexity_ms / d_.target_ms,
                      std::hypot(a.rel_se * a.ms, b.rel_se * b.ms) / span / d_.target_ms};
}

// Where the measured points near the target, each moved along `slope_ms` (ms
// per complexity), cross it on average (weighted by their frames): noise in
// any one of them averages out.
std::optional<uint32_t> Calibration::crossing_estimate(double slope_ms) const {
  const double window = 3.0 * std::max(d_.tolerance, noise().value_or(0.0));
  double sum = 0, weight = 0;
  for (const auto& [c, p] : points_) {
    if (std::fabs(err(p.ms)) > window) continue;
    sum += p.frames * (static_cast<double>(c) + (d_.target_ms - p.ms) / slope_ms);
    weight += p.frames;
  }
  if (weight <= 0) return std::nullopt;
  return round_clamp(sum / weight, d_.min_complexity, d_.max_complexity);
}

std::string Calibration::adjacent_text(const Bracket& b, double step) const {
  return "neighbouring complexities " + std::to_string(*b.lo) + " and " + std::to_string(*b.hi) +
         " measured " + num(points_.at(*b.lo).ms) + " and " + num(points_.at(*b.hi).ms) +
         " ms although one step changes the GPU time by only ~" + pct(step) +
         " (noise, or a cost that is not monotonic in complexity)";
}

LoadCalibrationReport Calibration::finish(std::string outcome) {
  // Prefer the verified complexity closest to the target; without any
  // verification, the closest search point (reported as unverified).
  std::optional<uint32_t> best;
  double best_err = std::numeric_limits<double>::infinity();
  bool best_verified = false;
  for (const auto& [c, p] : points_) {
    const double e = std::fabs(err(p.ms));
    if ((p.verified && !best_verified) || (p.verified == best_verified && e < best_err)) {
      best = c;
      best_err = e;
      best_verified = p.verified;
    }
  }
  if (best) {
    const Point& p = points_.at(*best);
    r_.complexity = *best;
    r_.verified = p.verified;
    r_.median_ms = p.ms;
    r_.error_fraction = err(p.ms);
    r_.within_tolerance = p.verified && within(p.ms, d_.tolerance);
    if (p.verified) r_.uncertainty_fraction = 2.0 * p.rel_se;
    if (const std::optional<StepEstimate> step = step_estimate(*best))
      r_.step_ms = step->fraction * d_.target_ms;
    if (p.verified) {
      std::vector<double>& samples = verified_samples_.at(*best);
      uint64_t missing = 0;
      for (const LoadCalibrationStep& s : r_.steps) {
        if (s.kind == StepKind::verify && s.complexity == *best) missing += s.frames_missing;
      }
      r_.gpu_ms = summarize_in_place(samples, missing);
      r_.p5_ms = *percentile_sorted(samples, 0.05);  // a verification has ok frames
    }
  }
  r_.noise_fraction = noise();
  // A verification within the tolerance only by chance is not within it: its
  // median must be known to better than the tolerance (twice its relative
  // standard error, from the frames' MAD and the repeats' spread). On a
  // busy 2-CPU machine a verification "within" 2% at a timing noise of 38%
  // was accepted, and Loaded then ran at 31% of its target.
  if (r_.within_tolerance && points_.at(*best).rel_se * 2.0 > d_.tolerance) {
    r_.within_tolerance = false;
    r_.noise_limited = true;
    const Point& p = points_.at(*best);
    const std::string uncertain =
        "the verified median " + num(r_.median_ms) + " ms (" + num(r_.error_fraction * 100, 3) +
        "%) is uncertain by +/-" + pct(p.rel_se * 2.0) +
        ", more than the tolerance: not accepted (within the tolerance it needs ~" +
        num(frames_for_precision(p), 3) + " frames at this noise, ~" +
        num(frames_for_precision(p) * p.ms / 1e3, 3) + " s; " + std::to_string(p.frames) +
        " were measured, within the budget of " + num(static_cast<double>(d_.max_wall_ns) / 1e9) +
        " s and " + std::to_string(d_.max_evaluations) + " evaluations)";
    outcome = noisy() ? noise_text() + ": " + uncertain
                      : "the verification's own uncertainty exceeds the tolerance " +
                            pct(d_.tolerance) + ": " + uncertain;
  } else if (!r_.within_tolerance) {
    // Say what limited the result: the device's noise, or a cost that is
    // not monotonic at this precision; never granularity when it was not.
    // (Granularity, when it was the limit, is in the outcome already.)
    if (!granular_ && noisy()) {
      r_.noise_limited = true;
      outcome = noise_text() + ": " + outcome;
    } else if (!granular_ && !not_monotonic_.empty()) {
      outcome = not_monotonic_ + ": " + outcome;
    }
  }
  r_.granularity_limited = granular_;
  r_.outcome = std::move(outcome);
  r_.wall_ns = host_now_ns() - start_ns_;
  r_.next_frame_id = next_frame_id_;
  return r_;
}

}  // namespace

uint64_t load_calibration_max_frames(const LoadCalibrationDesc& d) {
  return uint64_t{d.max_evaluations} *
         (d.discard_frames +
          std::max<uint64_t>(uint64_t{d.repeats} * d.frames_per_eval, d.verify_frames));
}

Result<LoadCalibrationReport> calibrate_load(LatencyDevice& device,
                                             const LoadCalibrationDesc& desc) {
  if (auto v = validate(desc); !v) return v.error();
  const DeviceInfo& info = device.info();
  if (!info.can_time) {
    std::string why;
    for (const MissingCapability& m : info.missing)
      why += (why.empty() ? "" : "; ") + m.name + ": " + m.reason;
    return make_error("load calibration needs GPU timestamps, which device '" + info.name + "' (" +
                      info.backend + ") does not provide" +
                      (why.empty() ? std::string() : " (" + why + ")"));
  }
  Calibration c(device, desc);
  return c.run();
}

}  // namespace latlab
