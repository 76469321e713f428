// CUDA backend: the LatencyDevice on one CUDA stream.
#include <cuda_runtime.h>

#include <algorithm>

#include "backends/cuda/cuda_internal.hpp"
#include "backends/cuda/cuda_kernels.hpp"
#include "backends/cuda/cuda_runtime_util.hpp"
#include "latlab/bench/cuda_rig.hpp"
#include "latlab/cuda.hpp"
#include "latlab/host_clock.hpp"

namespace latlab {
namespace cd = cuda_detail;

namespace {

// DeviceInfo of CUDA device `device` (any thread; creates no context).
Result<DeviceInfo> describe(int device);

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
  // Binds the device's primary context to this thread once (the runtime
  // does it lazily at a thread's first call on the device) through a query
  // of the idle stream; the thread's current device is restored after.
  Result<void> prepare_thread() override;
  Result<std::unique_ptr<ReferencePath>> open_reference() override;
  // Poll target: the frame's event; the poller calls cudaEventQuery.
  std::optional<PollTarget> poll_target(uint64_t frame_id) override;
  Result<std::unique_ptr<CompletionPoller>> open_poller() override;

 private:
  CudaLatencyDevice() = default;
  struct FrameSlot {
    bool busy = false;
    uint64_t frame_id = 0;
    cudaEvent_t done = nullptr;
  };
  Result<void> ensure_buffer(uint64_t elements);

  DeviceInfo info_;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  // Frame slot i's GPU begin/end: stamp slots 2i and 2i+1, written by the
  // workload's own first and last blocks (fused stamps, docs/cuda-timing.md:
  // no stamp launches, 1 us of GPU time per edge instead of 2.3). Written only
  // into stream_, which the destructor synchronises before the slots go (they
  // record no events).
  std::shared_ptr<CudaTimestampSlots> stamps_;
  std::unique_ptr<CudaFusedStamps> fused_;
  std::vector<FrameSlot> slots_;
  float* buffer_ = nullptr;  // workload target, stream-ordered allocation
  uint64_t buffer_elements_ = 0;
  std::unique_ptr<CudaCalibrationSampler> sampler_;
};

Result<std::unique_ptr<LatencyDevice>> CudaLatencyDevice::create(
    const CudaLatencyDeviceDesc& desc) {
  if (desc.frames_in_flight < 1) return make_error("CUDA: frames_in_flight must be >= 1");
  auto index = find_cuda_device(desc.device);
  if (!index) return index.error();

  std::unique_ptr<CudaLatencyDevice> dev(new CudaLatencyDevice());
  dev->device_ = *index;
  cd::DeviceScope scope(dev->device_);
  if (auto ok = cd::ready_device(scope, dev->device_); !ok) return ok.error();

  auto stream = cd::create_stream(/*highest_priority=*/false);
  if (!stream) return stream.error();
  dev->stream_ = *stream;
  auto stamps = CudaTimestampSlots::create({.count = 2 * desc.frames_in_flight,
                                            .device = dev->device_,
                                            .cross_check_events = false,
                                            .record_events = false});
  if (!stamps) return stamps.error();
  dev->stamps_ = std::move(stamps.value());
  auto fused = CudaFusedStamps::create(dev->stamps_);
  if (!fused) return fused.error();
  dev->fused_ = std::move(fused.value());
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
  auto info = describe(dev->device_);
  if (!info) return info.error();
  dev->info_ = std::move(info.value());
  return std::unique_ptr<LatencyDevice>(std::move(dev));
}

Result<DeviceInfo> describe(int device) {
  cudaDeviceProp p{};
  const cudaError_t e = cudaGetDeviceProperties(&p, device);
  if (e != cudaSuccess)
    return cd::cuda_fail("cudaGetDeviceProperties(" + std::to_string(device) + ")", e);
  int driver = 0;
  int runtime = 0;
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);
  DeviceInfo info;
  info.backend = "cuda";
  info.name = p.name;
  info.driver = "NVIDIA driver (CUDA " + format_cuda_version(driver) + "), runtime " +
                format_cuda_version(runtime);
  info.ticks = kCudaGlobaltimerTicks;
  info.can_time = true;
  info.calibration_domain = kCudaCalibrationDomain;
  info.calibration_estimated = true;
  info.missing.push_back(
      {"calibrated_timestamps",
       "CUDA has no calibrated timestamp query: pairs are bracketed %globaltimer reads"});
  info.missing.push_back({"disjoint_detection", std::string(kCudaNoDisjointReason)});
  info.missing.push_back({"fragment_workload", "the CUDA backend runs compute passes only"});
  info.missing.push_back({"present", "CUDA has no presentation path"});
  return info;
}

