// Heap allocations per measured frame of the latency path (target 0: an
// allocation can stall a frame). A replaced global operator new counts every allocation of the
// process; the count per frame comes from two runs that differ only in the
// number of frames (same blocks, same warm-up), so what a run or a block
// allocates once cancels:
//   per_frame = (allocs(N2 frames) - allocs(N1 frames)) / (N2 - N1).
// Also the device alone: N submit_frame/wait_frame pairs after a warm-up,
// counted on the calling thread only.
//
// Backends: sim (always; virtual time, a function mapper over the sim's
// ground truth) and Vulkan (the default device: lavapipe on CI; skipped with
// its reason when none opens; a function mapper over one calibration pair,
// so no calibrator thread allocates on its own schedule during the count).
// Interval 1 ms (the allocation count does not depend on it).
//
// Usage: alloc_per_frame [--frames N2] [--backend sim|vulkan|all] [--json]
// Exit: 0 measured (whatever the count), 1 a run failed, 2 bad arguments.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "latlab/bench/latency_run.hpp"
#include "latlab/bench/sim.hpp"
#include "latlab/bench/tick_mapper.hpp"
#ifdef LATLAB_HAVE_VULKAN
#include "latlab/bench/vulkan_rig.hpp"
#include "latlab/vulkan.hpp"
#endif

namespace {
std::atomic<uint64_t> g_allocs{0};
thread_local uint64_t t_allocs = 0;
}  // namespace

