#include "latlab/bench/clock_study.hpp"

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

// One clock study: start a model from one pair, refresh it on absolute
// deadlines for desc.seconds, then compare it and the start-up pair on fresh
// pairs that never enter the model.
class ClockStudy {
 public:
  ClockStudy(const Calibrator::Source& source, TickFormat ticks, const ClockStudyDesc& desc)
      : source_(source),
        d_(desc),
        now_(desc.now ? desc.now : std::function<int64_t()>(host_now_ns)),
        sleep_until_(desc.sleep_until ? desc.sleep_until
                                      : std::function<void(int64_t)>(host_sleep_until)),
        model_(ticks, desc.model) {
    out_.host_domain = desc.host_domain;
    out_.ticks = ticks;
  }
  ClockStudy(const ClockStudy&) = delete;
  ClockStudy& operator=(const ClockStudy&) = delete;

  Result<ClockStudyResult> run() {
    if (Result<void> s = start(); !s) return s.error();
    refresh_over_time();
    record_fit();
    const uint64_t fresh_missing = compare_on_fresh_pairs();
    out_.deviation_us = summarize_in_place(deviations_us_);
    if (out_.fresh_count == 0) {
      return make_error("clock study: the source gave no fresh pair at the end (" +
                        std::to_string(fresh_missing) + " refreshes failed)");
    }
    return out_;
  }

 private:
  Result<void> start();
  void refresh_over_time();
  void record_fit();
  uint64_t compare_on_fresh_pairs();

  // The best of samples_per_refresh pairs; every pair the source gives feeds
  // the deviation distribution.
  Result<BestOfN> best_pair() {
    return sample_best_of(recording_, d_.samples_per_refresh, d_.max_tries);
  }

  const Calibrator::Source& source_;
  const ClockStudyDesc& d_;
  const std::function<int64_t()> now_;
  const std::function<void(int64_t)> sleep_until_;
  ClockModel model_;
  ClockStudyResult out_;
  std::vector<double> deviations_us_;
  int64_t t0_ = 0, last_ = 0;  // host ns of the start-up pair and of the last accepted one
  const Calibrator::Source recording_ = [this]() -> Result<CalibrationPair> {
    Result<CalibrationPair> r = source_();
    ++out_.source_calls;
    if (r) {
      deviations_us_.push_back(static_cast<double>(r->max_deviation_ns) / 1e3);
    } else {
      ++out_.source_errors;
    }
    return r;
  };
};

Result<void> ClockStudy::start() {
  Result<BestOfN> start = best_pair();
  if (!start)
    return make_error("clock study: no calibration pair at the start: " + start.error().message);
  if (!model_.add_pair(start->pair)) {
    return make_error("clock study: the start-up pair was refused (negative deviation " +
                      std::to_string(start->pair.max_deviation_ns) + " ns)");
  }
  out_.refreshes = 1;
  out_.start_fit = model_.fit();
  t0_ = last_ = start->pair.host_ns;
  return {};
}

// Absolute deadlines from the start; a late wake does not shift them.
void ClockStudy::refresh_over_time() {
  const int64_t start_ns = now_();
  const auto span_ns = static_cast<int64_t>(std::llround(d_.seconds * 1e9));
  const int64_t steps = span_ns / d_.interval_ns;
  for (int64_t k = 1; k <= steps; ++k) {
    sleep_until_(start_ns + k * d_.interval_ns);
    Result<BestOfN> b = best_pair();
    if (!b) {
      ++out_.failed_refreshes;
    } else if (model_.add_pair(b->pair)) {
      ++out_.refreshes;
      last_ = b->pair.host_ns;
    }
    if (d_.progress) d_.progress(static_cast<double>(k) / static_cast<double>(steps));
  }
  out_.sampled_seconds = static_cast<double>(last_ - t0_) / 1e9;
  out_.rejected_pairs = model_.rejected_count();
}

void ClockStudy::record_fit() {
  out_.fit = model_.fit();
  out_.drift_ppm = out_.fit->drift_ppm();
  out_.drift_uncertainty_ppm = out_.fit->drift_error * 1e6;
  out_.pairs_used = out_.fit->pairs_used;
  std::vector<double> r;
  for (int64_t v : model_.residuals()) r.push_back(static_cast<double>(v) / 1e3);
  out_.residual_us = summarize_in_place(r);
}

// Fresh pairs: never added to the model. Returns how many could not be sampled.
uint64_t ClockStudy::compare_on_fresh_pairs() {
  const ClockFit& fit = *out_.fit;
  std::vector<double> model_err, single_err;
  uint64_t fresh_missing = 0;
  const int64_t tick_ns = static_cast<int64_t>(std::ceil(out_.ticks.period_ns()));
  for (uint32_t i = 0; i < d_.fresh_pairs; ++i) {
    Result<BestOfN> b = best_pair();
    if (!b) {
      ++fresh_missing;
      continue;
    }
    const CalibrationPair& p = b->pair;
    // Unwrap near the final fit's anchor (recent), then map the same
    // unwrapped tick through the start-up fit: a raw tick could alias
    // against an anchor many wrap periods old.
    const uint64_t u = fit.unwrap(p.device_ticks);
    const MappedTime m = fit.map_unwrapped(u);
    const MappedTime s = out_.start_fit->map_unwrapped(u);
    const int64_t em = m.host_ns - p.host_ns;
    model_err.push_back(static_cast<double>(em) / 1e3);
    single_err.push_back(static_cast<double>(s.host_ns - p.host_ns) / 1e3);
    ++out_.fresh_count;
    out_.bound_now_ns = m.error_ns;
    if (std::llabs(em) <= m.error_ns + p.max_deviation_ns + tick_ns) ++out_.fresh_within_bound;
  }
  out_.model_error_us = summarize_in_place(model_err, fresh_missing);
  out_.single_pair_error_us = summarize_in_place(single_err, fresh_missing);
  return fresh_missing;
}

}  // namespace

Result<ClockStudyResult> run_clock_study(const Calibrator::Source& source, TickFormat ticks,
                                         const ClockStudyDesc& desc) {
  if (std::string why = validate(desc); !why.empty()) return make_error("clock study: " + why);
  ClockStudy study(source, ticks, desc);
  return study.run();
}

}  // namespace latlab
