// A latency result document from a lockstep sim run on virtual time, with
// scripted per-frame noise: for the reader, store and comparison tests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "bench/lockstep.hpp"
#include "latlab/bench/latency_report.hpp"
#include "latlab/bench/per_frame.hpp"
#include "latlab/bench/sim.hpp"
#include "report/result_json.hpp"

namespace latlab::testing {

struct SimRunSpec {
  uint64_t noise_seed = 1;   // per-frame noise of every scripted delay
  int64_t extra_gpu_ns = 0;  // added to every frame's GPU duration
  uint32_t frames = 200;
  uint32_t blocks = 10;
  uint64_t schedule_seed = 1;
  // Multiplies the host-timed delays (CPU cost, consumer wake): an effect
  // tied to one process (its CPU, the machine's load while it ran).
  double host_scale = 1.0;
  // Every `outlier_every`-th frame (0: none) takes `outlier_ns` more GPU time.
  uint32_t outlier_every = 0;
  int64_t outlier_ns = 0;
};

inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Uniform noise in [0, span_ns) for frame f of stream `stream`.
inline int64_t noise_ns(uint64_t seed, uint64_t stream, uint64_t f, int64_t span_ns) {
  return static_cast<int64_t>(mix64(seed * 1000003 + stream * 7919 + f) %
                              static_cast<uint64_t>(span_ns));
}

// The run of `spec` and its result document as text.
inline std::string sim_result_doc(const SimRunSpec& spec, LatencyRun* keep = nullptr) {
  SimDesc dd;
  dd.time = SimTime::virtual_time;
  dd.virtual_start_ns = 1'000'000'000;
  const uint64_t seed = spec.noise_seed;
  const int64_t extra = spec.extra_gpu_ns;
  const uint32_t every = spec.outlier_every;
  const int64_t outlier = spec.outlier_ns;
  dd.script = [seed, extra, every, outlier](uint64_t f) {
    SimFrameScript s;
    s.queue_delay_ns = 20'000 + noise_ns(seed, 1, f, 20'000);
    s.gpu_duration_ns = 40'000 + extra + noise_ns(seed, 2, f, 20'000) +
                        (every != 0 && f % every == 0 ? outlier : 0);
    s.fence_wake_delay_ns = 5'000 + noise_ns(seed, 3, f, 10'000);
    return s;
  };
  auto dev = std::make_unique<SimDevice>(dd);
  SimDevice* raw = dev.get();
  auto mapper = make_function_mapper(
      [raw](uint64_t t) {
        return std::optional<MappedTime>(MappedTime{raw->host_at(t), 5});
      },
      "sim truth");
  LockstepScript script;
  const double k = spec.host_scale;
  auto scaled = [k](int64_t ns) { return static_cast<int64_t>(static_cast<double>(ns) * k); };
  script.cpu_cost_ns = [seed, scaled](uint64_t f) {
    return scaled(20'000 + noise_ns(seed, 4, f, 4'000));
  };
  script.consumer_wake_delay_ns = [seed, scaled](uint64_t f) {
    return scaled(30'000 + noise_ns(seed, 5, f, 30'000));
  };
  LatencyRunEnv env;
  env.device = dev.get();
  env.mapper = mapper.get();
  env.time = &dev->time();
  env.lockstep = &script;
  LatencyRunDesc d;
  d.frames = spec.frames;
  d.blocks = spec.blocks;
  d.warmup_frames = 5;
  d.schedule.seed = spec.schedule_seed;
  Result<LatencyRun> r = run_latency(d, env);
  if (!r) return "";
  RunMeta m;
  m.backend = "sim";
  m.command_line = "latlab run --backend sim (test)";
  m.created_utc = utc_now_iso8601();
  m.machine = collect_machine_info();
  std::string doc = latency_run_to_json(r.value(), m).dump(2) + "\n";
  if (keep != nullptr) *keep = std::move(r.value());
  return doc;
}

// The run of `spec` as the typed result `latlab run --per-frame` gives.
inline RunResult sim_run_result(const SimRunSpec& spec) {
  RunResult r;
  r.latency.emplace();
  if (sim_result_doc(spec, &*r.latency).empty()) return RunResult{};
  r.meta.backend = "sim";
  r.meta.command_line = "latlab run --backend sim (test)";
  r.meta.created_utc = utc_now_iso8601();
  r.meta.machine = collect_machine_info();
  r.device = r.latency->device;
  r.per_frame = per_frame_of(*r.latency);
  return r;
}

}  // namespace latlab::testing
