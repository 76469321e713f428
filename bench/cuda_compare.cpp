// cuda_vs_events: the CUDA backend's timings beside CUDA's own, on a real GPU.
//
//  1. %globaltimer: update step, and its offset from CLOCK_REALTIME.
//  2. Calibration pairs: bracket half-width distribution, drift over the run.
//  3. Kernel durations: latlab's pool vs cudaEventElapsedTime on the same
//     kernels (spin kernels and the frame workload), per kind.
//  4. Stamp cost: the span of an empty begin/end pair.
//  5. Launch -> kernel start: host_now_ns() just before the launch call vs
//     the begin stamp mapped onto the host clock (idle GPU).
//  6. Latency device frames: submit -> GPU begin, GPU time, GPU end -> fence
//     wake (cudaEventBlockingSync).
// Mapping onto the host clock interpolates between a calibration pair taken
// just before and one just after each measurement; the printed bound is the
// interpolated pair deviation (exact if the clocks run linearly in between).
//
// Usage: cuda_vs_events [--reps N] [--device ORDINAL]
// Units are stated per line; distributions are over every repetition after a
// warm-up of 10 repetitions that are not counted.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "latlab/bench/cuda_rig.hpp"
#include "latlab/cuda.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/stats.hpp"

namespace {

using latlab::CalibrationPair;

constexpr int kWarmup = 10;

struct HostTime {
  int64_t host_ns = 0;
  int64_t error_ns = 0;
};

HostTime map_between(const CalibrationPair& a, const CalibrationPair& b, uint64_t ticks) {
  const auto span = static_cast<double>(static_cast<int64_t>(b.device_ticks - a.device_ticks));
  const double w =
      span > 0 ? static_cast<double>(static_cast<int64_t>(ticks - a.device_ticks)) / span : 0.0;
  HostTime t;
  t.host_ns = a.host_ns + std::llround(w * static_cast<double>(b.host_ns - a.host_ns));
  t.error_ns =
      static_cast<int64_t>(std::ceil(std::abs(1.0 - w) * static_cast<double>(a.max_deviation_ns) +
                                     std::abs(w) * static_cast<double>(b.max_deviation_ns))) +
      1;
  return t;
}

void print_dist(const char* label, std::vector<double> v, const char* unit, uint64_t missing = 0) {
  const latlab::Distribution d = latlab::summarize_in_place(v, missing);
  if (d.empty()) {
    std::printf("  %-34s n=0 missing=%llu\n", label, static_cast<unsigned long long>(d.missing));
    return;
  }
  std::printf(
      "  %-34s n=%-5llu miss=%-3llu mean %9.3f sd %8.3f min %9.3f p50 %9.3f p90 %9.3f p99 %9.3f "
      "max %9.3f %s\n",
      label, static_cast<unsigned long long>(d.count), static_cast<unsigned long long>(d.missing),
      d.mean, d.stddev.value_or(std::nan("")), d.min, d.p50, d.p90, d.p99, d.max,
      unit);  // nan: one sample
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "cuda_vs_events: %s\n", what.c_str());
  std::exit(1);
}

template <class T>
T check(latlab::Result<T> r, const char* what) {
  if (!r.ok()) die(std::string(what) + ": " + r.error().message);
  return std::move(r.value());
}

