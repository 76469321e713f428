// CPU cost of the GPU profiler's own bookkeeping (sim writer, no-op writes)
// and of collecting one frame of 2048 queries.
//
// Units (all timed with the thread's CPU clock as manual time, since the
// machines are shared): BM_ProfilerZone(Shared): one iteration = one frame of 4096
// zones, ns_per_zone = that time / zones; BM_ProfilerZoneThreads: 1, 3 or 8
// threads record 4096 zones each into one frame at once, ns_per_zone = their
// CPU time summed / zones; BM_ProfilerCollectFrame2048: one
// iteration = one collect() of a frame of 2048 queries. Warm-up: the first frames
// (name table, buffers) run before timing starts. Run with repetitions to get
// a distribution, e.g.
//   build/release/bench/latlab_bench --benchmark_filter=Profiler
//     --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
// BM_VulkanZoneVsRawRatio: the same frame of zones recorded into a real
// command buffer (LATLAB_BENCH_VULKAN_DEVICE, else the default Vulkan device:
// lavapipe on CI; no validation layer), and the two raw vkCmdWriteTimestamp
// calls alone, alternating in one benchmark: zone_ns, raw_ns and their ratio.
// BM_VulkanAttachZoneVsRawRatio: the same on a device the benchmark makes
// itself with latlab attached (a zone on the attach path should cost what it
// costs on latlab's own context).
// Targets: <= 15 ns per zone of bookkeeping (one thread; 3 threads at once
// <= 20 ns, 8 threads <= 25 ns); a zone with its two
// timestamp writes <= 1.25x the two raw writes; collecting a frame of 2048
// queries <= 20 us with no heap allocation per frame in steady state.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <ctime>
#include <thread>
#include <vector>

// The macros are tested whatever LATLAB_ENABLE_PROFILER the build chose (the
// library is the same either way).
#undef LATLAB_ENABLE_PROFILER
#define LATLAB_ENABLE_PROFILER 1
#include "latlab/bench/sim_timestamp_slots.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_vulkan.hpp"
// A device made as a program makes its own (shared with the attach tests).
#include "../tests/vulkan/program_device.hpp"

