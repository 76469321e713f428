// ClockSync: the calibrator and its refresh, started for a program.
#include "latlab/clock_sync.hpp"

#include <mutex>
#include <utility>

namespace latlab {

// What mappers share with the ClockSync: its calibrator while it lives,
// then the last fit.
struct ClockSync::Shared {
  mutable std::mutex mu;
  const Calibrator* calibrator = nullptr;
  std::shared_ptr<const ClockFit> last;

  std::shared_ptr<const ClockFit> fit() const {
    std::lock_guard lock(mu);
    return calibrator != nullptr ? calibrator->fit() : last;
  }
};

std::unique_ptr<ClockSync> ClockSync::start(Calibrator::Source source, TickFormat ticks,
                                            std::string method, CalibratorDesc desc) {
  std::unique_ptr<ClockSync> s(new ClockSync());
  s->shared_ = std::make_shared<Shared>();
  s->method_ = std::move(method);
  s->calibrator_ = std::make_unique<Calibrator>(std::move(source), ticks, desc);
  if (const Result<void> c = s->calibrator_->calibrate_now(); !c) {
    s->reason_ = c.error().message;
    return s;
  }
  s->shared_->calibrator = s->calibrator_.get();
  s->calibrator_->start_periodic();
  return s;
}

std::unique_ptr<ClockSync> ClockSync::unavailable(std::string reason) {
  std::unique_ptr<ClockSync> s(new ClockSync());
  s->shared_ = std::make_shared<Shared>();
  s->reason_ = std::move(reason);
  return s;
}

ClockSync::~ClockSync() { stop(); }

void ClockSync::stop() {
  if (!calibrator_) return;
  calibrator_->stop();
  std::lock_guard lock(shared_->mu);
  if (shared_->calibrator != nullptr) shared_->last = shared_->calibrator->fit();
  shared_->calibrator = nullptr;
}

bool ClockSync::available() const { return shared_->fit() != nullptr; }

std::shared_ptr<const ClockFit> ClockSync::fit() const { return shared_->fit(); }

CalibratorStats ClockSync::stats() const {
  return calibrator_ ? calibrator_->stats() : CalibratorStats{};
}

std::function<std::optional<MappedTime>(uint64_t)> ClockSync::mapper() const {
  return [shared = shared_](uint64_t ticks) -> std::optional<MappedTime> {
    const auto fit = shared->fit();
    if (!fit) return std::nullopt;
    return fit->map(ticks);
  };
}

}  // namespace latlab
