// latlab profile --backend cuda: the reference frame of profile.cpp on one
// CUDA stream, timed by the scoped GPU profiler (create_cuda_profiler), with
// the same zone table, frame tree, JSON and Chrome trace.
//
// The frame:  frame
//               simulate            workload kernel, complexity C
//               lighting
//                 lighting.direct   workload kernel, 2C
//                 lighting.indirect workload kernel, C
// (CUDA has no fragment passes, so no `post` zones.) Every zone edge is a
// stamp kernel in the stream (profiler_cuda.hpp says what that costs).
// Frames in flight: a blocking-sync event after each frame; the loop waits
// for the event of the frame that used the slot `frames in flight` ago, then
// retires that frame in the profiler.
#include "profile_cuda.hpp"

#include <cstdio>

#include "command.hpp"

#if LATLAB_HAVE_CUDA

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "latlab/bench/cuda_rig.hpp"
#include "latlab/calibrator.hpp"
#include "latlab/cuda.hpp"
#include "latlab/host_clock.hpp"
// This command exists to show the profiler: its zones stay in whatever
// LATLAB_ENABLE_PROFILER the build chose for user code.
#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "interrupt_scope.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_cuda.hpp"
#include "latlab/profiler_trace.hpp"
#include "profile_report.hpp"

namespace latlab::cli {
namespace {

constexpr uint32_t kZonesPerFrame = 5;

int fail(const std::string& message, int code) {
  std::fprintf(stderr, "latlab profile: %s\n", message.c_str());
  return code;
}

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