namespace latlab {
namespace {

constexpr uint32_t kZonesPerFrame = 4096;

// Typed by the sim's stream, as an API's profiler is (TypedGpuProfiler): the
// zones below take the typed path, which must cost what the untyped one does.
using SimGpuProfiler = TypedGpuProfiler<SimCommandStream*>;

std::unique_ptr<SimGpuProfiler> make_profiler(std::shared_ptr<SimTimestampSlots> writer,
                                              bool cpu_times) {
  auto p = SimGpuProfiler::create(std::move(writer), {.name = "bench",
                                                      .max_zones_per_frame = kZonesPerFrame,
                                                      .frames_in_flight = 1,
                                                      .cpu_zone_times = cpu_times});
  return std::move(p).value();
}

// Thread CPU time: the machines these run on are shared, so wall time
// would count other processes; CPU time counts only this thread's work.
int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The least of the repetitions: on a shared machine, other work only adds.
double min_of(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

// Closes the full frame (untimed). The null stream records nothing, so the
// frame is retired (its zones become invalid) to free its queries.
void roll_frame(GpuProfiler& prof) {
  const uint64_t closed = prof.current_frame_id();
  prof.next_frame();
  prof.retire_frame(closed);
  prof.collect();
}

// One iteration = one frame of kZonesPerFrame zones, timed by the thread's
// CPU clock (manual time); closing the frame is outside the timed region.
// `depth` zones are nested per group (1 = flat). This thread records and
// closes frames; with `shared`, another thread recorded one zone first (it
// has a lane of its own: this thread's zones should cost the same; before
// lanes, that moved every zone to a locked add on one cursor).
void zone_bench(benchmark::State& state, bool cpu_times, uint32_t depth, bool shared) {
  auto writer = SimTimestampSlots::create({.count = 2 * kZonesPerFrame * 2});
  auto prof = make_profiler(writer, cpu_times);
  if (shared) std::thread([&] { LATLAB_GPU_ZONE(prof, nullptr, "other thread"); }).join();
  for (int i = 0; i < 2; ++i) roll_frame(*prof);  // warm-up
  int64_t timed_ns = 0;
  for (auto _ : state) {
    const int64_t t0 = thread_cpu_ns();
    if (depth == 1) {
      for (uint32_t i = 0; i < kZonesPerFrame; ++i) {
        LATLAB_GPU_ZONE(prof, nullptr, "zone");
      }
    } else {
      for (uint32_t i = 0; i < kZonesPerFrame; i += 4) {
        LATLAB_GPU_ZONE(prof, nullptr, "a");
        LATLAB_GPU_ZONE(prof, nullptr, "b");
        LATLAB_GPU_ZONE(prof, nullptr, "c");
        LATLAB_GPU_ZONE(prof, nullptr, "d");
      }
    }
    const int64_t t1 = thread_cpu_ns();
    state.SetIterationTime(static_cast<double>(t1 - t0) * 1e-9);
    timed_ns += t1 - t0;
    roll_frame(*prof);
  }
  state.counters["ns_per_zone"] =
      static_cast<double>(timed_ns) / (static_cast<double>(state.iterations()) * kZonesPerFrame);
  if (prof->counters().zones_dropped != 0) state.SkipWithError("zones were dropped");
}

void BM_ProfilerZone(benchmark::State& state) {
  zone_bench(state, state.range(0) != 0, static_cast<uint32_t>(state.range(1)), false);
}
BENCHMARK(BM_ProfilerZone)
    ->ArgNames({"cpu_times", "depth"})
    ->Args({0, 1})
    ->Args({0, 4})
    ->Args({1, 1})
    ->UseManualTime()
    ->ComputeStatistics("min", min_of)
    ->Unit(benchmark::kMicrosecond);

void BM_ProfilerZoneShared(benchmark::State& state) {
  zone_bench(state, false, static_cast<uint32_t>(state.range(0)), true);
}
BENCHMARK(BM_ProfilerZoneShared)
    ->ArgName("depth")
    ->Arg(1)
    ->Arg(4)
    ->UseManualTime()
    ->ComputeStatistics("min", min_of)
    ->Unit(benchmark::kMicrosecond);

// Zones recorded by `threads` threads at once into one profiler, each into
// its own stream (flat, no CPU times). One iteration = one frame in which
// every thread records kZonesPerFrame zones; the benchmark's thread also
// closes the frames. Each thread takes its zones from blocks in its own lane
// and claims a block from the frame's cursor, shared by all, once per up to
// 256 zones. The threads start each frame together (helpers spin on a
// generation counter); closing the frame is untimed. On a machine with
// fewer cores than threads they take turns: CPU time still counts only
// each thread's own work, plus what the switches cost it.
// Time = the recording threads' CPU time summed (manual time);
// ns_per_zone = that sum / zones recorded. Warm-up: two frames with every
// thread before timing starts.
void BM_ProfilerZoneThreads(benchmark::State& state) {
  const auto threads = static_cast<uint32_t>(state.range(0));
  // Room for each thread's last block: a frame that fills may leave unused
  // records in other threads' blocks (profiler.hpp).
  const uint32_t zones_per_frame = (kZonesPerFrame + detail::kMaxZoneBlock) * threads;
  auto writer = SimTimestampSlots::create({.count = 2 * zones_per_frame * 2});
  auto prof =
      GpuProfiler::create(
          writer, {.name = "bench", .max_zones_per_frame = zones_per_frame, .frames_in_flight = 1})
          .value();
  auto record = [&prof] {
    for (uint32_t i = 0; i < kZonesPerFrame; ++i) {
      LATLAB_GPU_ZONE(prof, nullptr, "zone");
    }
  };
  std::atomic<uint64_t> go{0};  // frame generation: helpers record once per increment
  std::atomic<uint32_t> done{0};
  std::atomic<int64_t> helper_ns{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> helpers;
  for (uint32_t t = 1; t < threads; ++t) {
    helpers.emplace_back([&] {
      uint64_t seen = 0;
      for (;;) {
        uint64_t g = go.load(std::memory_order_acquire);
        while (g == seen && !stop.load(std::memory_order_relaxed)) {
          std::this_thread::yield();
          g = go.load(std::memory_order_acquire);
        }
        if (g == seen) return;
        seen = g;
        const int64_t t0 = thread_cpu_ns();
        record();
        helper_ns.fetch_add(thread_cpu_ns() - t0, std::memory_order_relaxed);
        done.fetch_add(1, std::memory_order_release);
      }
    });
  }
  // One frame: every thread records; returns their CPU time summed.
  auto frame = [&] {
    helper_ns.store(0, std::memory_order_relaxed);
    done.store(0, std::memory_order_relaxed);
    go.fetch_add(1, std::memory_order_release);
    const int64_t t0 = thread_cpu_ns();
    record();
    const int64_t own = thread_cpu_ns() - t0;
    while (done.load(std::memory_order_acquire) != threads - 1) std::this_thread::yield();
    return own + helper_ns.load(std::memory_order_relaxed);
  };
  for (int i = 0; i < 2; ++i) {  // warm-up
    frame();
    roll_frame(*prof);
  }
  int64_t timed_ns = 0;
  for (auto _ : state) {
    const int64_t ns = frame();
    state.SetIterationTime(static_cast<double>(ns) * 1e-9);
    timed_ns += ns;
    roll_frame(*prof);
  }
  stop.store(true, std::memory_order_relaxed);
  for (auto& h : helpers) h.join();
  state.counters["ns_per_zone"] = static_cast<double>(timed_ns) /
                                 (static_cast<double>(state.iterations()) * kZonesPerFrame * threads);
  if (prof->counters().zones_dropped != 0) state.SkipWithError("zones were dropped");
}
BENCHMARK(BM_ProfilerZoneThreads)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(3)
    ->Arg(8)
    ->UseManualTime()
    ->ComputeStatistics("min", min_of)
    ->Unit(benchmark::kMicrosecond);

// Collecting one frame of 1024 zones = 2048 queries: availability check,
// statuses, host mapping (a linear fake clock), stat table. With sink:1 a
// frame sink is set, so every frame is also built as a full ProfilerFrame
// (tree, durations, host times), as a trace writer needs; without one that
// happens only when frame()/latest_frame() is called. Recording and the
// device's execution are outside the timed region.
void BM_ProfilerCollectFrame2048(benchmark::State& state) {
  constexpr uint32_t kZones = 1024;
  auto writer = SimTimestampSlots::create({.count = 2 * kZones * 4});
  auto prof = GpuProfiler::create(writer, {.name = "bench", .max_zones_per_frame = kZones}).value();
  prof->set_clock_mapper([](uint64_t t) {
    return std::optional<MappedTime>(MappedTime{static_cast<int64_t>(t) + 1'000'000, 50});
  });
  int64_t sunk_zones = 0;
  if (state.range(0) != 0) {
    prof->set_frame_sink([&](const ProfilerFrame& f) {
      sunk_zones += static_cast<int64_t>(f.zones.size());
      benchmark::DoNotOptimize(f.zones.data());
    });
  }
  SimCommandStream cmd;
  cmd.writes.reserve(2 * kZones);
  uint64_t tick = 0;
  auto record = [&] {
    for (uint32_t i = 0; i < kZones / 4; ++i) {
      LATLAB_GPU_ZONE(prof, &cmd, "pass");
      LATLAB_GPU_ZONE(prof, &cmd, "draw");
      { LATLAB_GPU_ZONE(prof, &cmd, "dispatch"); }
      LATLAB_GPU_ZONE(prof, &cmd, "copy");
    }
    prof->next_frame();  // pending: not executed yet, so not collected here
    tick = writer->execute(cmd, tick, 100);
  };
  for (int i = 0; i < 8; ++i) {  // warm-up: name table, buffers
    record();
    prof->collect();
  }
  const uint64_t allocs_warm = prof->counters().heap_allocations;
  uint64_t collected = 0;
  for (auto _ : state) {
    record();
    const int64_t t0 = thread_cpu_ns();
    collected += prof->collect();
    state.SetIterationTime(static_cast<double>(thread_cpu_ns() - t0) * 1e-9);
  }
  const ProfilerCounters c = prof->counters();
  if (collected != static_cast<uint64_t>(state.iterations()))
    state.SkipWithError("a frame was not collected");
  if (c.zones_dropped != 0) state.SkipWithError("zones were dropped");
  state.counters["heap_allocs_per_frame"] = static_cast<double>(c.heap_allocations - allocs_warm) /
                                            static_cast<double>(state.iterations());
  state.counters["queries_per_frame"] = 2.0 * kZones;
  if (state.range(0) != 0 && sunk_zones == 0) state.SkipWithError("the sink saw no zones");
}
BENCHMARK(BM_ProfilerCollectFrame2048)
    ->ArgName("sink")
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->ComputeStatistics("min", min_of)
    ->Unit(benchmark::kMicrosecond);

// --- Vulkan ------------------------------------------------------------------

// One context for every Vulkan benchmark; null (with the reason) when there
// is no usable device.
struct VulkanBench {
  std::unique_ptr<VulkanContext> ctx;
  std::string error;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;

  static VulkanBench& get() {
    static VulkanBench b;
    return b;
  }
  VulkanBench() {
    // LATLAB_BENCH_VULKAN_DEVICE: index or name substring; default device otherwise.
    const char* dev = std::getenv("LATLAB_BENCH_VULKAN_DEVICE");
    auto c = VulkanContext::create({.device = dev != nullptr ? dev : ""});
    if (!c) {
      error = c.error().message;
      return;
    }
    ctx = std::move(c.value());
    VkCommandPoolCreateInfo pi{};
    pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pi.queueFamilyIndex = ctx->queue_family();
    VkCommandBufferAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    if (vkCreateCommandPool(ctx->device(), &pi, nullptr, &pool) != VK_SUCCESS) {
      error = "vkCreateCommandPool failed";
      return;
    }
    ai.commandPool = pool;
    if (vkAllocateCommandBuffers(ctx->device(), &ai, &cmd) != VK_SUCCESS)
      error = "vkAllocateCommandBuffers failed";
  }
  ~VulkanBench() {
    if (ctx && pool != VK_NULL_HANDLE) vkDestroyCommandPool(ctx->device(), pool, nullptr);
  }
  // The shared context, or null after marking `state` skipped with the reason.
  static VulkanBench* or_skip(benchmark::State& state) {
    VulkanBench& b = get();
    if (b.ctx && b.cmd != VK_NULL_HANDLE) return &b;
    state.SkipWithError(("no Vulkan device: " + b.error).c_str());
    return nullptr;
  }
  // A fresh recording of `cmd` (never submitted: only the CPU side is timed).
  void begin() const {
    vkResetCommandBuffer(cmd, 0);
    VkCommandBufferBeginInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(cmd, &bi);
  }
  void end() const { vkEndCommandBuffer(cmd); }
};

// The zone-vs-raw benchmarks' shared parts. A pool for kZonesPerFrame raw
// write pairs; VK_NULL_HANDLE when it cannot be made.
VkQueryPool make_raw_query_pool(VkDevice device) {
  VkQueryPoolCreateInfo qi{};
  qi.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
  qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qi.queryCount = 2 * kZonesPerFrame;
  VkQueryPool qp = VK_NULL_HANDLE;
  if (vkCreateQueryPool(device, &qi, nullptr, &qp) != VK_SUCCESS) return VK_NULL_HANDLE;
  return qp;
}

// kZonesPerFrame raw begin/end timestamp pairs into `cmd`; the thread CPU
// time they took.
int64_t time_raw_pairs(VkCommandBuffer cmd, VkQueryPool qp) {
  const int64_t t0 = thread_cpu_ns();
  for (uint32_t i = 0; i < kZonesPerFrame; ++i) {
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp, 2 * i);
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 2 * i + 1);
  }
  return thread_cpu_ns() - t0;
}

// Every iteration times one frame of zones and one of raw pairs, in
// alternating order so both see the same machine and cache state, then rolls
// the frame (untimed); the counters are per zone over the whole run.
template <class TimeZones, class TimeRaw, class Roll>
void run_zone_vs_raw(benchmark::State& state, TimeZones time_zones, TimeRaw time_raw, Roll roll) {
  int64_t zone_ns = 0, raw_ns = 0;
  bool zones_first = true;
  for (auto _ : state) {
    int64_t z = 0, r = 0;
    if (zones_first) {
      z = time_zones();
      r = time_raw();
    } else {
      r = time_raw();
      z = time_zones();
    }
    zones_first = !zones_first;
    zone_ns += z;
    raw_ns += r;
    state.SetIterationTime(static_cast<double>(z + r) * 1e-9);
    roll();
  }
  const double zones = static_cast<double>(state.iterations()) * kZonesPerFrame;
  state.counters["zone_ns"] = static_cast<double>(zone_ns) / zones;
  state.counters["raw_ns"] = static_cast<double>(raw_ns) / zones;
  state.counters["ratio"] =
      raw_ns > 0 ? static_cast<double>(zone_ns) / static_cast<double>(raw_ns) : 0.0;
}

// The target's ratio measured inside one run: every iteration records one
// frame of zones and one frame of the same number of raw write pairs into the
// same command buffer, in alternating order, each timed on its own, so both
// see the same machine and cache state (the frame roll, untimed, runs after
// both). ratio = zone time / raw time over the whole run.
void BM_VulkanZoneVsRawRatio(benchmark::State& state) {
  VulkanBench* vbp = VulkanBench::or_skip(state);
  if (vbp == nullptr) return;
  VulkanBench& vb = *vbp;
  auto w = VulkanTimestampSlots::create(
      *vb.ctx, {.count = 2 * kZonesPerFrame * 2, .require_host_reset = true});
  const VkQueryPool qp = make_raw_query_pool(vb.ctx->device());
  if (!w || qp == VK_NULL_HANDLE) {
    state.SkipWithError("timestamp writer or query pool creation failed");
    return;
  }
  auto prof = VulkanGpuProfiler::create(
                  w.value(), {.max_zones_per_frame = kZonesPerFrame, .frames_in_flight = 1})
                  .value();
  VkCommandBuffer cmd = vb.cmd;
  auto time_zones = [&] {
    vb.begin();
    const int64_t t0 = thread_cpu_ns();
    for (uint32_t i = 0; i < kZonesPerFrame; ++i) {
      LATLAB_GPU_ZONE(prof, cmd, "zone");
    }
    const int64_t t = thread_cpu_ns() - t0;
    vb.end();
    return t;
  };
  auto time_raw = [&] {
    vb.begin();
    const int64_t t = time_raw_pairs(cmd, qp);
    vb.end();
    return t;
  };
  run_zone_vs_raw(state, time_zones, time_raw, [&] { roll_frame(*prof); });
  vkDestroyQueryPool(vb.ctx->device(), qp, nullptr);
  if (prof->counters().zones_dropped != 0) state.SkipWithError("zones were dropped");
}
BENCHMARK(BM_VulkanZoneVsRawRatio)->UseManualTime()->Unit(benchmark::kMicrosecond);

// The same ratio on the attach path: a device the benchmark makes itself,
// as a program would (no validation), latlab attached to it
// (VulkanAttachment, vulkan::Gpu). host_reset 1: the program enabled host
// query reset, so the zones are what BM_VulkanZoneVsRawRatio records on
// latlab's own context; 0: it did not, and each frame's resets are recorded
// by frame(cmd)'s record_pending_resets before the timed zones (untimed, as
// the frame roll is), after which zones take the same path. The raw writes
// are the same loader calls as there, so the two benchmarks' ratios compare.
void BM_VulkanAttachZoneVsRawRatio(benchmark::State& state) {
  const bool host_reset = state.range(0) != 0;
  const char* dev = std::getenv("LATLAB_BENCH_VULKAN_DEVICE");
  std::string error;
  auto program = test::ProgramDevice::create(
      {.device = dev != nullptr ? dev : "", .validation = false, .host_query_reset = host_reset},
      error);
  if (!program) {
    state.SkipWithError(("no Vulkan device: " + error).c_str());
    return;
  }
  if (host_reset && !program->host_query_reset_enabled) {
    state.SkipWithError("the device has no host query reset");
    return;
  }
  auto attached = VulkanAttachment::create(program->attach_desc());
  if (!attached) {
    state.SkipWithError(attached.error().message.c_str());
    return;
  }
  auto gpu = vulkan::Gpu::attach(**attached,
                                    {.max_zones_per_frame = kZonesPerFrame, .frames_in_flight = 1});
  const VkQueryPool qp = make_raw_query_pool(program->device);
  if (!gpu || qp == VK_NULL_HANDLE) {
    state.SkipWithError("profiler or query pool creation failed");
    return;
  }
  VulkanGpuProfiler& prof = (*gpu)->profiler();
  // A pool made as VulkanBench makes its own, so that only the attach differs.
  VkCommandPoolCreateInfo pi{};
  pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = program->family;
  VkCommandPool pool = VK_NULL_HANDLE;
  vkCreateCommandPool(program->device, &pi, nullptr, &pool);
  VkCommandBufferAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ai.commandPool = pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  vkAllocateCommandBuffers(program->device, &ai, &cmd);
  const auto begin = [cmd] {
    vkResetCommandBuffer(cmd, 0);
    VkCommandBufferBeginInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(cmd, &bi);
  };
  auto time_zones = [&] {
    begin();
    (*gpu)->slots().record_pending_resets(cmd);  // frame(cmd)'s part, untimed
    const int64_t t0 = thread_cpu_ns();
    for (uint32_t i = 0; i < kZonesPerFrame; ++i) {
      LATLAB_GPU_ZONE(prof, cmd, "zone");
    }
    const int64_t t = thread_cpu_ns() - t0;
    vkEndCommandBuffer(cmd);
    return t;
  };
  auto time_raw = [&] {
    begin();
    const int64_t t = time_raw_pairs(cmd, qp);
    vkEndCommandBuffer(cmd);
    return t;
  };
  run_zone_vs_raw(state, time_zones, time_raw, [&] { roll_frame(prof); });
  vkDestroyQueryPool(program->device, qp, nullptr);
  vkDestroyCommandPool(program->device, pool, nullptr);
  if (prof.counters().zones_dropped != 0) state.SkipWithError("zones were dropped");
}
BENCHMARK(BM_VulkanAttachZoneVsRawRatio)
    ->ArgName("host_reset")
    ->Arg(1)
    ->Arg(0)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// Collecting a frame of 1024 zones (2048 queries; and of 4, for the fixed
// cost of a driver call) written by the device:
// vkGetQueryPoolResults with availability, the tree, the host mapping and the
// stat table. Recording, submitting and the fence wait are untimed.
void BM_VulkanCollectFrame(benchmark::State& state) {
  const auto kZones = static_cast<uint32_t>(state.range(0));
  VulkanBench* vbp = VulkanBench::or_skip(state);
  if (vbp == nullptr) return;
  VulkanBench& vb = *vbp;
  auto w =
      VulkanTimestampSlots::create(*vb.ctx, {.count = 2 * kZones * 4, .require_host_reset = true});
  if (!w) {
    state.SkipWithError(w.error().message.c_str());
    return;
  }
  auto prof = VulkanGpuProfiler::create(w.value(), {.max_zones_per_frame = kZones}).value();
  prof->set_clock_mapper([](uint64_t t) {
    return std::optional<MappedTime>(MappedTime{static_cast<int64_t>(t), 50});
  });
  VkFenceCreateInfo fi{};
  fi.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  VkFence fence = VK_NULL_HANDLE;
  vkCreateFence(vb.ctx->device(), &fi, nullptr, &fence);
  VkCommandBuffer cmd = vb.cmd;
  bool failed = false;
  auto record_and_run = [&] {
    vb.begin();
    for (uint32_t i = 0; i < kZones / 4; ++i) {
      LATLAB_GPU_ZONE(prof, cmd, "pass");
      LATLAB_GPU_ZONE(prof, cmd, "draw");
      { LATLAB_GPU_ZONE(prof, cmd, "dispatch"); }
      LATLAB_GPU_ZONE(prof, cmd, "copy");
    }
    vb.end();
    vkResetFences(vb.ctx->device(), 1, &fence);
    failed |= !vb.ctx->submit(cmd, fence).ok();
    vkWaitForFences(vb.ctx->device(), 1, &fence, VK_TRUE, UINT64_MAX);
    prof->next_frame();
  };
  // In the timed loop a frame is closed before it is submitted (so
  // next_frame cannot collect it), then run, then collected by the timed
  // collect().
  uint64_t collected = 0;
  for (int i = 0; i < 4; ++i) record_and_run();  // warm-up
  const uint64_t allocs_warm = prof->counters().heap_allocations;
  const uint64_t frames_before = prof->counters().frames_collected;
  for (auto _ : state) {
    vb.begin();
    for (uint32_t i = 0; i < kZones / 4; ++i) {
      LATLAB_GPU_ZONE(prof, cmd, "pass");
      LATLAB_GPU_ZONE(prof, cmd, "draw");
      { LATLAB_GPU_ZONE(prof, cmd, "dispatch"); }
      LATLAB_GPU_ZONE(prof, cmd, "copy");
    }
    vb.end();
    vkResetFences(vb.ctx->device(), 1, &fence);
    prof->next_frame();  // closed before the device ran it: pending, not collected
    failed |= !vb.ctx->submit(cmd, fence).ok();
    vkWaitForFences(vb.ctx->device(), 1, &fence, VK_TRUE, UINT64_MAX);
    const int64_t t0 = thread_cpu_ns();
    collected += prof->collect();
    state.SetIterationTime(static_cast<double>(thread_cpu_ns() - t0) * 1e-9);
  }
  vkDestroyFence(vb.ctx->device(), fence, nullptr);
  const ProfilerCounters c = prof->counters();
  if (failed) state.SkipWithError("submit failed");
  if (collected != static_cast<uint64_t>(state.iterations()) ||
      c.frames_collected - frames_before != static_cast<uint64_t>(state.iterations())) {
    state.SkipWithError("a frame was not collected by the timed collect()");
  }
  state.counters["heap_allocs_per_frame"] = static_cast<double>(c.heap_allocations - allocs_warm) /
                                            static_cast<double>(state.iterations());
}
// A fixed iteration count: each iteration also submits and waits for a
// frame (untimed), which on lavapipe takes far longer than the collect, so
// a minimum manual time would run for minutes.
BENCHMARK(BM_VulkanCollectFrame)
    ->ArgName("zones")
    ->Arg(4)
    ->Arg(1024)
    ->Iterations(300)
    ->UseManualTime()
    ->ComputeStatistics("min", min_of)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace latlab
