// The profile rig on CUDA (latlab/core/profile_rig.hpp): the reference frame
// on one CUDA stream, without the fragment passes (no `post` zones). Every
// zone edge is a stamp kernel in the stream (profiler_cuda.hpp says what that
// costs). Frames in flight: a blocking-sync event after each frame; waiting
// for a slot waits for the event of the frame that used it, then retires
// that frame.
#include <cuda_runtime_api.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cuda_runtime_util.hpp"
#include "latlab/bench/cuda_rig.hpp"
#include "latlab/core/profile_rig.hpp"
#include "latlab/cuda.hpp"
#include "latlab/host_clock.hpp"

namespace latlab {
namespace {

using cuda_detail::cuda_fail;

// The stream, the workload's buffer and one blocking-sync event per frame in
// flight. The destructor waits for the stream before anything goes.
class CudaFrameLoop {
 public:
  static Result<std::unique_ptr<CudaFrameLoop>> create(uint32_t elements, uint32_t in_flight) {
    std::unique_ptr<CudaFrameLoop> loop(new CudaFrameLoop());
    cudaError_t e = cudaStreamCreateWithFlags(&loop->stream_, cudaStreamNonBlocking);
    if (e != cudaSuccess) return cuda_fail("cudaStreamCreateWithFlags", e);
    e = cudaMalloc(reinterpret_cast<void**>(&loop->data_), sizeof(float) * elements);
    if (e != cudaSuccess) return cuda_fail("cudaMalloc", e);
    e = cudaMemsetAsync(loop->data_, 0, sizeof(float) * elements, loop->stream_);
    if (e != cudaSuccess) return cuda_fail("cudaMemsetAsync", e);
    loop->done_.resize(in_flight, nullptr);
    loop->frame_of_.resize(in_flight);
    for (auto& ev : loop->done_) {
      // Blocking sync: waiting for a frame sleeps in the driver, no spin.
      e = cudaEventCreateWithFlags(&ev, cudaEventBlockingSync | cudaEventDisableTiming);
      if (e != cudaSuccess) return cuda_fail("cudaEventCreateWithFlags", e);
    }
    return loop;
  }
  ~CudaFrameLoop() {
    if (stream_) (void)cudaStreamSynchronize(stream_);
    for (auto ev : done_) {
      if (ev) (void)cudaEventDestroy(ev);
    }
    if (data_) (void)cudaFree(data_);
    if (stream_) (void)cudaStreamDestroy(stream_);
  }
  CudaFrameLoop(const CudaFrameLoop&) = delete;
  CudaFrameLoop& operator=(const CudaFrameLoop&) = delete;

  cudaStream_t stream() const { return stream_; }
  float* data() const { return data_; }
  cudaEvent_t done(uint32_t slot) const { return done_[slot]; }
  // The profiler frame whose work slot `slot` carries; nullopt: none in flight.
  std::optional<uint64_t>& frame_of(uint32_t slot) { return frame_of_[slot]; }
  uint32_t slots() const { return static_cast<uint32_t>(done_.size()); }

 private:
  CudaFrameLoop() = default;
  cudaStream_t stream_ = nullptr;
  float* data_ = nullptr;
  std::vector<cudaEvent_t> done_;
  std::vector<std::optional<uint64_t>> frame_of_;
};

// The device, its calibration sampler, the slots and the frame loop.
// Members go in reverse: the loop (waits for the stream), the slots, the
// sampler.
class CudaProfileRig final : public ProfileRig {
 public:
  CudaProfileRig(int device, std::string name, const ProfileRigDesc& desc)
      : device_(device), name_(std::move(name)), desc_(desc) {}

  std::string queue_name() const override {
    return "cuda stream (device " + std::to_string(device_) + ")";
  }
  bool has_post() const override { return false; }
  bool launch_span() const override { return true; }
  const char* wait_name() const override { return "event wait"; }
  ProfileClock clock() override;
  Result<std::shared_ptr<TimestampSlots>> make_slots(uint32_t count) override {
    auto slots = CudaTimestampSlots::create(
        {.count = count, .device = device_, .cross_check_events = false});
    if (!slots) return slots.error();
    slots_ = slots.value();  // held for their write_errors()
    return std::shared_ptr<TimestampSlots>(slots_);
  }
  Result<void> build(uint32_t frames_in_flight) override {
    auto loop = CudaFrameLoop::create(desc_.width * desc_.height, frames_in_flight);
    if (!loop) return loop.error();
    loop_ = std::move(loop.value());
    return {};
  }

