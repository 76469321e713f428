// The Calibrator-driven TickMapper: start-up calibration on the caller's
// thread, then the Calibrator's periodic refresh; every frame's GPU ticks are
// mapped by the newest fit (one snapshot for both ends of a frame).
#include <algorithm>
#include <utility>

#include "latlab/calibrator.hpp"
#include "latlab/tick_mapper.hpp"

namespace latlab {
namespace {

// Reports list at most this many accepted pairs (the newest), so a long run's
// result stays small.
constexpr size_t kMaxReportedPairs = 4096;

class CalibratedMapper final : public TickMapper {
 public:
  CalibratedMapper(LatencyDevice& device, const CalibratorDesc& desc)
      : device_(device),
        calibrator_([this] { return device_.sample_calibration(); }, device.info().ticks, desc),
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
    if (refresh_interval_ns_ > 0) calibrator_.start_periodic();
    return {};
  }

  void stop() override { calibrator_.stop(); }

  std::optional<MappedSpan> map_pair(uint64_t begin_ticks, uint64_t end_ticks) const override {
    const std::shared_ptr<const ClockFit> fit = calibrator_.fit();  // one snapshot for both
    if (!fit) return std::nullopt;
    const MappedTime b = fit->map(begin_ticks);
    const MappedTime e = fit->map(end_ticks);
    return MappedSpan{b.host_ns, e.host_ns, std::max(b.error_ns, e.error_ns)};
  }

  ClockModelReport report() const override {
    ClockModelReport r;
    r.source = "calibrator";
    const CalibratorStats st = calibrator_.stats();
    r.refreshes = st.refreshes;
    r.failed_refreshes = st.failed_refreshes;
    r.pairs_rejected = st.rejected_pairs;
    r.max_refresh_cost_ns = st.max_refresh_cost_ns;
    std::vector<CalibrationPair> pairs = calibrator_.accepted_pairs();
    r.pairs_accepted = st.accepted_pairs;
    if (pairs.size() > kMaxReportedPairs) {
      pairs.erase(pairs.begin(), pairs.end() - static_cast<std::ptrdiff_t>(kMaxReportedPairs));
    }
    r.pairs = std::move(pairs);
    r.refresh_interval_ns = refresh_interval_ns_;
    r.refresh_windows = calibrator_.refresh_windows();
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
  int64_t refresh_interval_ns_;  // 0: no periodic refresh
};

}  // namespace

std::unique_ptr<TickMapper> make_calibrated_mapper(LatencyDevice& device,
                                                   const CalibratorDesc& desc) {
  return std::make_unique<CalibratedMapper>(device, desc);
}

}  // namespace latlab
