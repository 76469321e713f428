// CUDA backend: the LatencyDevice on one CUDA stream.
#include <cuda_runtime.h>

#include <algorithm>

#include "backends/cuda/cuda_internal.hpp"
#include "backends/cuda/cuda_kernels.hpp"
#include "backends/cuda/cuda_runtime_util.hpp"
#include "latlab/cuda.hpp"
#include "latlab/host_clock.hpp"

namespace latlab {
namespace cd = cuda_detail;

namespace {

class CudaLatencyDevice final : public LatencyDevice {
 public:
  static Result<std::unique_ptr<LatencyDevice>> create(const CudaLatencyDeviceDesc& desc);
  ~CudaLatencyDevice() override;
  CudaLatencyDevice(const CudaLatencyDevice&) = delete;
  CudaLatencyDevice& operator=(const CudaLatencyDevice&) = delete;

  const DeviceInfo& info() const override { return info_; }
  Result<void> submit_frame(uint64_t frame_id, const FrameWorkload& work) override;
  Result<GpuFrameTiming> wait_frame(uint64_t frame_id) override;
  Result<CalibrationPair> sample_calibration() override { return sampler_->sample(); }

 private:
  CudaLatencyDevice() = default;
  struct FrameSlot {
    bool busy = false;
    uint64_t frame_id = 0;
    uint64_t generation = 0;
    cudaEvent_t done = nullptr;
  };
  cd::StampSlot* host_stamp(size_t slot, int end) {
    return static_cast<cd::StampSlot*>(stamps_.host) + 2 * slot + end;
  }
  cd::StampSlot* dev_stamp(size_t slot, int end) {
    return static_cast<cd::StampSlot*>(stamps_.device) + 2 * slot + end;
  }
  Result<void> ensure_buffer(uint64_t elements);

