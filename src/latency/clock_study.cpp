#include "latlab/clock_study.hpp"

#include <cerrno>
#include <cmath>
#include <ctime>
#include <vector>

namespace latlab {
namespace {

void host_sleep_until(int64_t deadline_ns) {
  const timespec ts = host_ns_to_timespec(deadline_ns);
  while (clock_nanosleep(kHostClockId, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

std::string validate(const ClockStudyDesc& d) {
  if (!(d.seconds > 0.0) || !std::isfinite(d.seconds) || d.seconds > 7 * 86400.0) {
    return "seconds must be in (0, 604800], got " + std::to_string(d.seconds);
  }
  if (d.interval_ns < 1'000)
    return "interval_ns must be >= 1000, got " + std::to_string(d.interval_ns);
  if (d.samples_per_refresh == 0) return "samples_per_refresh must be >= 1";
  if (d.max_tries == 0) return "max_tries must be >= 1";
  if (d.fresh_pairs == 0) return "fresh_pairs must be >= 1";
  return {};
}

}  // namespace

Result<ClockStudyResult> run_clock_study(const Calibrator::Source& source, TickFormat ticks,
                                         const ClockStudyDesc& desc) {
  if (std::string why = validate(desc); !why.empty()) return make_error("clock study: " + why);
  const auto now = desc.now ? desc.now : std::function<int64_t()>(host_now_ns);
  const auto sleep_until =
      desc.sleep_until ? desc.sleep_until : std::function<void(int64_t)>(host_sleep_until);

  ClockStudyResult out;
  out.host_domain = desc.host_domain;
  out.ticks = ticks;

  // Every pair the source gives feeds the deviation distribution.
  std::vector<double> deviations_us;
  const Calibrator::Source recording = [&]() -> Result<CalibrationPair> {
    Result<CalibrationPair> r = source();
    ++out.source_calls;
    if (r) {
      deviations_us.push_back(static_cast<double>(r->max_deviation_ns) / 1e3);
    } else {
      ++out.source_errors;
    }
    return r;
  };
  auto best_pair = [&] {
    return sample_best_of(recording, desc.samples_per_refresh, desc.max_tries);
  };

  ClockModel model(ticks, desc.model);
  Result<BestOfN> start = best_pair();
  if (!start)
    return make_error("clock study: no calibration pair at the start: " + start.error().message);
  if (!model.add_pair(start->pair)) {
    return make_error("clock study: the start-up pair was refused (negative deviation " +
                      std::to_string(start->pair.max_deviation_ns) + " ns)");
  }
  out.refreshes = 1;
  out.start_fit = model.fit();
  const int64_t t0 = start->pair.host_ns;
  int64_t last = t0;

  // Absolute deadlines from the start; a late wake does not shift them.
  const int64_t start_ns = now();
  const auto span_ns = static_cast<int64_t>(std::llround(desc.seconds * 1e9));
  const int64_t steps = span_ns / desc.interval_ns;
  for (int64_t k = 1; k <= steps; ++k) {
    sleep_until(start_ns + k * desc.interval_ns);
    Result<BestOfN> b = best_pair();
    if (!b) {
      ++out.failed_refreshes;
    } else if (model.add_pair(b->pair)) {
      ++out.refreshes;
      last = b->pair.host_ns;
    }
    if (desc.progress) desc.progress(static_cast<double>(k) / static_cast<double>(steps));
  }
  out.sampled_seconds = static_cast<double>(last - t0) / 1e9;
  out.rejected_pairs = model.rejected_count();

  const std::shared_ptr<const ClockFit> fit = model.fit();
  out.fit = fit;
  out.drift_ppm = fit->drift_ppm();
  out.drift_uncertainty_ppm = fit->drift_error * 1e6;
  out.pairs_used = fit->pairs_used;
  {
    std::vector<double> r;
    for (int64_t v : model.residuals()) r.push_back(static_cast<double>(v) / 1e3);
    out.residual_us = summarize_in_place(r);
  }

  // Fresh pairs: never added to the model.
  std::vector<double> model_err, single_err;
  uint64_t fresh_missing = 0;
  const int64_t tick_ns = static_cast<int64_t>(std::ceil(ticks.period_ns()));
  for (uint32_t i = 0; i < desc.fresh_pairs; ++i) {
    Result<BestOfN> b = best_pair();
    if (!b) {
      ++fresh_missing;
      continue;
    }
    const CalibrationPair& p = b->pair;
    // Unwrap near the final fit's anchor (recent), then map the same
    // unwrapped tick through the start-up fit: a raw tick could alias
    // against an anchor many wrap periods old.
    const uint64_t u = fit->unwrap(p.device_ticks);
    const MappedTime m = fit->map_unwrapped(u);
    const MappedTime s = out.start_fit->map_unwrapped(u);
    const int64_t em = m.host_ns - p.host_ns;
    model_err.push_back(static_cast<double>(em) / 1e3);
    single_err.push_back(static_cast<double>(s.host_ns - p.host_ns) / 1e3);
    ++out.fresh_count;
    out.bound_now_ns = m.error_ns;
    if (std::llabs(em) <= m.error_ns + p.max_deviation_ns + tick_ns) ++out.fresh_within_bound;
  }
  out.deviation_us = summarize_in_place(deviations_us);
  out.model_error_us = summarize_in_place(model_err, fresh_missing);
  out.single_pair_error_us = summarize_in_place(single_err, fresh_missing);
  if (out.fresh_count == 0) {
    return make_error("clock study: the source gave no fresh pair at the end (" +
                      std::to_string(fresh_missing) + " refreshes failed)");
  }
  return out;
}

}  // namespace latlab
