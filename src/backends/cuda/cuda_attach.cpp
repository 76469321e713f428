// start_cuda_clock_sync: a ClockSync on a CudaCalibrationSampler it owns.
#include <memory>
#include <string>
#include <utility>

#include "latlab/cuda.hpp"

namespace latlab {

std::unique_ptr<ClockSync> start_cuda_clock_sync(int device, const CudaCalibrationDesc& calibration,
                                                 const CalibratorDesc& desc) {
  CudaCalibrationDesc c = calibration;
  c.device = device;
  auto sampler = CudaCalibrationSampler::create(c);
  if (!sampler) return ClockSync::unavailable(sampler.error().message);
  // The source owns the sampler: it lives as long as the calibrator.
  std::shared_ptr<CudaCalibrationSampler> owned(std::move(sampler.value()));
  return ClockSync::start([owned] { return owned->sample(); }, kCudaGlobaltimerTicks,
                          "bracketed %globaltimer handshake (estimated)", desc);
}

}  // namespace latlab