  DeviceInfo info_;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  cd::MappedBlock stamps_;  // 2 StampSlots (begin, end) per frame slot
  std::vector<FrameSlot> slots_;
  uint64_t next_generation_ = 1;
  float* buffer_ = nullptr;  // workload target, stream-ordered allocation
  uint64_t buffer_elements_ = 0;
  std::unique_ptr<CudaCalibrationSampler> sampler_;
};

Result<std::unique_ptr<LatencyDevice>> CudaLatencyDevice::create(
    const CudaLatencyDeviceDesc& desc) {
  if (desc.frames_in_flight < 1) return make_error("CUDA: frames_in_flight must be >= 1");
  auto count = cd::device_count();
  if (!count) return count.error();
  std::vector<std::string> names;
  for (int i = 0; i < *count; ++i) {
    cudaDeviceProp p{};
    const cudaError_t e = cudaGetDeviceProperties(&p, i);
    if (e != cudaSuccess)
      return cd::cuda_fail("cudaGetDeviceProperties(" + std::to_string(i) + ")", e);
    names.emplace_back(p.name);
  }
  auto index = cd::select_device_index(desc.device, names);
  if (!index) return index.error();

  std::unique_ptr<CudaLatencyDevice> dev(new CudaLatencyDevice());
  dev->device_ = *index;
  cd::DeviceScope scope(dev->device_);
  if (scope.status() != cudaSuccess) return cd::cuda_fail("cudaSetDevice", scope.status());
  if (auto ok = cd::require_mapped_memory(dev->device_); !ok) return ok.error();
  if (auto ok = cd::require_kernel_arch(dev->device_); !ok) return ok.error();
  if (auto ok = cd::preload(dev->device_); !ok) return ok.error();

  auto stream = cd::create_stream(/*highest_priority=*/false);
  if (!stream) return stream.error();
  dev->stream_ = *stream;
  auto stamps = cd::alloc_mapped(sizeof(cd::StampSlot) * 2 * desc.frames_in_flight);
  if (!stamps) return stamps.error();
  dev->stamps_ = *stamps;
  dev->slots_.resize(desc.frames_in_flight);
  for (auto& s : dev->slots_) {
    // Blocking sync: wait_frame sleeps in the driver instead of spinning.
    const cudaError_t e =
        cudaEventCreateWithFlags(&s.done, cudaEventBlockingSync | cudaEventDisableTiming);
    if (e != cudaSuccess) return cd::cuda_fail("cudaEventCreateWithFlags", e);
  }
  CudaCalibrationDesc cal = desc.calibration;
  cal.device = dev->device_;
  auto sampler = CudaCalibrationSampler::create(cal);
  if (!sampler) return sampler.error();
  dev->sampler_ = std::move(*sampler);

  int driver = 0;
  int runtime = 0;
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);
  DeviceInfo& info = dev->info_;
  info.backend = "cuda";
  info.name = names[static_cast<size_t>(dev->device_)];
  info.driver = "NVIDIA driver (CUDA " + format_cuda_version(driver) + "), runtime " +
                format_cuda_version(runtime);
  info.ticks = kCudaGlobaltimerTicks;
  info.can_time = true;
  info.calibration_domain = kCudaCalibrationDomain;
  info.calibration_estimated = true;
  info.missing.push_back(
      {"calibrated_timestamps",
       "CUDA has no calibrated timestamp query: pairs are bracketed %globaltimer reads"});
  info.missing.push_back({"fragment_workload", "the CUDA backend runs compute passes only"});
  info.missing.push_back({"present", "CUDA has no presentation path"});
  return std::unique_ptr<LatencyDevice>(std::move(dev));
}

CudaLatencyDevice::~CudaLatencyDevice() {
  cd::DeviceScope scope(device_);
  if (stream_) {
    if (buffer_) (void)cudaFreeAsync(buffer_, stream_);
    (void)cudaStreamSynchronize(stream_);  // nothing may write the stamps after they are freed
  }
  for (auto& s : slots_) {
    if (s.done) (void)cudaEventDestroy(s.done);
  }
  if (stream_) (void)cudaStreamDestroy(stream_);
  if (stamps_.host) (void)cudaFreeHost(stamps_.host);
}

Result<void> CudaLatencyDevice::ensure_buffer(uint64_t elements) {
  if (elements <= buffer_elements_) return {};
  if (buffer_) {
    const cudaError_t e = cudaFreeAsync(buffer_, stream_);
    buffer_ = nullptr;
    buffer_elements_ = 0;
    if (e != cudaSuccess) return cd::cuda_fail("cudaFreeAsync", e);
  }
  void* p = nullptr;
  const size_t bytes = elements * sizeof(float);
  cudaError_t e = cudaMallocAsync(&p, bytes, stream_);  // stream-ordered: no device-wide sync
  if (e != cudaSuccess)
    return cd::cuda_fail("cudaMallocAsync(" + std::to_string(bytes) + " bytes)", e);
  buffer_ = static_cast<float*>(p);
  buffer_elements_ = elements;
  e = cudaMemsetAsync(p, 0, bytes, stream_);
  if (e != cudaSuccess) return cd::cuda_fail("cudaMemsetAsync", e);
  return {};
}

Result<void> CudaLatencyDevice::submit_frame(uint64_t frame_id, const FrameWorkload& work) {
  if (auto ok = cd::validate_workload(work); !ok) return ok.error();
  FrameSlot* free_slot = nullptr;
  size_t index = 0;
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].busy && slots_[i].frame_id == frame_id) {
      return make_error("CUDA: frame " + std::to_string(frame_id) + " is already in flight");
    }
    if (!slots_[i].busy && !free_slot) {
      free_slot = &slots_[i];
      index = i;
    }
  }
  if (!free_slot) {
    return make_error("CUDA: " + std::to_string(slots_.size()) +
                      " frames are already in flight (frames_in_flight); wait_frame one first");
  }
  cd::DeviceScope scope(device_);
  if (scope.status() != cudaSuccess) return cd::cuda_fail("cudaSetDevice", scope.status());
  if (auto ok = ensure_buffer(uint64_t{work.width} * work.height); !ok) return ok;

  const uint64_t generation = next_generation_++;
  for (int end = 0; end < 2; ++end) {
    cd::store_relaxed(host_stamp(index, end)->tag, 0);
    cd::store_relaxed(host_stamp(index, end)->ticks, 0);
  }
  // A failure part-way leaves stamps of this generation queued; the slot stays
  // free and its next use has a new generation, so they can never be taken
  // for that frame's.
  cudaError_t e = cd::launch_stamp(stream_, dev_stamp(index, 0), generation);
  if (e != cudaSuccess) return cd::cuda_fail("launching the begin timestamp", e);
  e = cd::launch_workload(stream_, buffer_, work.width * work.height, work.passes, work.complexity);
  if (e != cudaSuccess) return cd::cuda_fail("launching the workload", e);
  e = cd::launch_stamp(stream_, dev_stamp(index, 1), generation);
  if (e != cudaSuccess) return cd::cuda_fail("launching the end timestamp", e);
  e = cudaEventRecord(free_slot->done, stream_);
  if (e != cudaSuccess) return cd::cuda_fail("cudaEventRecord(frame)", e);
  free_slot->busy = true;
  free_slot->frame_id = frame_id;
  free_slot->generation = generation;
  return {};
}

