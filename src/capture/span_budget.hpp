// Which submissions the capture layer times, so that what timing them costs
// the program stays within a share of its time. A span costs the program
// the layer's command buffers in the driver and on the device (a replay
// of small frames lost 11-15 us a span on an NVIDIA H100 or H200, 50-120
// us on lavapipe; docs/BENCHMARKS.md); a program of 70-us frames would
// lose 15-20 % to them, one of 16-ms frames well under 1 %. So the layer times
// every submission while the spans' cost fits the budget, and skips whole
// frames (NoSpan::budget, counted with its reason) only when it does not:
// a token bucket filled at `share` of the wall time, holding at most
// kBurstSpans spans' cost, full at the start.
//
// The probe prices a span on an empty command buffer; where the closing
// timestamp also waits for the program's own work (lavapipe flushes its
// rasteriser), or the driver takes longer over the program's submission, a
// span costs the program more. So the budget also learns the price from
// the program itself (SpanPriceLearner): the length of its timed units
// against its untimed ones around them, per span, and prices a span at the
// dearer of the two. A unit is a frame for a program that presents (a
// frame is timed whole or not at all) and a block of kBlockSubmissions
// consecutive submissions before its first present: a timed submission's
// cost can show in the wait of the next one (a program that waits for its
// submissions), which stays inside a block but for its last. While every
// unit is timed there is no untimed one to compare with, and the probe's
// price stands.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string_view>

namespace latlab::capture {

// The layer's setting: LATLAB_CAPTURE_GPU_SPANS, "all" or a percent of the
// program's time ("2", "0.5"); unset: kDefaultSpanBudgetPercent.
inline constexpr const char* kGpuSpansEnv = "LATLAB_CAPTURE_GPU_SPANS";
inline constexpr double kDefaultSpanBudgetPercent = 2.0;

// The share (0, 1] of the program's time the spans may cost; nullopt: time
// every submission ("all", or 100). A value that is not "all" nor a
// percent in (0, 100] gives the default.
inline std::optional<double> span_budget_share(const char* env_value) {
  constexpr double kDefault = kDefaultSpanBudgetPercent / 100.0;
  if (env_value == nullptr) return kDefault;
  const std::string_view v(env_value);
  if (v == "all") return std::nullopt;
  char* end = nullptr;
  const double percent = std::strtod(env_value, &end);
  if (end == env_value || *end != '\0' || !(percent > 0.0 && percent <= 100.0)) return kDefault;
  if (percent == 100.0) return std::nullopt;
  return percent / 100.0;
}

// Where a span's price came from.
enum class SpanPriceFrom : uint32_t { probe = 0, frames = 1, submissions = 2 };
// Its name in the result (overhead.gpu_span_price_from); a value this
// latlab does not know (a newer source's) reads as the probe's.
inline const char* to_string(SpanPriceFrom f) {
  switch (f) {
    case SpanPriceFrom::frames:
      return "frames";
    case SpanPriceFrom::submissions:
      return "submissions";
    default:
      return "probe";
  }
}

// A running mean that forgets beyond `window` values: a change of scene
// does not weigh on it for long.
struct ForgetfulMean {
  double value = 0;
  int64_t n = 0;
  void add(double x, int64_t window) {
    ++n;
    value += (x - value) / static_cast<double>(std::min(n, window));
  }
};

// What a span costs the program, from its units (frames, or blocks of
// submissions): each timed unit's length against the mean of the untimed
// units just before it, per span of the timed unit. The untimed mean
// follows the program closely (kBaselineWindow) and is used only while an
// untimed unit was recent, so a drift of the program's pace (a scene
// change, a slower phase) moves both sides; the differences are averaged
// over many more (kPriceWindow), which tames the noise of single frames.
class SpanPriceLearner {
 public:
  static constexpr int64_t kLearnUnits = 16;      // of each kind before a price
  static constexpr int64_t kBaselineWindow = 16;  // untimed units
  static constexpr int64_t kPriceWindow = 256;    // timed units
  static constexpr int64_t kMaxUnitsApart = 64;   // timed since the last untimed

  // A unit of `length_ns` ended with `spans` timed submissions (0: untimed).
  // `max_price_ns`: a timed unit dearer than this per span, over 4 times
  // the untimed mean, is a hitch, left out as an untimed one over 4 times is.
  void add(double length_ns, int64_t spans, double max_price_ns) {
    if (spans == 0) {
      if (baseline_.n < kLearnUnits || length_ns <= 4 * baseline_.value) {
        baseline_.add(length_ns, kBaselineWindow);
        since_untimed_ = 0;
      }
      return;
    }
    if (baseline_.n < kLearnUnits || ++since_untimed_ > kMaxUnitsApart) return;
    const double over = length_ns - baseline_.value;
    if (length_ns > 4 * baseline_.value + static_cast<double>(spans) * max_price_ns) return;
    per_span_.add(over / static_cast<double>(spans), kPriceWindow);
  }
  // ns a span, once learnt (may be below zero or below the probe's).
  std::optional<double> price() const {
    if (per_span_.n < kLearnUnits) return std::nullopt;
    return per_span_.value;
  }

 private:
  ForgetfulMean baseline_, per_span_;
  int64_t since_untimed_ = 0;
};

class SpanBudget {
 public:
  static constexpr int64_t kBurstSpans = 16;
  // Submissions decided together before the program's first present.
  static constexpr int64_t kBlockSubmissions = 16;
  // The program's first units (pipelines built, caches cold, the first
  // burst all timed) teach nothing about a span's price.
  static constexpr int64_t kWarmupFrames = 2 * kBurstSpans;
  static constexpr int64_t kWarmupBlocks = 4;
  // The learnt price is held to at most this many times the probe's.
  static constexpr double kMaxPriceOverProbe = 8.0;

