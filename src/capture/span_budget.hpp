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

  // cost_ns: what one timed submission costs the program (> 0).
  SpanBudget(double share, int64_t cost_ns, int64_t now_ns)
      : share_(share),
        cost_(std::max<int64_t>(cost_ns, 1)),
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
    frame_ = frame;
    frame_timed_ = tokens_ >= static_cast<double>(cost_);
    if (frame_timed_) spend();
    return frame_timed_;
  }

  int64_t cost_ns() const { return cost_; }
  double share() const { return share_; }

 private:
  void refill(int64_t now_ns) {
    if (now_ns > last_)
      tokens_ = std::min(cap_, tokens_ + share_ * static_cast<double>(now_ns - last_));
    last_ = std::max(last_, now_ns);
  }
  // A timed frame's later submissions are timed too: the bucket may go
  // below zero, down to one burst, and the next frames wait for it.
  void spend() { tokens_ = std::max(-cap_, tokens_ - static_cast<double>(cost_)); }

  double share_;
  int64_t cost_;
  double cap_;
  double tokens_;
  int64_t last_;
  uint64_t frame_ = UINT64_MAX;
  bool frame_timed_ = false;
};

}  // namespace latlab::capture