 private:
  CudaFrameLoop() = default;
  cudaStream_t stream_ = nullptr;
  float* data_ = nullptr;
  std::vector<cudaEvent_t> done_;
  std::vector<std::optional<uint64_t>> frame_of_;
};

// One reference frame's zones and kernels into `stream`.
Result<void> record_frame(CudaGpuProfiler& prof, cudaStream_t stream, float* data,
                          const CudaProfileRequest& req) {
  const uint32_t c = req.complexity;
  const uint32_t c2 = std::min<uint32_t>(kMaxComplexity, 2 * c);
  const auto pass = [&](uint32_t complexity) {
    return cuda_launch_workload(
        stream,
        FrameWorkload{
            .passes = 1, .complexity = complexity, .width = req.width, .height = req.height},
        data);
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

// Waits for the frame that used `slot` (if any) and retires it in the profiler.
Result<void> wait_slot(CudaFrameLoop& loop, uint32_t slot, GpuProfiler& prof,
                       ChromeTraceWriter* trace) {
  auto& frame = loop.frame_of(slot);
  if (!frame) return {};
  const int64_t w0 = host_now_ns();
  const cudaError_t e = cudaEventSynchronize(loop.done(slot));
  if (e != cudaSuccess) return make_error(cuda_error("cudaEventSynchronize", e));
  if (trace) trace->add_span("CPU main", "event wait", w0, host_now_ns());
  prof.retire_frame(*frame);  // its work completed: a stamp not written now never will be
  frame.reset();
  return {};
}

Result<void> run_frames(const CudaProfileRequest& req, CudaGpuProfiler& prof, CudaFrameLoop& loop,
                        ChromeTraceWriter* trace, uint64_t& frames_run) {
  const std::atomic<bool>* stop = InterruptScope::flag();  // stops after the frame it is in
  for (uint64_t frame = 0; frame < req.frames && !stop->load(); ++frame, ++frames_run) {
    const auto slot = static_cast<uint32_t>(frame % req.frames_in_flight);
    if (auto w = wait_slot(loop, slot, prof, trace); !w) return w;
    if (frame > 0) prof.next_frame();  // closes the previous frame, collects what is ready
    const int64_t r0 = host_now_ns();
    const uint64_t id = prof.current_frame_id();
    if (auto r = record_frame(prof, loop.stream(), loop.data(), req); !r) return r;
    const cudaError_t e = cudaEventRecord(loop.done(slot), loop.stream());
    if (e != cudaSuccess) return make_error(cuda_error("cudaEventRecord", e));
    loop.frame_of(slot) = id;
    if (trace) trace->add_span("CPU main", "launch", r0, host_now_ns());
  }
  for (uint32_t slot = 0; slot < req.frames_in_flight; ++slot) {
    if (auto w = wait_slot(loop, slot, prof, nullptr); !w) return w;
  }
  prof.next_frame();  // closes the last frame; every result is available now
  prof.collect();
  return {};
}

struct CudaRunInfo {
  int device = 0;
  std::string device_name;
  std::string queue_name;
  std::string mapping;  // how device ticks reach the host clock
  std::shared_ptr<const ClockFit> fit;
  uint64_t write_errors = 0;
  uint64_t frames_run = 0;
  std::string partial;  // why the run stopped early; "" when it did not
};

void print_json(const CudaProfileRequest& req, const CudaRunInfo& run, const GpuProfiler& prof,
                const ChromeTraceWriter& trace, bool trace_written) {
  nlohmann::json out = {
      {"backend", "cuda"},
      {"device", run.device_name},
      {"host_clock", kHostClockName},
      {"settings",
       {{"frames", req.frames},
        {"complexity", req.complexity},
        {"size", fmt::format("{}x{}", req.width, req.height)},
        {"frames_in_flight", req.frames_in_flight}}},
      {"host_mapping", run.mapping},
      {"clock_fit", profile_clock_fit_json(run.fit)},
      {"zones", profile_stats_json(prof.stats())},
      {"counters", profile_counters_json(prof.counters())},
      {"stamp_write_errors", run.write_errors},
  };
  if (!req.trace.empty()) {
    out["trace"] = profile_trace_json(req.trace, trace, trace_written, !run.partial.empty());
  }
  fmt::print("{}\n", out.dump(2));
}

void print_text(const CudaProfileRequest& req, const CudaRunInfo& run, const GpuProfiler& prof,
                const ChromeTraceWriter& trace, bool trace_written) {
  print_host_mapping_line(run.mapping, run.fit);
  fmt::print("{}\n", format_stat_table(run.queue_name, prof.stats()));
  print_newest_frame_tree(prof, run.queue_name);
  print_counters_line(prof.counters());
  fmt::print(
      "note: each zone edge is a one-thread stamp kernel in the stream; it adds GPU time (a few "
      "us)\n");
  if (run.write_errors > 0) fmt::print("stamp launches that failed: {}\n", run.write_errors);
  print_trace_line(req.trace, trace, trace_written, !run.partial.empty());
}

// Device ticks -> host clock: a calibrator on the CUDA sampler's bracketed
// %globaltimer reads, refreshed on its own thread (never in the frame loop).
// Without a sampler the run goes on unmapped, with the reason.
std::unique_ptr<Calibrator> start_calibration(int device,
                                              std::unique_ptr<CudaCalibrationSampler>& sampler,
                                              std::string& mapping) {
  auto s = CudaCalibrationSampler::create({.device = device});
  if (!s) {
    mapping = "none (" + s.error().message + ")";
    return nullptr;
  }
  sampler = std::move(s.value());
  auto calibrator =
      std::make_unique<Calibrator>([&sampler] { return sampler->sample(); }, kCudaGlobaltimerTicks);
  if (auto c = calibrator->calibrate_now(); !c) {
    mapping = "none (" + c.error().message + ")";
    return calibrator;
  }
  calibrator->start_periodic();
  mapping = std::string(kCudaCalibrationDomain) + ", clock model refreshed every 1 s";
  return calibrator;
}

// Selects device `req.device`, makes it current and describes it in `run`.
// nullopt when it can be used, else the exit code (the message is printed).
std::optional<int> open_device(const CudaProfileRequest& req, CudaRunInfo& run) {
  auto device = find_cuda_device(req.device);
  if (!device) return fail(device.error().message, device_open_exit_code(req.device));
  run.device = *device;
  if (const cudaError_t e = cudaSetDevice(run.device); e != cudaSuccess) {
    return fail(cuda_error("cudaSetDevice", e), kExitRunFailed);
  }
  cudaDeviceProp props{};
  if (const cudaError_t e = cudaGetDeviceProperties(&props, run.device); e != cudaSuccess) {
    return fail(cuda_error("cudaGetDeviceProperties", e), kExitRunFailed);
  }
  run.device_name = props.name;
  run.queue_name = "cuda stream (device " + std::to_string(run.device) + ")";
  if (!req.json) {
    fmt::print("  on [{}] {}: %globaltimer, 1 ns ticks, 64 valid bits\n", run.device,
               run.device_name);
  }
  return std::nullopt;
}

// After the frames: the missing-zone warning, the trace file, the output.
int report(const CudaProfileRequest& req, const CudaRunInfo& run, const GpuProfiler& prof,
           ChromeTraceWriter& trace) {
  int code = run.partial.empty() ? kExitOk : kExitRunFailed;
  if (!run.partial.empty()) std::fprintf(stderr, "latlab profile: %s\n", run.partial.c_str());
  const ProfilerCounters counters = prof.counters();
  const uint64_t expected_zones = run.frames_run * kZonesPerFrame;
  warn_untimed_zones(counters, expected_zones);
  const bool want_trace = !req.trace.empty();
  if (want_trace && !close_trace_file(trace, run.partial)) code = kExitWriteFailed;
  const bool trace_written = want_trace && code != kExitWriteFailed;
  if (req.json) {
    print_json(req, run, prof, trace, trace_written);
  } else {
    print_text(req, run, prof, trace, trace_written);
  }
  return code;
}

}  // namespace

int profile_cuda(const CudaProfileRequest& req) {
  if (!req.json) {
    fmt::print("latlab profile: reference frame on CUDA, scoped GPU zones (stamp kernels)\n");
    fmt::print("  device {}  frames {}  complexity {}  size {}x{}  frames in flight {}  trace {}\n",
               req.device.empty() ? "(default)" : req.device, req.frames, req.complexity, req.width,
               req.height, req.frames_in_flight, req.trace.empty() ? "(none)" : req.trace);
  }
  CudaRunInfo run;
  if (auto code = open_device(req, run)) return *code;
  std::unique_ptr<CudaCalibrationSampler> sampler;
  std::unique_ptr<Calibrator> calibrator = start_calibration(run.device, sampler, run.mapping);

  GpuProfilerDesc pdesc{.name = run.queue_name,
                        .max_zones_per_frame = 64,
                        .frames_in_flight = req.frames_in_flight,
                        .stat_window_frames = req.frames,
                        .cpu_zone_times = !req.trace.empty()};
  // create_cuda_profiler's slots, held here too for their write_errors().
  auto slots_r = CudaTimestampSlots::create({.count = GpuProfiler::slots_needed(pdesc),
                                             .device = run.device,
                                             .cross_check_events = false});
  if (!slots_r) return fail(slots_r.error().message, kExitMissingCapability);
  const std::shared_ptr<CudaTimestampSlots> slots = slots_r.value();
  auto prof_r = CudaGpuProfiler::create(slots, pdesc);
  if (!prof_r) return fail(prof_r.error().message, kExitRunFailed);
  CudaGpuProfiler& prof = *prof_r.value();
  auto loop_r = CudaFrameLoop::create(req.width * req.height, req.frames_in_flight);
  if (!loop_r) return fail(loop_r.error().message, kExitRunFailed);

  prof.set_clock_mapper([&calibrator](uint64_t t) -> std::optional<MappedTime> {
    const auto fit = calibrator ? calibrator->fit() : nullptr;
    if (!fit) return std::nullopt;
    return fit->map(t);
  });
  ChromeTraceWriter trace;
  if (!open_trace_file(req.trace, trace)) return kExitWriteFailed;
  if (!req.trace.empty()) {
    prof.set_frame_sink([&](const ProfilerFrame& f) { trace.add_frame(pdesc.name, f); });
  }
  if (auto r = run_frames(req, prof, *loop_r.value(), req.trace.empty() ? nullptr : &trace,
                          run.frames_run);
      !r) {
    return fail(r.error().message, kExitRunFailed);
  }
  run.partial = profile_interrupted(InterruptScope::flag(), run.frames_run, req.frames);
  if (calibrator) calibrator->stop();
  run.fit = calibrator ? calibrator->fit() : nullptr;
  // A failed stamp launch is counted by the slots; its zone reads invalid,
  // never given a time.
  run.write_errors = slots->write_errors();
  return report(req, run, prof, trace);
}

}  // namespace latlab::cli

#else  // !LATLAB_HAVE_CUDA

namespace latlab::cli {

int profile_cuda(const CudaProfileRequest& /*request*/) {
  std::fprintf(stderr,
               "latlab profile: backend cuda is not built (configure with nvcc present or "
               "-DLATLAB_CUDA=ON)\n");
  return kExitMissingCapability;
}

}  // namespace latlab::cli

#endif  // LATLAB_HAVE_CUDA
