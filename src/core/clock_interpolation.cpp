#include "latlab/clock_interpolation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "core/int128.hpp"

namespace latlab {
namespace {

// Integer roundings: the two tick -> ns conversions and the division.
constexpr int64_t kRoundingSlackNs = 2;
// A host distance beyond this (~146 years) predicts no tick: the reference's own is used.
constexpr int64_t kMaxPredictNs = int64_t{1} << 62;

// a / b rounded to nearest (halves away from zero), b > 0.
int128_t div_round(int128_t a, int128_t b) {
  return a >= 0 ? (a + b / 2) / b : -((-a + b / 2) / b);
}

int64_t saturate(int128_t v) {
  constexpr int128_t kMax = std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(std::min(v, kMax));
}

}  // namespace

uint64_t ClockInterpolation::unwrap_near(uint64_t raw, const Point& ref, int64_t host_ns) const {
  uint64_t predicted = ref.unwrapped;
  const int128_t dh = int128_t{host_ns} - ref.host_ns;
  if (ticks_.valid_bits < 64 && dh > -kMaxPredictNs && dh < kMaxPredictNs) {
    // Host ns -> ticks at the nominal rate: drift moves it by ppm, far less
    // than the quarter wrap the caller promises.
    const double t = static_cast<double>(dh) * static_cast<double>(ticks_.period_den) /
                     static_cast<double>(ticks_.period_num);
    predicted += static_cast<uint64_t>(std::llround(t));
  }
  return predicted + static_cast<uint64_t>(ticks_.signed_delta(predicted, raw & ticks_.mask()));
}

ClockInterpolation::ClockInterpolation(TickFormat ticks, std::vector<CalibrationPair> pairs,
                                       std::shared_ptr<const ClockFit> outside)
    : ticks_(ticks), outside_(std::move(outside)) {
  if (ticks_.valid_bits == 0 || ticks_.valid_bits > 64) ticks_.valid_bits = 64;
  if (ticks_.period_num == 0 || ticks_.period_den == 0) ticks_ = TickFormat{};
  std::stable_sort(
      pairs.begin(), pairs.end(),
      [](const CalibrationPair& a, const CalibrationPair& b) { return a.host_ns < b.host_ns; });
  points_.reserve(pairs.size());
  for (const CalibrationPair& p : pairs) {
    if (p.max_deviation_ns < 0) {
      ++dropped_;
      continue;
    }
    Point pt;
    pt.host_ns = p.host_ns;
    pt.error_ns = pair_error_bound_ns(ticks_, p);
    if (points_.empty()) {
      pt.unwrapped = p.device_ticks & ticks_.mask();
    } else {
      pt.unwrapped = unwrap_near(p.device_ticks, points_.back(), p.host_ns);
      // Ticks that do not rise with the host time: a broken pair.
      if (static_cast<int64_t>(pt.unwrapped - points_.back().unwrapped) <= 0 ||
          pt.host_ns <= points_.back().host_ns) {
        ++dropped_;
        continue;
      }
    }
    points_.push_back(pt);
  }
  // Each inner pair against the line through its neighbours. A miss beyond
  // the three pairs' bounds is a bend (or a pair off by more than it says);
  // it counts whole: a bend inside one interval can miss by as much there.
  for (size_t i = 1; i + 1 < points_.size(); ++i) {
    const MappedTime m = between(points_[i - 1], points_[i + 1], points_[i].unwrapped);
    int128_t miss = int128_t{points_[i].host_ns} - m.host_ns;
    if (miss < 0) miss = -miss;
    if (miss > int128_t{m.error_ns} + points_[i].error_ns && miss > misfit_ns_)
      misfit_ns_ = saturate(miss);
  }
}

MappedTime ClockInterpolation::between(const Point& a, const Point& b, uint64_t t) const {
  const int128_t x = ticks_.ticks_to_ns(t - a.unwrapped);
  const int128_t span = ticks_.ticks_to_ns(b.unwrapped - a.unwrapped);
  MappedTime m;
  if (span <= 0) {  // ticks closer than a ns: the nearer pair alone
    m.host_ns = a.host_ns;
    m.error_ns = std::max(a.error_ns, b.error_ns) + kRoundingSlackNs;
    return m;
  }
  const int128_t dh = int128_t{b.host_ns} - a.host_ns;
  m.host_ns = static_cast<int64_t>(a.host_ns + div_round(dh * x, span));
  const int128_t e = (span - x) * a.error_ns + x * b.error_ns;
  m.error_ns = saturate((e + span - 1) / span + kRoundingSlackNs);
  return m;
}

std::optional<InterpolatedTime> ClockInterpolation::map(uint64_t device_ticks,
                                                        int64_t near_host_ns) const {
  if (!points_.empty()) {
    // The pair nearest in host time resolves the wrap.
    auto ref = std::lower_bound(points_.begin(), points_.end(), near_host_ns,
                                [](const Point& p, int64_t h) { return p.host_ns < h; });
    if (ref == points_.end() ||
        (ref != points_.begin() && int128_t{near_host_ns} - std::prev(ref)->host_ns <=
                                       int128_t{ref->host_ns} - near_host_ns)) {
      ref = std::prev(ref);
    }
    const uint64_t t = unwrap_near(device_ticks, *ref, near_host_ns);
    // First pair at or after t (the unwrapped ticks rise, so compare signed distances).
    const auto b = std::lower_bound(
        points_.begin(), points_.end(), t,
        [](const Point& p, uint64_t u) { return static_cast<int64_t>(p.unwrapped - u) < 0; });
    if (b != points_.end() && b->unwrapped == t) {
      return InterpolatedTime{MappedTime{b->host_ns, b->error_ns + misfit_ns_}, true};
    }
    if (b != points_.begin() && b != points_.end()) {
      MappedTime m = between(*std::prev(b), *b, t);
      m.error_ns = saturate(int128_t{m.error_ns} + misfit_ns_);
      return InterpolatedTime{m, true};
    }
  }
  if (!outside_) return std::nullopt;
  return InterpolatedTime{outside_->map(device_ticks), false};
}

}  // namespace latlab
