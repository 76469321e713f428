// Which submissions the capture layer times, so that what timing them costs
// the program stays within a share of its time. A span costs the program
// the layer's command buffers in the driver and on the device (the
// bracketing probe's figures: 50-100 us on lavapipe, 20-50 us on an NVIDIA
// H100); a program of 100-us frames that waits for each would lose 15-50 %
// to them, one of 16-ms frames well under 1 %. So the layer times
// every submission while the spans' cost fits the budget, and skips whole
// frames (NoSpan::budget, counted with its reason) only when it does not:
// a token bucket filled at `share` of the wall time, holding at most
// kBurstSpans spans' cost, full at the start.
//
// The probe prices a span on an empty command buffer; where the closing
// timestamp also waits for the program's own work (lavapipe flushes its
// rasteriser) a span costs the program more. So, for a program that
// presents, the budget also learns the price from the program itself: the
// mean length of its timed frames against its untimed ones (which frames
// are timed follows the bucket, not their content), per span, and prices a
// span at the dearer of the two. While every frame is timed there is no
// untimed frame to compare with, and the probe's price stands.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
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

class SpanBudget {
 public:
  static constexpr int64_t kBurstSpans = 16;
  // Frames of each kind (timed, untimed) before the learnt price is used.
  static constexpr int64_t kLearnFrames = 16;
  // The program's first frames (pipelines built, caches cold, the first
  // burst all timed) teach nothing about a span's price.
  static constexpr int64_t kWarmupFrames = 2 * kBurstSpans;
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

  // Whether a submission of `frame` at `now_ns` is timed. per_frame: the
  // program presents, so a frame is timed whole or not at all (its GPU
  // figures come from all its submissions); else each submission alone.
  bool take(uint64_t frame, bool per_frame, int64_t now_ns) {
    refill(now_ns);
    if (per_frame && frame == frame_) {
      if (frame_timed_) spend();
      return frame_timed_;
    }
    if (per_frame) learn(frame, now_ns);
    frame_ = frame;
    frame_timed_ = tokens_ >= static_cast<double>(cost_);
    if (frame_timed_) spend();
    return frame_timed_;
  }

  // What a span is priced at now: the probe's, or the dearer learnt one.
  int64_t cost_ns() const { return cost_; }
  int64_t probe_cost_ns() const { return probe_cost_; }
  double share() const { return share_; }

 private:
  // A running mean that forgets: a change of scene does not weigh on the
  // price for long.
  struct Mean {
    double value = 0;
    int64_t n = 0;
    void add(double x) {
      ++n;
      value += (x - value) / static_cast<double>(std::min<int64_t>(n, 32));
    }
  };

  void refill(int64_t now_ns) {
    if (now_ns > last_)
      tokens_ = std::min(cap_, tokens_ + share_ * static_cast<double>(now_ns - last_));
    last_ = std::max(last_, now_ns);
  }
  // A timed frame's later submissions are timed too: the bucket may go
  // below zero, down to one burst, and the next frames wait for it.
  void spend() {
    tokens_ = std::max(-cap_, tokens_ - static_cast<double>(cost_));
    ++frame_spans_;
  }
  // The frame before `frame` ended at `now_ns` (its length: first
  // submission to the next frame's first). A frame over 4 times the mean
  // of its kind (a hitch, a pause) is left out.
  void learn(uint64_t frame, int64_t now_ns) {
    if (frame_ != UINT64_MAX && frame == frame_ + 1 && now_ns > frame_start_ &&
        ++frames_seen_ > kWarmupFrames) {
      const auto length = static_cast<double>(now_ns - frame_start_);
      Mean& kind = frame_timed_ ? timed_ : untimed_;
      if (kind.n < kLearnFrames || length <= 4 * kind.value) {
        kind.add(length);
        if (frame_timed_) spans_.add(static_cast<double>(frame_spans_));
        price();
      }
    }
    frame_start_ = now_ns;
    frame_spans_ = 0;
  }
  void price() {
    if (timed_.n < kLearnFrames || untimed_.n < kLearnFrames || spans_.value <= 0) return;
    const double learnt = (timed_.value - untimed_.value) / spans_.value;
    const double probe = static_cast<double>(probe_cost_);
    cost_ = static_cast<int64_t>(std::clamp(learnt, probe, probe * kMaxPriceOverProbe));
    cap_ = static_cast<double>(cost_) * kBurstSpans;
    tokens_ = std::clamp(tokens_, -cap_, cap_);
  }

  double share_;
  int64_t probe_cost_;
  int64_t cost_;
  double cap_;
  double tokens_;
  int64_t last_;
  uint64_t frame_ = UINT64_MAX;
  bool frame_timed_ = false;
  int64_t frame_start_ = 0;
  int64_t frame_spans_ = 0;
  int64_t frames_seen_ = 0;
  Mean timed_, untimed_, spans_;
};

}  // namespace latlab::capture