  Result<ProfileSlotWait> wait_slot(uint32_t slot) override;
  Result<GpuCommandStream> begin(uint32_t /*slot*/) override {
    return GpuCommandStream{loop_->stream()};
  }
  Result<void> record_pass(GpuCommandStream stream, ProfilePass /*pass*/, uint32_t c) override {
    return cuda_launch_workload(
        static_cast<cudaStream_t>(stream),
        FrameWorkload{.passes = 1, .complexity = c, .width = desc_.width, .height = desc_.height},
        loop_->data());
  }
  Result<void> submit(uint32_t slot, uint64_t frame_id) override {
    const cudaError_t e = cudaEventRecord(loop_->done(slot), loop_->stream());
    if (e != cudaSuccess) return cuda_fail("cudaEventRecord", e);
    loop_->frame_of(slot) = frame_id;
    return {};
  }
  Result<std::vector<uint64_t>> wait_all() override;
  ProfileRigReport report() override;

 private:
  int device_ = 0;
  std::string name_;
  ProfileRigDesc desc_;
  std::unique_ptr<CudaCalibrationSampler> sampler_;
  std::shared_ptr<CudaTimestampSlots> slots_;
  std::unique_ptr<CudaFrameLoop> loop_;
};

// Device ticks -> host clock: the CUDA sampler's bracketed %globaltimer
// reads. Without a sampler the run goes on unmapped, with the reason.
ProfileClock CudaProfileRig::clock() {
  auto s = CudaCalibrationSampler::create({.device = device_});
  if (!s) {
    return {.sample = {},
            .ticks = kCudaGlobaltimerTicks,
            .domain = {},
            .unavailable = s.error().message};
  }
  sampler_ = std::move(s.value());
  CudaCalibrationSampler* sampler = sampler_.get();
  return {.sample = [sampler] { return sampler->sample(); },
          .ticks = kCudaGlobaltimerTicks,
          .domain = kCudaCalibrationDomain,
          .unavailable = {}};
}

Result<ProfileSlotWait> CudaProfileRig::wait_slot(uint32_t slot) {
  auto& frame = loop_->frame_of(slot);
  if (!frame) return ProfileSlotWait{};
  ProfileSlotWait w;
  w.waited = true;
  w.begin_ns = host_now_ns();
  const cudaError_t e = cudaEventSynchronize(loop_->done(slot));
  if (e != cudaSuccess) return cuda_fail("cudaEventSynchronize", e);
  w.end_ns = host_now_ns();
  w.retire = frame;  // its work completed: a stamp not written now never will be
  frame.reset();
  return w;
}

Result<std::vector<uint64_t>> CudaProfileRig::wait_all() {
  std::vector<uint64_t> retired;
  for (uint32_t slot = 0; slot < loop_->slots(); ++slot) {
    auto w = wait_slot(slot);
    if (!w) return w.error();
    if (w->retire) retired.push_back(*w->retire);
  }
  return retired;
}

ProfileRigReport CudaProfileRig::report() {
  ProfileRigReport r;
  r.names_backend = true;
  r.device = name_;
  // A failed stamp launch is counted by the slots; its zone reads invalid,
  // never given a time.
  r.stamp_write_errors = {.present = true, .value = slots_->write_errors()};
  r.notes.push_back(
      "note: each zone edge is a one-thread stamp kernel in the stream; it adds GPU time (a few "
      "us)");
  if (slots_->write_errors() > 0)
    r.notes.push_back("stamp launches that failed: " + std::to_string(slots_->write_errors()));
  return r;
}

}  // namespace

std::unique_ptr<ProfileRig> open_cuda_profile_rig(const ProfileRigDesc& desc,
                                                  ProfileFailure& failure) {
  auto device = find_cuda_device(desc.device);
  if (!device) {
    failure = {device.error().message, ProfileFailureKind::device_not_opened};
    return nullptr;
  }
  if (const cudaError_t e = cudaSetDevice(*device); e != cudaSuccess) {
    failure = {cuda_fail("cudaSetDevice", e).message, ProfileFailureKind::run_failed};
    return nullptr;
  }
  cudaDeviceProp props{};
  if (const cudaError_t e = cudaGetDeviceProperties(&props, *device); e != cudaSuccess) {
    failure = {cuda_fail("cudaGetDeviceProperties", e).message, ProfileFailureKind::run_failed};
    return nullptr;
  }
  if (desc.on_line) {
    desc.on_line("  on [" + std::to_string(*device) + "] " + props.name +
                 ": %globaltimer, 1 ns ticks, 64 valid bits");
  }
  return std::make_unique<CudaProfileRig>(*device, props.name, desc);
}

}  // namespace latlab
