// The Calibrator-driven TickMapper: start-up calibration on the caller's
// thread, then the Calibrator's periodic refresh and a pair at every block's
// end. Online, ticks are mapped by the newest fit (one snapshot for both ends
// of a frame); once stopped, by a ClockInterpolation over every pair of the
// run.
#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <utility>

#include "latlab/bench/tick_mapper.hpp"
#include "latlab/calibrator.hpp"
#include "latlab/clock_interpolation.hpp"

namespace latlab {
namespace {

// Reports list at most this many accepted pairs (the newest), so a long run's
// result stays small.
constexpr size_t kMaxReportedPairs = 4096;

// The final mapping needs every pair of the run, the first ones most: 32
// bytes a second at the default refresh, against 12 800 of frame records at
// 100 frames a second.
CalibratorDesc keeping_every_pair(CalibratorDesc desc) {
  desc.kept_pairs = std::numeric_limits<uint32_t>::max();
  return desc;
}

class CalibratedMapper final : public TickMapper {
 public:
  CalibratedMapper(LatencyDevice& device, const CalibratorDesc& desc)
      : device_(device),
        calibrator_([this] { return device_.sample_calibration(); }, device.info().ticks,
                    keeping_every_pair(desc)),
        refresh_interval_ns_(std::max<int64_t>(0, desc.refresh_interval_ns)) {}
  ~CalibratedMapper() override { calibrator_.stop(); }

  Result<void> start() override {
    const DeviceInfo& info = device_.info();
    if (!info.can_time) {
      return make_error("the device has no usable GPU timestamps, so there is nothing to map");
    }
    if (info.calibration_domain.empty()) {
      return make_error("the device offers no calibration against the host clock");
    }
    Result<void> first = calibrator_.calibrate_now();
    if (!first) return make_error("clock calibration failed: " + first.error().message);
    started_ = true;
    if (refresh_interval_ns_ > 0) calibrator_.start_periodic();
    return {};
  }

  void stop() override {
    calibrator_.stop();
    auto final_map = std::make_shared<const ClockInterpolation>(
        device_.info().ticks, calibrator_.accepted_pairs(), calibrator_.fit());
    std::lock_guard lock(final_mu_);
    final_ = std::move(final_map);
  }

  Result<void> take_pair() override {
    if (!started_) return make_error("the clock model did not start");
    Result<void> r = calibrator_.calibrate_now();
    ++(r ? block_end_pairs_ : failed_block_end_pairs_);
    return r;
  }

  std::optional<MappedSpan> map_pair(uint64_t begin_ticks, uint64_t end_ticks) const override {
    const std::shared_ptr<const ClockFit> fit = calibrator_.fit();  // one snapshot for both
    if (!fit) return std::nullopt;
    const MappedTime b = fit->map(begin_ticks);
    const MappedTime e = fit->map(end_ticks);
    return MappedSpan{b.host_ns, e.host_ns, std::max(b.error_ns, e.error_ns)};
  }

  std::optional<MappedSpan> map_final(uint64_t begin_ticks, uint64_t end_ticks,
                                      int64_t near_host_ns) const override {
    std::shared_ptr<const ClockInterpolation> f;
    {
      std::lock_guard lock(final_mu_);
      f = final_;
    }
    if (!f) return std::nullopt;
    const std::optional<InterpolatedTime> b = f->map(begin_ticks, near_host_ns);
    const std::optional<InterpolatedTime> e = f->map(end_ticks, near_host_ns);
    if (!b || !e) return std::nullopt;
    return MappedSpan{b->time.host_ns, e->time.host_ns,
                      std::max(b->time.error_ns, e->time.error_ns),
                      b->between_pairs && e->between_pairs};
  }

  ClockModelReport report() const override {
    ClockModelReport r;
    r.source = "calibrator";
    r.frame_mapping = "interpolated";
    const CalibratorStats st = calibrator_.stats();
    r.refreshes = st.refreshes;
    r.failed_refreshes = st.failed_refreshes;
    r.pairs_rejected = st.rejected_pairs;
    r.max_refresh_cost_ns = st.max_refresh_cost_ns;
    r.block_end_pairs = block_end_pairs_;
    r.failed_block_end_pairs = failed_block_end_pairs_;
    std::vector<CalibrationPair> pairs = calibrator_.accepted_pairs();
    r.pairs_accepted = st.accepted_pairs;
    if (pairs.size() > kMaxReportedPairs) {
      pairs.erase(pairs.begin(), pairs.end() - static_cast<std::ptrdiff_t>(kMaxReportedPairs));
    }
    r.pairs = std::move(pairs);
    r.refresh_interval_ns = refresh_interval_ns_;
    r.refresh_windows = calibrator_.refresh_windows();
    {
      std::lock_guard lock(final_mu_);
      if (final_) r.interpolation_misfit_ns = final_->misfit_ns();
    }
    const std::shared_ptr<const ClockFit> fit = calibrator_.fit();
    if (!fit) {
      r.available = false;
      r.reason = "no calibration pair was accepted";
      return r;
    }
    r.available = true;
    r.drift_ppm = fit->drift_ppm();
    r.drift_error_ppm = fit->drift_error * 1e6;
    r.error_bound_ns = fit->base_error_ns;
    r.pairs_used = fit->pairs_used;
    r.estimated = fit->estimated;
    return r;
  }

 private:
  LatencyDevice& device_;
  mutable Calibrator calibrator_;
  int64_t refresh_interval_ns_;               // 0: no periodic refresh
  bool started_ = false;                      // owning thread only
  std::atomic<uint64_t> block_end_pairs_{0};  // written by take_pair, read by report
  std::atomic<uint64_t> failed_block_end_pairs_{0};
  mutable std::mutex final_mu_;
  std::shared_ptr<const ClockInterpolation> final_;  // set by stop()
};

}  // namespace

std::unique_ptr<TickMapper> make_calibrated_mapper(LatencyDevice& device,
                                                   const CalibratorDesc& desc) {
  return std::make_unique<CalibratedMapper>(device, desc);
}

}  // namespace latlab