void check(latlab::Result<void> r, const char* what) {
  if (!r.ok()) die(std::string(what) + ": " + r.error().message);
}

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    die(std::string(what) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

int64_t realtime_minus_monotonic_ns() {
  const int64_t m0 = latlab::host_now_ns();
  timespec rt{};
  clock_gettime(CLOCK_REALTIME, &rt);
  const int64_t m1 = latlab::host_now_ns();
  return static_cast<int64_t>(rt.tv_sec) * 1'000'000'000 + rt.tv_nsec - (m0 + (m1 - m0) / 2);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 200;
  int device = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (a == "--device" && i + 1 < argc) {
      device = std::atoi(argv[++i]);
    } else {
      std::fprintf(
          stderr,
          "usage: cuda_vs_events [--reps N (default 200)] [--device ORDINAL (default 0)]\n");
      return 2;
    }
  }
  if (reps < 1) die("--reps must be >= 1");
  if (device < 0) die("--device must be a CUDA ordinal >= 0");

  auto devices = check(latlab::enumerate_cuda_devices(), "enumerate_cuda_devices");
  for (const auto& d : devices) {
    std::printf(
        "device %d: %s, cc %d.%d, %d SMs, %.1f GiB, SM clock %d kHz, mem clock %d kHz, bus %s, "
        "driver %s, "
        "runtime %s\n",
        d.index, d.name.c_str(), d.cc_major, d.cc_minor, d.sm_count,
        static_cast<double>(d.total_memory_bytes) / (1024.0 * 1024.0 * 1024.0), d.clock_khz,
        d.memory_clock_khz, d.pci_bus_id.c_str(),
        latlab::format_cuda_version(d.driver_version).c_str(),
        latlab::format_cuda_version(d.runtime_version).c_str());
    for (const auto& m : d.missing)
      std::printf("  missing %s: %s\n", m.name.c_str(), m.reason.c_str());
  }
  auto latency_device = check(latlab::create_cuda_latency_device(std::to_string(device)),
                              "create_cuda_latency_device");
  const std::string name = latency_device->info().name;
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  std::printf("using device %d (%s); reps %d after %d warm-up reps; host clock %s\n\n", device,
              name.c_str(), reps, kWarmup, latlab::kHostClockName);

  // --- 1. %globaltimer ------------------------------------------------------
  latlab::CudaCalibrationDesc cal_desc;
  cal_desc.device = device;
  auto sampler =
      check(latlab::CudaCalibrationSampler::create(cal_desc), "CudaCalibrationSampler::create");
  auto probe = check(latlab::probe_globaltimer(device, 10'000), "probe_globaltimer");
  std::printf(
      "[1] %%globaltimer update step over %u changes: min %llu ns, median %llu ns, max %llu ns\n",
      probe.steps, static_cast<unsigned long long>(probe.min_step_ns),
      static_cast<unsigned long long>(probe.median_step_ns),
      static_cast<unsigned long long>(probe.max_step_ns));
  {
    const CalibrationPair p = check(sampler->sample(), "sample");
    const int64_t rt_offset = realtime_minus_monotonic_ns();
    const int64_t gpu_minus_realtime =
        static_cast<int64_t>(p.device_ticks) - (p.host_ns + rt_offset);
    std::printf("    %%globaltimer - CLOCK_REALTIME = %+.3f us (bound +-%.3f us)\n\n",
                static_cast<double>(gpu_minus_realtime) / 1e3,
                static_cast<double>(p.max_deviation_ns) / 1e3);
  }

  // --- 2. calibration -------------------------------------------------------
  {
    std::vector<double> half_width_ns;
    std::vector<CalibrationPair> pairs;
    for (int i = 0; i < kWarmup + reps; ++i) {
      const CalibrationPair p = check(sampler->sample(), "sample");
      if (i >= kWarmup) {
        half_width_ns.push_back(static_cast<double>(p.max_deviation_ns));
        pairs.push_back(p);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::printf("[2] calibration pairs (best of %u brackets each, 2 ms apart)\n",
                cal_desc.brackets);
    print_dist("half-width (max_deviation)", half_width_ns, "ns");
    const auto& a = pairs.front();
    const auto& b = pairs.back();
    const double dg = static_cast<double>(b.device_ticks - a.device_ticks);
    const double dh = static_cast<double>(b.host_ns - a.host_ns);
    std::printf("    GPU vs host rate over %.3f s: %+.3f ppm (+-%.3f ppm from the pair bounds)\n\n",
                dh / 1e9, (dg - dh) / dh * 1e6,
                static_cast<double>(a.max_deviation_ns + b.max_deviation_ns) / dh * 1e6);
  }

  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
             "cudaStreamCreateWithFlags");
  auto slots = check(latlab::CudaTimestampSlots::create({.count = 512, .device = device}),
                     "CudaTimestampSlots::create");
  auto pool = check(
      latlab::TimestampQueryPool::create(
          slots, latlab::QueryPoolDesc{.max_queries = 512, .kind = latlab::QueryKind::compute}),
      "TimestampQueryPool::create");
  uint64_t frame = 0;

  // --- 3. kernel durations vs cudaEventElapsedTime --------------------------
  {
    const latlab::FrameWorkload base{.passes = 1, .complexity = 1, .width = 1024, .height = 1024};
    float* data = nullptr;
    check_cuda(cudaMalloc(&data, sizeof(float) * base.width * base.height), "cudaMalloc");
    struct Kind {
      std::string name;
      int64_t spin_ns;      // > 0: spin kernel
      uint32_t complexity;  // else: one workload pass over 1024x1024
    };
    const std::vector<Kind> kinds = {
        {"spin 50 us", 50'000, 0},          {"spin 200 us", 200'000, 0},
        {"spin 1 ms", 1'000'000, 0},        {"spin 5 ms", 5'000'000, 0},
        {"workload 1024^2 c=64", 0, 64},    {"workload 1024^2 c=512", 0, 512},
        {"workload 1024^2 c=4096", 0, 4096}};
    std::printf(
        "[3] kernel durations: latlab pool (stamps) vs cudaEventElapsedTime, same kernels, back to "
        "back\n");
    for (const auto& kind : kinds) {
      std::vector<double> latlab_us;
      std::vector<double> event_us;
      std::vector<double> diff_ns;
      uint64_t missing = 0;
      for (int i = 0; i < kWarmup + reps; ++i) {
        ++frame;
        const std::string uid = "c:0:k:f" + std::to_string(frame);
        const auto off = pool->allocate_queries_for_context(uid, frame);
        if (!off) die("pool allocation failed");
        check(slots->write_timestamp(stream, *off), "write_timestamp");
        if (kind.spin_ns > 0) {
          check(latlab::cuda_launch_spin(stream, kind.spin_ns), "spin");
        } else {
          latlab::FrameWorkload w = base;
          w.complexity = kind.complexity;
          check(latlab::cuda_launch_workload(stream, w, data), "workload");
        }
        check(slots->write_timestamp(stream, *off + 1), "write_timestamp");
        check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
        const auto ev = slots->event_elapsed(*off);
        (void)pool->resolve_queries_async();
        const latlab::TimestampResult r = pool->timestamp(uid);
        if (i < kWarmup) continue;
        if (!r.ok() || ev.status != latlab::QueryStatus::ok) {
          ++missing;
          continue;
        }
        latlab_us.push_back(static_cast<double>(r.duration_ns) / 1e3);
        event_us.push_back(ev.ms * 1e3);
        diff_ns.push_back(static_cast<double>(r.duration_ns) - ev.ms * 1e6);
      }
      std::printf(" %s\n", kind.name.c_str());
      print_dist("latlab duration", latlab_us, "us", missing);
      print_dist("cudaEventElapsedTime", event_us, "us", missing);
      print_dist("latlab - event", diff_ns, "ns", missing);
    }
    check_cuda(cudaFree(data), "cudaFree");
    std::printf("\n");
  }

  // --- 4. stamp cost --------------------------------------------------------
  {
    std::vector<double> empty_ns;
    uint64_t missing = 0;
    for (int i = 0; i < kWarmup + reps; ++i) {
      ++frame;
      const std::string uid = "c:0:empty:f" + std::to_string(frame);
      const auto off = pool->allocate_queries_for_context(uid, frame);
      if (!off) die("pool allocation failed");
      check(slots->write_timestamp(stream, *off), "write_timestamp");
      check(slots->write_timestamp(stream, *off + 1), "write_timestamp");
      check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      (void)pool->resolve_queries_async();
      const latlab::TimestampResult r = pool->timestamp(uid);
      if (i < kWarmup) continue;
      if (!r.ok()) {
        ++missing;
        continue;
      }
      empty_ns.push_back(static_cast<double>(r.duration_ns));
    }
    std::printf("[4] empty begin/end pair (what one stamp adds to a measured span)\n");
    print_dist("span", empty_ns, "ns", missing);
    std::printf("\n");
  }

  // --- 5. launch -> kernel start ---------------------------------------------
  {
    std::vector<double> launch_us;
    std::vector<double> bound_us;
    std::vector<double> call_us;
    uint64_t missing = 0;
    for (int i = 0; i < kWarmup + reps; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // the GPU is idle at launch
      ++frame;
      const std::string uid = "c:0:launch:f" + std::to_string(frame);
      const auto off = pool->allocate_queries_for_context(uid, frame);
      if (!off) die("pool allocation failed");
      const CalibrationPair before = check(sampler->sample(), "sample");
      const int64_t host_before_launch = latlab::host_now_ns();
      check(slots->write_timestamp(stream, *off), "write_timestamp");
      const int64_t host_after_launch = latlab::host_now_ns();
      check(slots->write_timestamp(stream, *off + 1), "write_timestamp");
      check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      const CalibrationPair after = check(sampler->sample(), "sample");
      (void)pool->resolve_queries_async();
      const latlab::TimestampResult r = pool->timestamp(uid);
      if (i < kWarmup) continue;
      if (!r.ok()) {
        ++missing;
        continue;
      }
      const HostTime begin = map_between(before, after, r.begin_ticks);
      launch_us.push_back(static_cast<double>(begin.host_ns - host_before_launch) / 1e3);
      bound_us.push_back(static_cast<double>(begin.error_ns) / 1e3);
      call_us.push_back(static_cast<double>(host_after_launch - host_before_launch) / 1e3);
    }
    std::printf(
        "[5] launch -> kernel start (idle GPU; host_now before the launch call -> mapped begin "
        "stamp)\n");
    print_dist("launch to kernel start", launch_us, "us", missing);
    print_dist("mapping bound (+-)", bound_us, "us");
    print_dist("launch + event record, host CPU", call_us, "us");
    std::printf("\n");
  }

  // --- 6. latency device frames -----------------------------------------------
  {
    struct Config {
      const char* name;
      latlab::FrameWorkload work;
    };
    const Config configs[] = {
        {"baseline: 1 pass c=1 64x64", {.passes = 1, .complexity = 1, .width = 64, .height = 64}},
        {"loaded: 4 passes c=256 1920x1080",
         {.passes = 4, .complexity = 256, .width = 1920, .height = 1080}},
    };
    std::printf(
        "[6] CudaLatencyDevice frames (submit_frame + wait_frame; 1 ms idle between frames)\n");
    uint64_t frame_id = 0;
    for (const auto& c : configs) {
      std::vector<double> submit_to_begin_us;
      std::vector<double> gpu_us;
      std::vector<double> end_to_wake_us;
      std::vector<double> bound_us;
      uint64_t missing = 0;
      for (int i = 0; i < kWarmup + reps; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ++frame_id;
        const CalibrationPair before =
            check(latency_device->sample_calibration(), "sample_calibration");
        const int64_t submit_ns = latlab::host_now_ns();
        check(latency_device->submit_frame(frame_id, c.work), "submit_frame");
        const latlab::GpuFrameTiming t = check(latency_device->wait_frame(frame_id), "wait_frame");
        const CalibrationPair after =
            check(latency_device->sample_calibration(), "sample_calibration");
        if (i < kWarmup) continue;
        if (t.gpu_status != latlab::QueryStatus::ok || t.fence_status != latlab::QueryStatus::ok) {
          ++missing;
          continue;
        }
        const HostTime begin = map_between(before, after, t.gpu_begin_ticks);
        const HostTime end = map_between(before, after, t.gpu_end_ticks);
        submit_to_begin_us.push_back(static_cast<double>(begin.host_ns - submit_ns) / 1e3);
        gpu_us.push_back(static_cast<double>(t.gpu_end_ticks - t.gpu_begin_ticks) / 1e3);
        end_to_wake_us.push_back(static_cast<double>(t.fence_wake_ns - end.host_ns) / 1e3);
        bound_us.push_back(static_cast<double>(std::max(begin.error_ns, end.error_ns)) / 1e3);
      }
      std::printf(" %s\n", c.name);
      print_dist("submit start -> GPU begin", submit_to_begin_us, "us", missing);
      print_dist("GPU execution", gpu_us, "us", missing);
      print_dist("GPU end -> fence wake", end_to_wake_us, "us", missing);
      print_dist("mapping bound (+-)", bound_us, "us");
    }
  }

  pool.reset();
  check_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return 0;
}