// The replacements below pair malloc with free by design; GCC 12 at -O2
// reads the inlined free() as a mismatch with operator new.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  ++t_allocs;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  ++t_allocs;
  return std::malloc(n == 0 ? 1 : n);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace latlab {
namespace {

struct Count {
  bool ok = false;
  std::string error;
  double engine_per_frame = 0;  // difference method, whole process
  uint64_t engine_n1 = 0, engine_n2 = 0, allocs_n1 = 0, allocs_n2 = 0;
  double device_per_frame = 0;  // device loop, calling thread
  uint64_t device_frames = 0, device_allocs = 0;
};

LatencyRunDesc run_desc(uint32_t frames) {
  LatencyRunDesc d;
  d.frames = frames;
  d.blocks = 2;
  d.warmup_frames = 10;
  d.schedule.min_interval_ns = 1'000'000;
  d.schedule.max_interval_ns = 1'000'000;
  d.block_lead_ns = 1'000'000;
  d.cpu_step_iterations = 200;
  return d;
}

// Allocations of the whole process during one run of `frames` frames.
Result<uint64_t> count_run(LatencyDevice& dev, TickMapper& mapper, HostTime* time, uint32_t frames,
                           uint64_t first_id) {
  LatencyRunEnv env;
  env.device = &dev;
  env.mapper = &mapper;
  env.time = time;
  LatencyRunDesc d = run_desc(frames);
  d.first_frame_id = first_id;
  const uint64_t a0 = g_allocs.load();
  Result<LatencyRun> r = run_latency(d, env);
  const uint64_t a1 = g_allocs.load();
  if (!r) return r.error();
  if (r->partial) return make_error("the run stopped: " + r->partial_reason);
  // Storage of the run (frames vector) is sized per run, one allocation
  // either way, so it cancels in the difference.
  return a1 - a0;
}

Count measure(LatencyDevice& dev, TickMapper& mapper, HostTime* time, uint32_t n2) {
  Count c;
  const uint32_t n1 = n2 / 4 < 2 ? 2 : n2 / 4;
  uint64_t id = 0;
  // One run first: lazy one-time allocations (workload objects, thread-local
  // state) land here, not in either count.
  if (auto w = count_run(dev, mapper, time, n1, id); !w) {
    c.error = w.error().message;
    return c;
  }
  id += 1'000'000;
  auto a = count_run(dev, mapper, time, n1, id);
  id += 1'000'000;
  auto b = count_run(dev, mapper, time, n2, id);
  id += 1'000'000;
  if (!a || !b) {
    c.error = !a ? a.error().message : b.error().message;
    return c;
  }
  c.engine_n1 = n1;
  c.engine_n2 = n2;
  c.allocs_n1 = *a;
  c.allocs_n2 = *b;
  c.engine_per_frame =
      (static_cast<double>(*b) - static_cast<double>(*a)) / static_cast<double>(n2 - n1);

  const FrameWorkload work;            // the Baseline workload
  for (uint32_t i = 0; i < 10; ++i) {  // warm-up
    if (auto s = dev.submit_frame(id, work); !s) {
      c.error = s.error().message;
      return c;
    }
    (void)dev.wait_frame(id++);
  }
  const uint64_t t0 = t_allocs;
  for (uint32_t i = 0; i < n2; ++i) {
    if (auto s = dev.submit_frame(id, work); !s) {
      c.error = s.error().message;
      return c;
    }
    auto t = dev.wait_frame(id++);
    if (!t) {
      c.error = t.error().message;
      return c;
    }
    if (t->gpu_status == QueryStatus::ok)
      (void)mapper.map_pair(t->gpu_begin_ticks, t->gpu_end_ticks);
  }
  c.device_allocs = t_allocs - t0;
  c.device_frames = n2;
  c.device_per_frame = static_cast<double>(c.device_allocs) / n2;
  c.ok = true;
  return c;
}

void print(const char* backend, const Count& c, bool json, bool first) {
  if (json) {
    std::printf("%s\n  \"%s\": ", first ? "" : ",", backend);
    if (!c.ok) {
      std::printf("{\"skipped\": \"%s\"}", c.error.c_str());
      return;
    }
    std::printf(
        "{\"engine_allocs_per_frame\": %.4f, \"engine_frames\": [%llu, %llu], "
        "\"engine_allocs\": [%llu, %llu], \"device_allocs_per_frame\": %.4f, "
        "\"device_frames\": %llu, \"device_allocs\": %llu}",
        c.engine_per_frame, static_cast<unsigned long long>(c.engine_n1),
        static_cast<unsigned long long>(c.engine_n2), static_cast<unsigned long long>(c.allocs_n1),
        static_cast<unsigned long long>(c.allocs_n2), c.device_per_frame,
        static_cast<unsigned long long>(c.device_frames),
        static_cast<unsigned long long>(c.device_allocs));
    return;
  }
  if (!c.ok) {
    std::printf("%-7s skipped: %s\n", backend, c.error.c_str());
    return;
  }
  std::printf(
      "%-7s engine: %.4f allocations/frame (%llu frames: %llu, %llu frames: %llu)   "
      "device loop: %.4f allocations/frame (%llu over %llu frames)\n",
      backend, c.engine_per_frame, static_cast<unsigned long long>(c.engine_n1),
      static_cast<unsigned long long>(c.allocs_n1), static_cast<unsigned long long>(c.engine_n2),
      static_cast<unsigned long long>(c.allocs_n2), c.device_per_frame,
      static_cast<unsigned long long>(c.device_allocs),
      static_cast<unsigned long long>(c.device_frames));
}

Count run_sim(uint32_t frames) {
  SimDesc sd = sim_latency_desc();
  sd.time = SimTime::virtual_time;
  auto dev = std::make_shared<SimDevice>(sd);
  auto mapper = make_function_mapper(
      [d = dev.get()](uint64_t ticks) -> std::optional<MappedTime> {
        return MappedTime{d->host_at(ticks), 0};
      },
      "sim ground truth");
  return measure(*dev, *mapper, &dev->time(), frames);
}

#ifdef LATLAB_HAVE_VULKAN
Count run_vulkan(uint32_t frames) {
  auto dev = VulkanLatencyDevice::create({});
  if (!dev) return Count{false, dev.error().message};
  auto pair = (*dev)->sample_calibration();
  if (!pair) return Count{false, "no calibration pair: " + pair.error().message};
  const TickFormat ticks = (*dev)->info().ticks;
  const CalibrationPair p = *pair;
  auto mapper = make_function_mapper(
      [p, ticks](uint64_t t) -> std::optional<MappedTime> {
        const int64_t d = ticks.signed_delta(p.device_ticks, t);
        const int64_t ns = d >= 0 ? ticks.ticks_to_ns(static_cast<uint64_t>(d))
                                  : -ticks.ticks_to_ns(static_cast<uint64_t>(-d));
        return MappedTime{p.host_ns + ns, p.max_deviation_ns};
      },
      "one calibration pair");
  return measure(**dev, *mapper, nullptr, frames);
}
#endif

}  // namespace
}  // namespace latlab

int main(int argc, char** argv) {
  uint32_t frames = 1000;
  std::string backend = "all";
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--frames" && i + 1 < argc) {
      frames = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    } else if (a == "--backend" && i + 1 < argc) {
      backend = argv[++i];
    } else if (a == "--json") {
      json = true;
    } else {
      std::fprintf(stderr,
                   "usage: alloc_per_frame [--frames N] [--backend sim|vulkan|all] [--json]\n");
      return 2;
    }
  }
  if (frames < 8) frames = 8;
  bool failed = false;
  bool first = true;
  if (json) std::printf("{");
  if (backend == "sim" || backend == "all") {
    const latlab::Count c = latlab::run_sim(frames);
    latlab::print("sim", c, json, first);
    first = false;
    failed |= !c.ok;
  }
  if (backend == "vulkan" || backend == "all") {
#ifdef LATLAB_HAVE_VULKAN
    const latlab::Count c = latlab::run_vulkan(frames);
#else
    const latlab::Count c{false, "built without Vulkan"};
#endif
    latlab::print("vulkan", c, json, first);
    first = false;
  }
  if (json) std::printf("\n}\n");
  return failed ? 1 : 0;
}
