#include "latlab/clock_model.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "core/int128.hpp"

namespace latlab {
namespace {

// Beyond this distance from the anchor (~73 years) a tick is garbage, not a
// time: map() says so with an unbounded error instead of overflowing.
constexpr int128_t kMaxMappedNs = int128_t{1} << 61;
// Integer roundings in the fit and in map(): the anchor host (llround), the
// tick -> ns conversions (to nearest) and the drift product (llround).
constexpr int64_t kRoundingSlackNs = 2;

// Signed ticks -> ns, rounded to nearest (symmetric), exact in 128 bits.
int128_t signed_ticks_to_ns(const TickFormat& f, int128_t ticks) {
  const bool neg = ticks < 0;
  const auto mag = static_cast<uint128_t>(neg ? -ticks : ticks);
  // Integer periods (1 ns on NVIDIA and lavapipe) skip the 128-bit division.
  const uint128_t ns = f.period_den == 1 ? mag * f.period_num
                                         : (mag * f.period_num + f.period_den / 2) / f.period_den;
  return neg ? -static_cast<int128_t>(ns) : static_cast<int128_t>(ns);
}

// Difference of two unwrapped ticks (same 64-bit sequence), a - b.
int64_t unwrapped_delta(uint64_t a, uint64_t b) { return static_cast<int64_t>(a - b); }

double effective_error_ns(const TickFormat& f, const CalibrationPair& p) {
  return static_cast<double>(pair_error_bound_ns(f, p));
}

struct Entry {
  CalibrationPair pair;
  uint64_t unwrapped = 0;
};

}  // namespace

int64_t pair_error_bound_ns(const TickFormat& ticks, const CalibrationPair& pair) {
  return pair.max_deviation_ns + static_cast<int64_t>(std::ceil(ticks.period_ns())) + 1;
}

uint64_t ClockFit::unwrap(uint64_t device_ticks) const {
  const int64_t d = ticks.signed_delta(anchor_device_ticks, device_ticks & ticks.mask());
  return anchor_device_ticks + static_cast<uint64_t>(d);
}

MappedTime ClockFit::map_unwrapped(uint64_t unwrapped_ticks) const {
  const int128_t x =
      signed_ticks_to_ns(ticks, unwrapped_delta(unwrapped_ticks, anchor_device_ticks));
  if (x > kMaxMappedNs || x < -kMaxMappedNs) {
    return MappedTime{anchor_host_ns, std::numeric_limits<int64_t>::max()};
  }
  const auto xn = static_cast<int64_t>(x);
  const double xd = static_cast<double>(xn);
  const int64_t host = anchor_host_ns + xn + std::llround(drift * xd);
  const double grow = std::ceil(drift_error * std::fabs(xd));
  MappedTime m;
  m.host_ns = host;
  m.error_ns = grow >= 9e18 ? std::numeric_limits<int64_t>::max()
                            : base_error_ns + static_cast<int64_t>(grow) + kRoundingSlackNs;
  return m;
}

MappedTime ClockFit::map(uint64_t device_ticks) const {
  return map_unwrapped(unwrap(device_ticks));
}

struct ClockModel::Impl {
  TickFormat ticks;
  ClockModelDesc desc;
  std::deque<Entry> window;         // accepted pairs, oldest first
  std::deque<int64_t> recent_devs;  // deviations of the last `window` pairs offered
  bool have_ref = false;            // newest accepted-on-arrival pair: unwrap reference
  uint64_t ref_unwrapped = 0;
  int64_t ref_host_ns = 0;
  uint64_t accepted = 0;
  uint64_t rejected = 0;
  std::shared_ptr<const ClockFit> fit;
  std::vector<int64_t> residuals;
  std::vector<double> x, z, e, w;  // refit scratch, kept to avoid allocating per pair