CudaLatencyDevice::~CudaLatencyDevice() {
  cd::DeviceScope scope(device_);
  if (stream_) {
    if (buffer_) (void)cudaFreeAsync(buffer_, stream_);
    // Nothing may write the stamps after they are freed (stamps_, a member,
    // goes after this body).
    (void)cudaStreamSynchronize(stream_);
  }
  for (auto& s : slots_) {
    if (s.done) (void)cudaEventDestroy(s.done);
  }
  if (stream_) (void)cudaStreamDestroy(stream_);
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

  // Host stores only: the pair gets a new generation, so a stamp still queued
  // from a part-way failure of this slot's previous use reads kLate, never
  // this frame's.
  const auto pair = static_cast<uint32_t>(2 * index);
  stamps_->reset(pair, 2, /*previous_use_done=*/true);
  // Per frame: work.passes kernel launches and one event record:
  //  - the workload, one kernel per pass; the first pass's earliest block
  //    start is GPU begin (slot 2i), the last pass's last block, after every
  //    element is written, is GPU end (slot 2i+1);
  //  - cudaEventRecord(done): the blocking-sync event wait_frame sleeps on.
  if (auto ok = fused_->launch_workload(stream_, work, buffer_, pair); !ok) return ok;
  if (const cudaError_t r = cudaEventRecord(free_slot->done, stream_); r != cudaSuccess)
    return cd::cuda_fail("cudaEventRecord(frame)", r);
  free_slot->busy = true;
  free_slot->frame_id = frame_id;
  return {};
}

Result<void> CudaLatencyDevice::prepare_thread() {
  cd::DeviceScope scope(device_);
  if (scope.status() != cudaSuccess) return cd::cuda_fail("cudaSetDevice", scope.status());
  const cudaError_t e = cudaStreamQuery(stream_);
  if (e != cudaSuccess && e != cudaErrorNotReady) return cd::cuda_fail("cudaStreamQuery", e);
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
  // The frame's work completed, so the pair is final: a stamp missing or of
  // another use now will never be right (invalid). Never a substitute value.
  const auto pair = static_cast<uint32_t>(2 * (it - slots_.begin()));
  SlotReading r[2];
  stamps_->read(pair, r);
  t.gpu_status = completed_pair_status(r[0], r[1], info_.ticks);
  if (t.gpu_status == QueryStatus::ok) {
    t.gpu_begin_ticks = r[0].ticks;
    t.gpu_end_ticks = r[1].ticks;
  }
  return t;
}

