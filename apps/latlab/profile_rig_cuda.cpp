// `latlab profile` on CUDA: the reference frame (profile_rig.hpp) on one
// CUDA stream, without the fragment passes (no `post` zones). Every zone edge
// is a stamp kernel in the stream (profiler_cuda.hpp says what that costs).
// Frames in flight: a blocking-sync event after each frame; waiting for a
// slot waits for the event of the frame that used it, then retires that
// frame in the profiler.
#include <cstdio>

#include "command.hpp"
#include "profile_rig.hpp"

#if LATLAB_HAVE_CUDA

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "latlab/bench/backend.hpp"
#include "latlab/bench/cuda_rig.hpp"
#include "latlab/cuda.hpp"
#include "latlab/host_clock.hpp"
// This command exists to show the profiler: its zones stay in whatever
// LATLAB_ENABLE_PROFILER the build chose for user code.
#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/profiler.hpp"
#include "latlab/profiler_cuda.hpp"

namespace latlab::cli {
namespace {

std::string cuda_error(const char* what, cudaError_t e) {
  return fmt::format("CUDA: {} failed ({}: {})", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

// The stream, the workload's buffer and one blocking-sync event per frame in
// flight. The destructor waits for the stream before anything goes.
class CudaFrameLoop {
 public:
  static Result<std::unique_ptr<CudaFrameLoop>> create(uint32_t elements, uint32_t in_flight) {
    std::unique_ptr<CudaFrameLoop> loop(new CudaFrameLoop());
    cudaError_t e = cudaStreamCreateWithFlags(&loop->stream_, cudaStreamNonBlocking);
    if (e != cudaSuccess) return make_error(cuda_error("cudaStreamCreateWithFlags", e));
    e = cudaMalloc(reinterpret_cast<void**>(&loop->data_), sizeof(float) * elements);
    if (e != cudaSuccess) return make_error(cuda_error("cudaMalloc", e));
    e = cudaMemsetAsync(loop->data_, 0, sizeof(float) * elements, loop->stream_);
    if (e != cudaSuccess) return make_error(cuda_error("cudaMemsetAsync", e));
    loop->done_.resize(in_flight, nullptr);
    loop->frame_of_.resize(in_flight);
    for (auto& ev : loop->done_) {
      // Blocking sync: waiting for a frame sleeps in the driver, no spin.
      e = cudaEventCreateWithFlags(&ev, cudaEventBlockingSync | cudaEventDisableTiming);
      if (e != cudaSuccess) return make_error(cuda_error("cudaEventCreateWithFlags", e));
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

// The device, its calibration sampler, the profiler and the frame loop.
// Members go in reverse: the loop (waits for the stream), the profiler, its
// slots, the sampler.
class CudaProfileRig final : public ProfileRig {
 public:
  CudaProfileRig(int device, std::string name, const ProfileRequest& req)
      : device_(device), name_(std::move(name)), req_(req) {}

  std::string queue_name() const override {
    return "cuda stream (device " + std::to_string(device_) + ")";
  }
  uint32_t zones_per_frame() const override { return 5; }
  bool launch_span() const override { return true; }
  ProfileClock clock() override;
  std::optional<ProfileFailure> build(const GpuProfilerDesc& desc) override;
  GpuProfiler& profiler() override { return *prof_; }

  Result<void> wait_slot(uint32_t slot, ChromeTraceWriter* trace) override;
  Result<void> record(uint32_t slot, uint32_t complexity) override;
  Result<void> submit(uint32_t slot, uint64_t frame_id) override {
    const cudaError_t e = cudaEventRecord(loop_->done(slot), loop_->stream());
    if (e != cudaSuccess) return make_error(cuda_error("cudaEventRecord", e));
    loop_->frame_of(slot) = frame_id;
    return {};
  }
  Result<void> wait_all() override {
    for (uint32_t slot = 0; slot < loop_->slots(); ++slot) {
      if (auto w = wait_slot(slot, nullptr); !w) return w;
    }
    return {};
  }

  void add_json(nlohmann::json& out) const override {
    out["backend"] = std::string(backend_name(Backend::cuda));
    out["device"] = name_;
    // A failed stamp launch is counted by the slots; its zone reads invalid,
    // never given a time.
    out["stamp_write_errors"] = slots_->write_errors();
  }
  void print_notes() const override {
    fmt::print(
        "note: each zone edge is a one-thread stamp kernel in the stream; it adds GPU time (a few "
        "us)\n");
    if (slots_->write_errors() > 0)
      fmt::print("stamp launches that failed: {}\n", slots_->write_errors());
  }

 private:
  int device_ = 0;
  std::string name_;
  ProfileRequest req_;
  std::unique_ptr<CudaCalibrationSampler> sampler_;
  // create_cuda_profiler's slots, held here too for their write_errors().
  std::shared_ptr<CudaTimestampSlots> slots_;
  std::unique_ptr<CudaGpuProfiler> prof_;
  std::unique_ptr<CudaFrameLoop> loop_;
};

// Device ticks -> host clock: the CUDA sampler's bracketed %globaltimer
// reads. Without a sampler the run goes on unmapped, with the reason.
ProfileClock CudaProfileRig::clock() {
  auto s = CudaCalibrationSampler::create({.device = device_});
  if (!s)
    return {.sample = {},
            .ticks = kCudaGlobaltimerTicks,
            .domain = {},
            .unavailable = s.error().message};
  sampler_ = std::move(s.value());
  CudaCalibrationSampler* sampler = sampler_.get();
  return {.sample = [sampler] { return sampler->sample(); },
          .ticks = kCudaGlobaltimerTicks,
          .domain = kCudaCalibrationDomain,
          .unavailable = {}};
}

std::optional<ProfileFailure> CudaProfileRig::build(const GpuProfilerDesc& desc) {
  auto slots = CudaTimestampSlots::create(
      {.count = GpuProfiler::slots_needed(desc), .device = device_, .cross_check_events = false});
  if (!slots) return ProfileFailure{slots.error().message, kExitMissingCapability};
  slots_ = slots.value();
  auto prof = CudaGpuProfiler::create(slots_, desc);
  if (!prof) return ProfileFailure{prof.error().message, kExitRunFailed};
  prof_ = std::move(prof.value());
  auto loop = CudaFrameLoop::create(req_.width * req_.height, desc.frames_in_flight);
  if (!loop) return ProfileFailure{loop.error().message, kExitRunFailed};
  loop_ = std::move(loop.value());
  return std::nullopt;
}

Result<void> CudaProfileRig::wait_slot(uint32_t slot, ChromeTraceWriter* trace) {
  auto& frame = loop_->frame_of(slot);
  if (!frame) return {};
  const int64_t w0 = host_now_ns();
  const cudaError_t e = cudaEventSynchronize(loop_->done(slot));
  if (e != cudaSuccess) return make_error(cuda_error("cudaEventSynchronize", e));
  if (trace) trace->add_span("CPU main", "event wait", w0, host_now_ns());
  prof_->retire_frame(*frame);  // its work completed: a stamp not written now never will be
  frame.reset();
  return {};
}

Result<void> CudaProfileRig::record(uint32_t /*slot*/, uint32_t c) {
  CudaGpuProfiler& prof = *prof_;
  const cudaStream_t stream = loop_->stream();
  const uint32_t c2 = std::min<uint32_t>(kMaxComplexity, 2 * c);
  const auto pass = [&](uint32_t complexity) {
    return cuda_launch_workload(
        stream,
        FrameWorkload{
            .passes = 1, .complexity = complexity, .width = req_.width, .height = req_.height},
        loop_->data());
  };
  LATLAB_GPU_ZONE(prof, stream, "frame");
  {
    LATLAB_GPU_ZONE(prof, stream, "simulate");
    if (auto r = pass(c); !r) return r;
  }
  {
    LATLAB_GPU_ZONE(prof, stream, "lighting");
    {
      LATLAB_GPU_ZONE(prof, stream, "lighting.direct");
      if (auto r = pass(c2); !r) return r;
    }
    {
      LATLAB_GPU_ZONE(prof, stream, "lighting.indirect");
      if (auto r = pass(c); !r) return r;
    }
  }
  return {};
}

}  // namespace

std::unique_ptr<ProfileRig> open_cuda_profile_rig(const ProfileRequest& req,
                                                  ProfileFailure& failure) {
  auto device = find_cuda_device(req.device);
  if (!device) {
    failure = {device.error().message, device_open_exit_code(req.device)};
    return nullptr;
  }
  if (const cudaError_t e = cudaSetDevice(*device); e != cudaSuccess) {
    failure = {cuda_error("cudaSetDevice", e), kExitRunFailed};
    return nullptr;
  }
  cudaDeviceProp props{};
  if (const cudaError_t e = cudaGetDeviceProperties(&props, *device); e != cudaSuccess) {
    failure = {cuda_error("cudaGetDeviceProperties", e), kExitRunFailed};
    return nullptr;
  }
  if (!req.json) {
    fmt::print("  on [{}] {}: %globaltimer, 1 ns ticks, 64 valid bits\n", *device, props.name);
  }
  return std::make_unique<CudaProfileRig>(*device, props.name, req);
}

}  // namespace latlab::cli

#else  // !LATLAB_HAVE_CUDA

namespace latlab::cli {

std::unique_ptr<ProfileRig> open_cuda_profile_rig(const ProfileRequest& /*request*/,
                                                  ProfileFailure& failure) {
  failure = {"backend cuda is not built (configure with nvcc present or -DLATLAB_CUDA=ON)",
             kExitMissingCapability};
  return nullptr;
}

}  // namespace latlab::cli

#endif  // LATLAB_HAVE_CUDA