  int64_t best_recent() const {
    return recent_devs.empty() ? 0 : *std::min_element(recent_devs.begin(), recent_devs.end());
  }
  int64_t threshold(int64_t best) const {
    return std::llround(desc.reject_factor * static_cast<double>(best)) + desc.reject_slack_ns;
  }
  uint64_t unwrap(const CalibrationPair& p) const;
  void refit();
};

uint64_t ClockModel::Impl::unwrap(const CalibrationPair& p) const {
  if (!have_ref || ticks.valid_bits >= 64) return p.device_ticks;
  // Predict the device ticks elapsed since the reference from the host clock
  // (drift-corrected when a fit exists), then take the value with the right
  // low bits nearest that prediction: right while the prediction is within
  // half a wrap period, however many wraps lie in between.
  const double slope = fit ? 1.0 + fit->drift : 1.0;
  const double host_delta = static_cast<double>(p.host_ns - ref_host_ns);
  const double predicted_ticks = host_delta / slope * static_cast<double>(ticks.period_den) /
                                 static_cast<double>(ticks.period_num);
  const uint64_t candidate = ref_unwrapped + static_cast<uint64_t>(std::llround(predicted_ticks));
  const int64_t d = ticks.signed_delta(candidate, p.device_ticks);
  return candidate + static_cast<uint64_t>(d);
}

namespace {

// z = a + d * x fitted with weights w; base and drift_err bound the offset
// and drift errors from each pair's error e.
struct LineFit {
  double a, d, base, drift_err;
};

// Fits two or more pairs; leaves `out` as it is when the pairs have no
// spread in time or the drift is beyond `max_drift`.
void fit_line(const std::vector<double>& x, const std::vector<double>& z,
              const std::vector<double>& e, const std::vector<double>& w, double max_drift,
              LineFit& out) {
  const size_t n = x.size();
  double sw = 0, sx = 0, sz = 0;
  for (size_t i = 0; i < n; ++i) {
    sw += w[i];
    sx += w[i] * x[i];
    sz += w[i] * z[i];
  }
  const double xbar = sx / sw, zbar = sz / sw;
  double sxx = 0, sxz = 0;
  for (size_t i = 0; i < n; ++i) {
    sxx += w[i] * (x[i] - xbar) * (x[i] - xbar);
    sxz += w[i] * (x[i] - xbar) * (z[i] - zbar);
  }
  if (sxx > 0) {
    const double d_fit = sxz / sxx;
    const double a_fit = zbar - d_fit * xbar;
    // offset = sum c_i z_i, drift = sum g_i z_i.
    double misfit = 0;
    for (size_t i = 0; i < n; ++i) {
      const double r = z[i] - (a_fit + d_fit * x[i]);
      misfit = std::max(misfit, std::fabs(r) - e[i]);
    }
    double sum_c = 0, sum_g = 0;
    for (size_t i = 0; i < n; ++i) {
      const double g = w[i] * (x[i] - xbar) / sxx;
      const double c = w[i] / sw - xbar * g;
      sum_c += std::fabs(c) * (e[i] + misfit);
      sum_g += std::fabs(g) * (e[i] + misfit);
    }
    if (std::isfinite(d_fit) && std::fabs(d_fit) <= max_drift && sum_g <= max_drift)
      out = LineFit{a_fit, d_fit, sum_c, sum_g};
  }
}

}  // namespace

void ClockModel::Impl::refit() {
  const Entry& anchor = window.back();
  const size_t n = window.size();
  x.resize(n);
  z.resize(n);
  e.resize(n);
  w.resize(n);
  bool all_estimated = true;
  int64_t newest_host = anchor.pair.host_ns;
  for (size_t i = 0; i < n; ++i) {
    const Entry& en = window[i];
    // Everything relative to the anchor, in exact integers; only the small
    // differences become doubles.
    const auto xi = static_cast<int64_t>(
        signed_ticks_to_ns(ticks, unwrapped_delta(en.unwrapped, anchor.unwrapped)));
    const int64_t yi = en.pair.host_ns - anchor.pair.host_ns;
    x[i] = static_cast<double>(xi);
    z[i] = static_cast<double>(yi - xi);
    e[i] = effective_error_ns(ticks, en.pair);
    w[i] = 1.0 / (e[i] * e[i]);
    all_estimated = all_estimated && en.pair.estimated;
    newest_host = std::max(newest_host, en.pair.host_ns);
  }

  LineFit line{0.0, 0.0, e.back(), desc.max_drift_ppm * 1e-6};
  if (n >= 2) fit_line(x, z, e, w, desc.max_drift_ppm * 1e-6, line);
  const double a = line.a, d = line.d, base = line.base, drift_err = line.drift_err;
  // Not fitted (one pair, no spread in time, or a drift beyond belief): the
  // anchor pair alone, drift unknown within max_drift_ppm.

  auto f = std::make_shared<ClockFit>();
  f->ticks = ticks;
  f->anchor_device_ticks = anchor.unwrapped;
  f->anchor_host_ns = anchor.pair.host_ns + std::llround(a);
  f->drift = d;
  f->base_error_ns = static_cast<int64_t>(std::ceil(base)) + kRoundingSlackNs;
  f->drift_error = drift_err;
  f->newest_pair_host_ns = newest_host;
  f->pairs_used = static_cast<uint32_t>(n);
  f->estimated = all_estimated;
  fit = std::move(f);

  residuals.assign(n, 0);
  for (size_t i = 0; i < n; ++i) residuals[i] = std::llround(z[i] - (a + d * x[i]));
}

ClockModel::ClockModel(TickFormat ticks, ClockModelDesc desc) : impl_(std::make_shared<Impl>()) {
  impl_->ticks = ticks;
  if (impl_->ticks.valid_bits == 0 || impl_->ticks.valid_bits > 64) impl_->ticks.valid_bits = 64;
  if (impl_->ticks.period_num == 0 || impl_->ticks.period_den == 0) impl_->ticks = TickFormat{};
  desc.window = std::max<uint32_t>(desc.window, 2);
  if (!(desc.reject_factor >= 1.0)) desc.reject_factor = 1.0;
  desc.reject_slack_ns = std::max<int64_t>(desc.reject_slack_ns, 0);
  if (!(desc.max_drift_ppm > 0.0)) desc.max_drift_ppm = ClockModelDesc{}.max_drift_ppm;
  impl_->desc = desc;
}

bool ClockModel::add_pair(const CalibrationPair& pair_in) {
  Impl& m = *impl_;
  if (pair_in.max_deviation_ns < 0) {
    ++m.rejected;
    return false;
  }
  CalibrationPair pair = pair_in;
  pair.device_ticks &= m.ticks.mask();

  m.recent_devs.push_back(pair.max_deviation_ns);
  while (m.recent_devs.size() > m.desc.window) m.recent_devs.pop_front();
  const int64_t limit = m.threshold(m.best_recent());
  if (pair.max_deviation_ns > limit) {
    ++m.rejected;
    return false;
  }

  const uint64_t unwrapped = m.unwrap(pair);
  m.have_ref = true;
  m.ref_unwrapped = unwrapped;
  m.ref_host_ns = pair.host_ns;
  ++m.accepted;
  m.window.push_back(Entry{pair, unwrapped});
  while (m.window.size() > m.desc.window) m.window.pop_front();
  // A better best can show older pairs to be far above it.
  const size_t before = m.window.size();
  std::erase_if(m.window, [&](const Entry& en) { return en.pair.max_deviation_ns > limit; });
  m.rejected += before - m.window.size();
  m.refit();
  return true;
}

bool ClockModel::ready() const { return impl_->fit != nullptr; }
std::shared_ptr<const ClockFit> ClockModel::fit() const { return impl_->fit; }
std::vector<int64_t> ClockModel::residuals() const { return impl_->residuals; }
uint64_t ClockModel::accepted_count() const { return impl_->accepted; }
uint64_t ClockModel::rejected_count() const { return impl_->rejected; }
int64_t ClockModel::best_deviation_ns() const { return impl_->best_recent(); }

}  // namespace latlab