  // cost_ns: what one timed submission costs the program by the probe (> 0).
  SpanBudget(double share, int64_t cost_ns, int64_t now_ns)
      : share_(share),
        probe_cost_(std::max<int64_t>(cost_ns, 1)),
        cost_(probe_cost_),
        cap_(static_cast<double>(cost_) * kBurstSpans),
        tokens_(cap_),
        last_(now_ns) {}

  // Whether a submission of `frame` (the program presents) at `now_ns` is
  // timed: a frame is timed whole or not at all (its GPU figures come from
  // all its submissions).
  bool take_in_frame(uint64_t frame, int64_t now_ns) {
    return take(SpanPriceFrom::frames, frame, now_ns);
  }
  // The same for a submission before the program's first present: decided
  // per block of kBlockSubmissions.
  bool take_submission(int64_t now_ns) {
    return take(SpanPriceFrom::submissions, submissions_++ / kBlockSubmissions, now_ns);
  }

  // What a span is priced at now: the probe's, or the dearer learnt one.
  int64_t cost_ns() const { return cost_; }
  int64_t probe_cost_ns() const { return probe_cost_; }
  SpanPriceFrom price_from() const { return from_; }
  double share() const { return share_; }

 private:
  bool take(SpanPriceFrom unit, uint64_t id, int64_t now_ns) {
    refill(now_ns);
    // Threads read their times before they meet at the budget's lock, so a
    // time may come in older than the last: units are measured on the
    // latest time seen, which never goes back.
    now_ns = last_;
    if (unit != unit_) {
      // The program began to present: frames are not blocks, learn anew.
      unit_ = unit;
      learner_ = SpanPriceLearner{};
      units_seen_ = 0;
      id_ = UINT64_MAX;
    }
    if (id == id_) {
      if (unit_timed_) spend();
      return unit_timed_;
    }
    end_unit(id, now_ns);
    id_ = id;
    unit_timed_ = tokens_ >= static_cast<double>(cost_);
    if (unit_timed_) spend();
    return unit_timed_;
  }
  void refill(int64_t now_ns) {
    if (now_ns > last_)
      tokens_ = std::min(cap_, tokens_ + share_ * static_cast<double>(now_ns - last_));
    last_ = std::max(last_, now_ns);
  }
  // A timed unit's later submissions are timed too: the bucket may go
  // below zero, down to one burst, and the next units wait for it.
  void spend() {
    tokens_ = std::max(-cap_, tokens_ - static_cast<double>(cost_));
    ++unit_spans_;
  }
  // The unit before `id` ended at `now_ns` (its length: first submission
  // to the next unit's first).
  void end_unit(uint64_t id, int64_t now_ns) {
    const int64_t warmup = unit_ == SpanPriceFrom::frames ? kWarmupFrames : kWarmupBlocks;
    if (id_ != UINT64_MAX && id == id_ + 1 && now_ns > unit_start_ && ++units_seen_ > warmup) {
      const double probe = static_cast<double>(probe_cost_);
      learner_.add(static_cast<double>(now_ns - unit_start_), unit_timed_ ? unit_spans_ : 0,
                   probe * kMaxPriceOverProbe);
      if (const auto learnt = learner_.price()) reprice(*learnt);
    }
    unit_start_ = now_ns;
    unit_spans_ = 0;
  }
  void reprice(double learnt) {
    const double probe = static_cast<double>(probe_cost_);
    cost_ = static_cast<int64_t>(std::clamp(learnt, probe, probe * kMaxPriceOverProbe));
    from_ = learnt > probe ? unit_ : SpanPriceFrom::probe;
    cap_ = static_cast<double>(cost_) * kBurstSpans;
    tokens_ = std::clamp(tokens_, -cap_, cap_);
  }

  double share_;
  int64_t probe_cost_;
  int64_t cost_;
  double cap_;
  double tokens_;
  int64_t last_;
  SpanPriceFrom unit_ = SpanPriceFrom::submissions;
  SpanPriceFrom from_ = SpanPriceFrom::probe;
  uint64_t submissions_ = 0;
  uint64_t id_ = UINT64_MAX;
  bool unit_timed_ = false;
  int64_t unit_start_ = 0;
  int64_t unit_spans_ = 0;
  int64_t units_seen_ = 0;
  SpanPriceLearner learner_;
};

// What a shared budget decided for one submission.
struct SpanTake {
  bool timed = false;
  uint64_t frame = 0;  // the frame it was decided in (0: before the first present)
};

// A device's budget as its program threads share it (the Vulkan layer's
// submit path). `frame` is the program's present count, which a present on
// another thread may advance at any moment: it is read under `mu`, so the
// budget sees frames in order and decides each once. (Read before the lock,
// a submission that lost the race to a present would decide the frame
// before again, perhaps the other way.)
inline SpanTake take_shared(SpanBudget& budget, std::mutex& mu, const std::atomic<uint64_t>& frame,
                            int64_t now_ns) {
  std::lock_guard lock(mu);
  const uint64_t f = frame.load(std::memory_order_relaxed);
  return {f > 0 ? budget.take_in_frame(f, now_ns) : budget.take_submission(now_ns), f};
}

}  // namespace latlab::capture
