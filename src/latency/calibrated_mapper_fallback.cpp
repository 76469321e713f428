// Stand-in for src/latency/calibrated_mapper.cpp.pending while the Calibrator
// (src/core/calibrator.cpp) is not on main: the mapper reports calibration as
// unavailable, so every stage that needs GPU ticks on the host clock counts
// as missing, with this reason. Delete this file when the pending one is
// activated.
#include "latlab/tick_mapper.hpp"

namespace latlab {
namespace {

constexpr const char* kReason =
    "clock calibration is not built into this binary (the Calibrator has not landed)";

class UnavailableMapper final : public TickMapper {
 public:
  Result<void> start() override { return make_error(kReason); }
  void stop() override {}
  std::optional<MappedSpan> map_pair(uint64_t, uint64_t) const override { return std::nullopt; }
  ClockModelReport report() const override {
    ClockModelReport r;
    r.source = "none";
    r.reason = kReason;
    return r;
  }
};

}  // namespace

std::unique_ptr<TickMapper> make_calibrated_mapper(LatencyDevice&, const CalibratorDesc&) {
  return std::make_unique<UnavailableMapper>();
}

}  // namespace latlab