// The reference path on CUDA: its own stream, its own two stamp slots and
// its own blocking-sync event; per frame two stamp launches (begin, end) and
// one event record, nothing between them.
class CudaReferencePath final : public ReferencePath {
 public:
  static Result<std::unique_ptr<ReferencePath>> create(int device, TickFormat ticks) {
    std::unique_ptr<CudaReferencePath> ref(new CudaReferencePath());
    ref->device_ = device;
    ref->ticks_ = ticks;
    cd::DeviceScope scope(device);
    if (scope.status() != cudaSuccess) return cd::cuda_fail("cudaSetDevice", scope.status());
    auto stream = cd::create_stream(/*highest_priority=*/false);
    if (!stream) return stream.error();
    ref->stream_ = *stream;
    auto stamps = CudaTimestampSlots::create(
        {.count = 2, .device = device, .cross_check_events = false, .record_events = false});
    if (!stamps) return stamps.error();
    ref->stamps_ = std::move(stamps.value());
    const cudaError_t e =
        cudaEventCreateWithFlags(&ref->done_, cudaEventBlockingSync | cudaEventDisableTiming);
    if (e != cudaSuccess) return cd::cuda_fail("cudaEventCreateWithFlags", e);
    return std::unique_ptr<ReferencePath>(std::move(ref));
  }
  ~CudaReferencePath() override {
    cd::DeviceScope scope(device_);
    if (stream_) (void)cudaStreamSynchronize(stream_);
    if (done_) (void)cudaEventDestroy(done_);
    if (stream_) (void)cudaStreamDestroy(stream_);
  }
  const char* what() const override {
    return "cuda: its own stream, two %globaltimer stamp launches and one blocking-sync event";
  }
  Result<void> submit(uint64_t frame_id) override {
    if (busy_) return make_error("CUDA reference: a frame is still in flight; wait first");
    cd::DeviceScope scope(device_);
    if (scope.status() != cudaSuccess) return cd::cuda_fail("cudaSetDevice", scope.status());
    stamps_->reset(0, 2, /*previous_use_done=*/true);
    if (auto ok = stamps_->write_timestamp(stream_, 0); !ok) return ok;
    if (auto ok = stamps_->write_timestamp(stream_, 1); !ok) return ok;
    if (const cudaError_t r = cudaEventRecord(done_, stream_); r != cudaSuccess)
      return cd::cuda_fail("cudaEventRecord(reference)", r);
    busy_ = true;
    frame_id_ = frame_id;
    return {};
  }
  std::optional<PollTarget> poll_target(uint64_t frame_id) override {
    if (!busy_ || frame_id_ != frame_id) return std::nullopt;
    return PollTarget{reinterpret_cast<uint64_t>(done_), 0};
  }
  Result<GpuFrameTiming> wait(uint64_t frame_id) override {
    if (!busy_ || frame_id_ != frame_id)
      return make_error("CUDA reference: frame " + std::to_string(frame_id) + " is not in flight");
    cd::DeviceScope scope(device_);
    if (scope.status() != cudaSuccess) return cd::cuda_fail("cudaSetDevice", scope.status());
    const cudaError_t e = cudaEventSynchronize(done_);
    const int64_t wake = host_now_ns();
    busy_ = false;
    if (e != cudaSuccess) return cd::cuda_fail("cudaEventSynchronize(reference)", e);
    GpuFrameTiming t;
    t.fence_status = QueryStatus::ok;
    t.fence_wake_ns = wake;
    SlotReading r[2];
    stamps_->read(0, r);
    t.gpu_status = completed_pair_status(r[0], r[1], ticks_);
    if (t.gpu_status == QueryStatus::ok) {
      t.gpu_begin_ticks = r[0].ticks;
      t.gpu_end_ticks = r[1].ticks;
    }
    return t;
  }

 private:
  CudaReferencePath() = default;
  int device_ = 0;
  TickFormat ticks_;
  cudaStream_t stream_ = nullptr;
  std::shared_ptr<CudaTimestampSlots> stamps_;  // written only into stream_
  cudaEvent_t done_ = nullptr;
  bool busy_ = false;
  uint64_t frame_id_ = 0;
};

// cudaEventQuery on the frame's event (thread-safe: the runtime serialises
// it against the consumer's cudaEventSynchronize on the same event). The
// device is made current once, on the poller's thread.
class CudaPoller final : public CompletionPoller {
 public:
  PollStatus poll(const PollTarget& target) override {
    const cudaError_t e = cudaEventQuery(reinterpret_cast<cudaEvent_t>(target.handle));
    if (e == cudaSuccess) return PollStatus::complete;
    return e == cudaErrorNotReady ? PollStatus::pending : PollStatus::failed;
  }
};

std::optional<PollTarget> CudaLatencyDevice::poll_target(uint64_t frame_id) {
  for (const FrameSlot& s : slots_) {
    if (s.busy && s.frame_id == frame_id) return PollTarget{reinterpret_cast<uint64_t>(s.done), 0};
  }
  return std::nullopt;
}

Result<std::unique_ptr<CompletionPoller>> CudaLatencyDevice::open_poller() {
  if (const cudaError_t e = cudaSetDevice(device_); e != cudaSuccess)
    return cd::cuda_fail("cudaSetDevice (poller thread)", e);
  return std::unique_ptr<CompletionPoller>(new CudaPoller());
}

Result<std::unique_ptr<ReferencePath>> CudaLatencyDevice::open_reference() {
  return CudaReferencePath::create(device_, info_.ticks);
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