Result<GpuFrameTiming> CudaLatencyDevice::wait_frame(uint64_t frame_id) {
  auto it = std::find_if(slots_.begin(), slots_.end(), [frame_id](const FrameSlot& s) {
    return s.busy && s.frame_id == frame_id;
  });
  if (it == slots_.end()) {
    return make_error("CUDA: frame " + std::to_string(frame_id) +
                      " is not in flight (never submitted or already waited)");
  }
  cd::DeviceScope scope(device_);
  if (scope.status() != cudaSuccess) return cd::cuda_fail("cudaSetDevice", scope.status());
  const cudaError_t e = cudaEventSynchronize(it->done);  // sleeps: blocking-sync event
  const int64_t wake = host_now_ns();
  it->busy = false;
  if (e != cudaSuccess)
    return cd::cuda_fail("cudaEventSynchronize(frame " + std::to_string(frame_id) + ")", e);

  GpuFrameTiming t;
  t.fence_status = QueryStatus::ok;
  t.fence_wake_ns = wake;
  const size_t index = static_cast<size_t>(it - slots_.begin());
  cd::DecodedStamp q[2];
  for (int end = 0; end < 2; ++end) {
    cd::StampSlot* s = host_stamp(index, end);
    const uint64_t tag = cd::load_acquire(s->tag);
    q[end] = cd::decode_stamp(tag, cd::load_relaxed(s->ticks), it->generation);
  }
  // The frame's work completed: a stamp missing or of another generation now
  // will never be right. Never a substitute value.
  const bool ok = q[0].available && q[1].available && q[0].generation == it->generation &&
                  q[1].generation == it->generation && q[1].ticks >= q[0].ticks;
  t.gpu_status = ok ? QueryStatus::ok : QueryStatus::invalid;
  if (ok) {
    t.gpu_begin_ticks = q[0].ticks;
    t.gpu_end_ticks = q[1].ticks;
  }
  return t;
}

}  // namespace

Result<std::unique_ptr<LatencyDevice>> create_cuda_latency_device(
    const CudaLatencyDeviceDesc& desc) {
  return CudaLatencyDevice::create(desc);
}

Result<std::unique_ptr<LatencyDevice>> create_cuda_latency_device(
    const std::string& device_selector) {
  CudaLatencyDeviceDesc desc;
  desc.device = device_selector;
  return CudaLatencyDevice::create(desc);
}

}  // namespace latlab
