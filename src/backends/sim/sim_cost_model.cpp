#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/splitmix64.hpp"
#include "latlab/bench/sim.hpp"

namespace latlab {

namespace {

// splitmix64, not std::normal_distribution: the same on every standard
// library, so sim results are reproducible everywhere.
double unit_open(uint64_t& state) {  // (0, 1)
  return (static_cast<double>(splitmix64_next(state) >> 11) + 0.5) * 0x1.0p-53;
}

}  // namespace

SimCostModel::SimCostModel(SimCostModelDesc desc) : desc_(desc), rng_state_(desc.seed) {}

double SimCostModel::expected_ns(const FrameWorkload& work) const {
  const double pixels = static_cast<double>(work.width) * static_cast<double>(work.height);
  const double units = std::pow(static_cast<double>(std::max<uint32_t>(work.complexity, 1)),
                                desc_.complexity_exponent);
  const double form = work.form == WorkloadForm::fragment ? desc_.fragment_factor : 1.0;
  double ns =
      desc_.fixed_ns + desc_.ns_per_unit * pixels * static_cast<double>(work.passes) * units * form;
  if (desc_.wobble_fraction != 0.0 && desc_.wobble_period > 0.0) {
    ns *= 1.0 + desc_.wobble_fraction *
                    std::sin(2.0 * std::numbers::pi * static_cast<double>(work.complexity) /
                             desc_.wobble_period);
  }
  return std::max(ns, 1.0);
}

double SimCostModel::next_gaussian() {  // Box-Muller
  const double u1 = unit_open(rng_state_);
  const double u2 = unit_open(rng_state_);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double SimCostModel::sample_ns(const FrameWorkload& work) {
  ++samples_;
  double ns = expected_ns(work);
  if (desc_.noise_fraction > 0.0) ns *= 1.0 + desc_.noise_fraction * next_gaussian();
  if (desc_.outlier_every != 0 && samples_ % desc_.outlier_every == 0) ns *= desc_.outlier_factor;
  return std::max(ns, 1.0);
}

}  // namespace latlab
