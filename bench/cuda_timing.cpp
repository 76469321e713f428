// cuda_timing: the successor of cuda_vs_events. Times the same kernels four
// ways on a real GPU and compares each with CUPTI's kernel records (the GPU's
// own start/end, CuptiKernelObserver), then measures what each way adds to
// the GPU's work.
//
//  [1] cost: GPU time added per zone edge, by way. Batches of --batch reps
//      are queued behind a gate (CudaStreamGate) so the GPU runs them back to
//      back; a batch's time is cudaEventElapsedTime around it, divided by the
//      reps. Per round, a bare batch and one batch per way run one after
//      another; added per edge = (way - bare) / 2, one sample per round.
//      Ways: tiny (a stamp kernel per edge, no event: what the latency device
//      does), tiny+events (the pool's default: a stamp kernel and a
//      cudaEventRecord per edge), fused (CudaFusedStamps: no extra launch),
//      events (a cudaEventRecord per edge, no stamp), cupti (the bare batch
//      with the CUPTI observer on; per kernel, not per edge).
//  [2] |latlab - CUPTI|: per kernel kind (spin 50 us .. 5 ms, the workload
//      1024x1024 at complexity 64, 512, 4096), --reps reps, each rep timing
//      one kernel with each way (tiny stamps with their events, fused,
//      events alone) and CUPTI recording all three kernels. Differences are
//      duration minus CUPTI's duration of the same kernel. Placement: the
//      fused begin/end mapped onto the host clock between two calibration
//      pairs (bracketed, the backend's CudaCalibrationSampler) minus CUPTI's
//      start/end (CUPTI's own conversion onto CLOCK_MONOTONIC): how far the
//      two GPU->host mappings are apart, beside the bracket's bound.
//  [3] %globaltimer update step and the calibration bracket bound.
//  Targets are printed last with the measured figure next to each.
//
// Usage: cuda_timing [--reps N (200)] [--device ORDINAL (0)] [--batch N (64)]
//                    [--rounds N (30)]
// Every distribution is over the counted reps after 10 warm-up reps.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "latlab/bench/cuda_rig.hpp"
#include "latlab/cuda.hpp"
#include "latlab/cupti.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/stats.hpp"

namespace {

using latlab::CalibrationPair;
constexpr int kWarmup = 10;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "cuda_timing: %s\n", what.c_str());
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

latlab::Distribution print_dist(const std::string& label, std::vector<double> v, const char* unit,
                                uint64_t missing = 0) {
  const latlab::Distribution d = latlab::summarize_in_place(v, missing);
  if (d.empty()) {
    std::printf("  %-40s n=0 missing=%llu\n", label.c_str(),
                static_cast<unsigned long long>(d.missing));
    return d;
  }
  std::printf(
      "  %-40s n=%-4llu miss=%-3llu mean %9.3f min %9.3f p50 %9.3f p90 %9.3f p99 %9.3f max %9.3f "
      "%s\n",
      label.c_str(), static_cast<unsigned long long>(d.count),
      static_cast<unsigned long long>(d.missing), d.mean, d.min, d.p50, d.p90, d.p99, d.max, unit);
  return d;
}

std::vector<double> abs_of(std::vector<double> v) {
  for (auto& x : v) x = std::abs(x);
  return v;
}

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

struct Kind {
  std::string name;
  int64_t spin_ns = 0;      // > 0: the spin kernel
  uint32_t complexity = 0;  // else: one workload pass over 1024x1024
};

// Everything the runs share.
struct Bench {
  int device = 0;
  cudaStream_t stream = nullptr;
  std::shared_ptr<latlab::CudaTimestampSlots> slots;       // stamps + events (pool default)
  std::shared_ptr<latlab::CudaTimestampSlots> bare_slots;  // stamps only (latency device's way)
  std::unique_ptr<latlab::CudaFusedStamps> fused;
  std::unique_ptr<latlab::CudaStreamGate> gate;
  std::unique_ptr<latlab::CudaCalibrationSampler> sampler;
  float* data = nullptr;
  latlab::FrameWorkload base{.passes = 1, .complexity = 1, .width = 1024, .height = 1024};

  void kernel(const Kind& k) {
    if (k.spin_ns > 0) {
      check(latlab::cuda_launch_spin(stream, k.spin_ns), "spin");
    } else {
      latlab::FrameWorkload w = base;
      w.complexity = k.complexity;
      check(latlab::cuda_launch_workload(stream, w, data), "workload");
    }
  }
  void fused_kernel(const Kind& k, uint32_t slot) {
    if (k.spin_ns > 0) {
      check(fused->launch_spin(stream, k.spin_ns, slot), "fused spin");
    } else {
      latlab::FrameWorkload w = base;
      w.complexity = k.complexity;
      check(fused->launch_workload(stream, w, data, slot), "fused workload");
    }
  }
};

struct SpanReading {
  bool ok = false;
  uint64_t begin = 0;
  uint64_t end = 0;
};
SpanReading read_pair(latlab::CudaTimestampSlots& slots, uint32_t first) {
  latlab::SlotReading r[2];
  slots.read(first, r);
  SpanReading s;
  s.ok = r[0].available && r[1].available && r[0].flags == 0 && r[1].flags == 0;
  s.begin = r[0].ticks;
  s.end = r[1].ticks;
  return s;
}

// [1] Added GPU time per zone edge.
void run_cost(Bench& b, int batch, int rounds, bool with_cupti_rows,
              std::map<std::string, double>& summary) {
  const Kind k{"workload 1024^2 c=64", 0, 64};
  cudaEvent_t ev0 = nullptr;
  cudaEvent_t ev1 = nullptr;
  cudaEvent_t ea = nullptr;
  cudaEvent_t eb = nullptr;
  check_cuda(cudaEventCreate(&ev0), "cudaEventCreate");
  check_cuda(cudaEventCreate(&ev1), "cudaEventCreate");
  check_cuda(cudaEventCreate(&ea), "cudaEventCreate");
  check_cuda(cudaEventCreate(&eb), "cudaEventCreate");
  // One batch: `batch` reps of `rep`, queued behind the gate; ns per rep.
  auto timed_batch = [&](const std::function<void(int)>& rep) {
    check(b.gate->hold(b.stream), "gate hold");
    check_cuda(cudaEventRecord(ev0, b.stream), "cudaEventRecord");
    for (int i = 0; i < batch; ++i) rep(i);
    check_cuda(cudaEventRecord(ev1, b.stream), "cudaEventRecord");
    b.gate->open();
    check_cuda(cudaStreamSynchronize(b.stream), "cudaStreamSynchronize");
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, ev0, ev1), "cudaEventElapsedTime");
    return static_cast<double>(ms) * 1e6 / batch;
  };
  auto reset_all = [&](latlab::CudaTimestampSlots& s) { s.reset(0, s.slot_count(), true); };
  const std::function<void(int)> bare = [&](int) { b.kernel(k); };
  const std::function<void(int)> tiny = [&](int i) {
    const auto slot = static_cast<uint32_t>(2 * i);
    check(b.bare_slots->write_timestamp(b.stream, slot), "stamp");
    b.kernel(k);
    check(b.bare_slots->write_timestamp(b.stream, slot + 1), "stamp");
  };
  const std::function<void(int)> tiny_events = [&](int i) {
    const auto slot = static_cast<uint32_t>(2 * i);
    check(b.slots->write_timestamp(b.stream, slot), "stamp");
    b.kernel(k);
    check(b.slots->write_timestamp(b.stream, slot + 1), "stamp");
  };
  const std::function<void(int)> fused = [&](int i) {
    b.fused_kernel(k, static_cast<uint32_t>(2 * i));
  };
  const std::function<void(int)> events = [&](int) {
    check_cuda(cudaEventRecord(ea, b.stream), "cudaEventRecord");
    b.kernel(k);
    check_cuda(cudaEventRecord(eb, b.stream), "cudaEventRecord");
  };
  struct Way {
    const char* name;
    const std::function<void(int)>* rep;
    std::vector<double> per_edge_ns;
  };
  std::vector<Way> ways = {{"tiny stamp kernels", &tiny, {}},
                           {"tiny stamp kernels + events", &tiny_events, {}},
                           {"fused stamps", &fused, {}},
                           {"events", &events, {}}};
  std::vector<double> bare_ns;
  std::vector<double> cupti_ns;
  for (int r = 0; r < rounds + 2; ++r) {  // 2 warm-up rounds
    reset_all(*b.slots);
    reset_all(*b.bare_slots);
    const double t_bare = timed_batch(bare);
    if (r >= 2) bare_ns.push_back(t_bare);
    for (auto& w : ways) {
      const double t = timed_batch(*w.rep);
      if (r >= 2) w.per_edge_ns.push_back((t - t_bare) / 2.0);
    }
    if (with_cupti_rows) {
      auto observer = latlab::CuptiKernelObserver::create();
      if (!observer) {
        std::printf("  cupti: unavailable: %s\n", observer.error().message.c_str());
        with_cupti_rows = false;
      } else {
        const double t = timed_batch(bare);
        if (r >= 2) cupti_ns.push_back(t - t_bare);
      }
    }
  }
  std::printf(
      "[1] GPU time added per zone edge (%s; %d rounds of %d-rep batches behind a gate; per round "
      "(way - bare) / 2)\n",
      k.name.c_str(), rounds, batch);
  print_dist("bare kernel, per rep", bare_ns, "ns");
  for (auto& w : ways) {
    const auto d = print_dist(std::string(w.name) + ", added per edge", w.per_edge_ns, "ns");
    summary[std::string("cost ") + w.name] = d.p50;
  }
  if (!cupti_ns.empty()) {
    const auto d = print_dist("cupti observer on, added per kernel", cupti_ns, "ns");
    summary["cost cupti per kernel"] = d.p50;
  }
  std::printf("\n");
  for (auto e : {ev0, ev1, ea, eb}) (void)cudaEventDestroy(e);
}

// [2] Each way vs CUPTI on the same kernels.
void run_compare(Bench& b, latlab::CuptiKernelObserver& cupti, int reps,
                 std::map<std::string, double>& summary) {
  const std::vector<Kind> kinds = {
      {"spin 50 us", 50'000, 0},          {"spin 200 us", 200'000, 0},
      {"spin 1 ms", 1'000'000, 0},        {"spin 5 ms", 5'000'000, 0},
      {"workload 1024^2 c=64", 0, 64},    {"workload 1024^2 c=512", 0, 512},
      {"workload 1024^2 c=4096", 0, 4096}};
  const uint32_t stream_id = check(cupti.stream_id(b.stream), "CUPTI stream id");
  cudaEvent_t ea = nullptr;
  cudaEvent_t eb = nullptr;
  check_cuda(cudaEventCreate(&ea), "cudaEventCreate");
  check_cuda(cudaEventCreate(&eb), "cudaEventCreate");
  std::vector<double> all_tiny;
  std::vector<double> all_fused;
  std::vector<double> all_events;
  std::vector<double> all_bound;
  std::printf(
      "[2] duration minus CUPTI's duration of the same kernel (ns); placement: fused stamp mapped "
      "by bracketed calibration minus CUPTI's time (ns)\n");
  for (const auto& k : kinds) {
    (void)check(cupti.take(), "CUPTI take");  // drop what came before
    struct Rep {
      SpanReading tiny;
      latlab::CudaTimestampSlots::EventSpan tiny_events;
      SpanReading fused;
      double events_ms = -1;
      CalibrationPair before;
      CalibrationPair after;
    };
    std::vector<Rep> got;
    for (int i = 0; i < kWarmup + reps; ++i) {
      b.slots->reset(0, 4, true);
      Rep rep;
      rep.before = check(b.sampler->sample(), "calibration");
      check(b.slots->write_timestamp(b.stream, 0), "stamp");
      b.kernel(k);
      check(b.slots->write_timestamp(b.stream, 1), "stamp");
      b.fused_kernel(k, 2);
      check_cuda(cudaEventRecord(ea, b.stream), "cudaEventRecord");
      b.kernel(k);
      check_cuda(cudaEventRecord(eb, b.stream), "cudaEventRecord");
      check_cuda(cudaStreamSynchronize(b.stream), "cudaStreamSynchronize");
      rep.after = check(b.sampler->sample(), "calibration");
      rep.tiny = read_pair(*b.slots, 0);
      rep.tiny_events = b.slots->event_elapsed(0);
      rep.fused = read_pair(*b.slots, 2);
      float ms = 0;
      if (cudaEventElapsedTime(&ms, ea, eb) == cudaSuccess) rep.events_ms = ms;
      got.push_back(rep);
    }
    auto records = check(cupti.take(), "CUPTI take");
    std::vector<latlab::CuptiKernelRecord> measured;
    for (auto& r : records) {
      if (r.stream_id != stream_id) continue;
      if (r.name.find("spin_kernel") == std::string::npos &&
          r.name.find("workload_kernel") == std::string::npos)
        continue;  // the stamp kernels
      measured.push_back(std::move(r));
    }
    std::sort(measured.begin(), measured.end(),
              [](const auto& x, const auto& y) { return x.start_ns < y.start_ns; });
    std::printf(" %s\n", k.name.c_str());
    if (measured.size() != 3 * got.size()) {
      std::printf("  CUPTI: %zu kernel records for %zu kernels (dropped %llu): not compared\n",
                  measured.size(), 3 * got.size(),
                  static_cast<unsigned long long>(cupti.dropped()));
      continue;
    }
    std::vector<double> cupti_us;
    std::vector<double> d_tiny;
    std::vector<double> d_tiny_ev;
    std::vector<double> d_fused;
    std::vector<double> d_events;
    std::vector<double> place_begin;
    std::vector<double> place_end;
    std::vector<double> bound;
    uint64_t missing = 0;
    for (size_t i = kWarmup; i < got.size(); ++i) {
      const auto& r = got[i];
      const auto& c_tiny = measured[3 * i];
      const auto& c_fused = measured[3 * i + 1];
      const auto& c_ev = measured[3 * i + 2];
      if (c_fused.name.find("fused_") == std::string::npos ||
          c_tiny.name.find("fused_") != std::string::npos) {
        ++missing;  // the order is not what was launched: do not pair
        continue;
      }
      cupti_us.push_back(static_cast<double>(c_tiny.end_ns - c_tiny.start_ns) / 1e3);
      if (r.tiny.ok)
        d_tiny.push_back(static_cast<double>(r.tiny.end - r.tiny.begin) -
                         static_cast<double>(c_tiny.end_ns - c_tiny.start_ns));
      else
        ++missing;
      if (r.tiny_events.status == latlab::QueryStatus::ok)
        d_tiny_ev.push_back(r.tiny_events.ms * 1e6 -
                            static_cast<double>(c_tiny.end_ns - c_tiny.start_ns));
      if (r.fused.ok) {
        d_fused.push_back(static_cast<double>(r.fused.end - r.fused.begin) -
                          static_cast<double>(c_fused.end_ns - c_fused.start_ns));
        const HostTime hb = map_between(r.before, r.after, r.fused.begin);
        const HostTime he = map_between(r.before, r.after, r.fused.end);
        place_begin.push_back(static_cast<double>(hb.host_ns - c_fused.start_ns));
        place_end.push_back(static_cast<double>(he.host_ns - c_fused.end_ns));
        bound.push_back(static_cast<double>(std::max(hb.error_ns, he.error_ns)));
      }
      if (r.events_ms >= 0)
        d_events.push_back(r.events_ms * 1e6 - static_cast<double>(c_ev.end_ns - c_ev.start_ns));
    }
    print_dist("CUPTI duration", cupti_us, "us", missing);
    print_dist("tiny stamps - CUPTI", d_tiny, "ns");
    print_dist("|tiny stamps - CUPTI|", abs_of(d_tiny), "ns");
    print_dist("tiny stamps' events - CUPTI", d_tiny_ev, "ns");
    print_dist("fused stamps - CUPTI", d_fused, "ns");
    print_dist("|fused stamps - CUPTI|", abs_of(d_fused), "ns");
    print_dist("events - CUPTI", d_events, "ns");
    print_dist("|events - CUPTI|", abs_of(d_events), "ns");
    print_dist("placement: fused begin - CUPTI start", place_begin, "ns");
    print_dist("placement: fused end - CUPTI end", place_end, "ns");
    print_dist("calibration bound (+-)", bound, "ns");
    for (double x : abs_of(d_tiny)) all_tiny.push_back(x);
    for (double x : abs_of(d_fused)) all_fused.push_back(x);
    for (double x : abs_of(d_events)) all_events.push_back(x);
    for (double x : bound) all_bound.push_back(x);
  }
  std::printf(" all kinds\n");
  const auto t = print_dist("|tiny stamps - CUPTI|", all_tiny, "ns");
  const auto f = print_dist("|fused stamps - CUPTI|", all_fused, "ns");
  const auto e = print_dist("|events - CUPTI|", all_events, "ns");
  const auto bd = print_dist("calibration bound (+-)", all_bound, "ns");
  summary["tiny p50"] = t.p50;
  summary["tiny p99"] = t.p99;
  summary["fused p50"] = f.p50;
  summary["fused p99"] = f.p99;
  summary["events p50"] = e.p50;
  summary["events p99"] = e.p99;
  summary["bound p50"] = bd.p50;
  summary["bound p99"] = bd.p99;
  std::printf("\n");
  (void)cudaEventDestroy(ea);
  (void)cudaEventDestroy(eb);
}

void verdict(const char* what, double value_ns, double target_ns) {
  std::printf("  %-58s %9.3f us  target <= %.3f us  %s\n", what, value_ns / 1e3, target_ns / 1e3,
              std::isnan(value_ns) ? "not measured" : (value_ns <= target_ns ? "MET" : "NOT MET"));
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 200;
  int device = 0;
  int batch = 64;
  int rounds = 30;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() { return i + 1 < argc ? std::atoi(argv[++i]) : -1; };
    if (a == "--reps") {
      reps = next();
    } else if (a == "--device") {
      device = next();
    } else if (a == "--batch") {
      batch = next();
    } else if (a == "--rounds") {
      rounds = next();
    } else {
      std::fprintf(stderr,
                   "usage: cuda_timing [--reps N (200)] [--device ORDINAL (0)] [--batch N (64)] "
                   "[--rounds N (30)]\n");
      return 2;
    }
  }
  if (reps < 1 || device < 0 || batch < 1 || batch > 200 || rounds < 1)
    die("bad option: --reps >= 1, --device >= 0, --batch 1..200, --rounds >= 1");

  auto devices = check(latlab::enumerate_cuda_devices(), "enumerate_cuda_devices");
  for (const auto& d : devices) {
    std::printf("device %d: %s, cc %d.%d, %d SMs, driver %s, runtime %s\n", d.index, d.name.c_str(),
                d.cc_major, d.cc_minor, d.sm_count,
                latlab::format_cuda_version(d.driver_version).c_str(),
                latlab::format_cuda_version(d.runtime_version).c_str());
  }
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  Bench b;
  b.device = device;
  check_cuda(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  b.slots = check(latlab::CudaTimestampSlots::create({.count = 512, .device = device}), "slots");
  b.bare_slots = check(
      latlab::CudaTimestampSlots::create({.count = 512, .device = device, .record_events = false}),
      "slots");
  b.fused = check(latlab::CudaFusedStamps::create(b.slots), "fused stamps");
  b.gate = check(latlab::CudaStreamGate::create(device), "gate");
  latlab::CudaCalibrationDesc cal;
  cal.device = device;
  b.sampler = check(latlab::CudaCalibrationSampler::create(cal), "calibration sampler");
  check_cuda(cudaMalloc(&b.data, sizeof(float) * b.base.width * b.base.height), "cudaMalloc");
  std::printf("reps %d after %d warm-up reps; cost: %d rounds x %d reps; host clock %s\n\n", reps,
              kWarmup, rounds, batch, latlab::kHostClockName);

  std::map<std::string, double> s;
  run_cost(b, batch, rounds, true, s);

  std::string cupti_unavailable;
  {
    auto observer = latlab::CuptiKernelObserver::create();
    if (!observer) {
      cupti_unavailable = observer.error().message;
      std::printf("[2] CUPTI unavailable: %s\n\n", cupti_unavailable.c_str());
    } else {
      run_compare(b, **observer, reps, s);
      std::printf("  CUPTI records lost: %llu\n\n",
                  static_cast<unsigned long long>((*observer)->dropped()));
    }
  }

  const auto probe = check(latlab::probe_globaltimer(device, 10'000), "probe_globaltimer");
  std::printf(
      "[3] %%globaltimer update step over %u changes: min %llu ns, median %llu ns, max %llu ns\n\n",
      probe.steps, static_cast<unsigned long long>(probe.min_step_ns),
      static_cast<unsigned long long>(probe.median_step_ns),
      static_cast<unsigned long long>(probe.max_step_ns));

  auto get = [&](const char* key) { return s.count(key) ? s[key] : std::nan(""); };
  std::printf("targets (all kinds pooled, p50 of the cost rounds)\n");
  verdict("|latlab - CUPTI| p50, fused stamps", get("fused p50"), 100);
  verdict("|latlab - CUPTI| p99, fused stamps", get("fused p99"), 1000);
  verdict("|latlab - CUPTI| p50, tiny stamp kernels", get("tiny p50"), 100);
  verdict("|latlab - CUPTI| p99, tiny stamp kernels", get("tiny p99"), 1000);
  verdict("|events - CUPTI| p50", get("events p50"), 100);
  verdict("|events - CUPTI| p99", get("events p99"), 1000);
  verdict("added GPU time per zone edge, fused stamps", get("cost fused stamps"), 1000);
  verdict("added GPU time per zone edge, tiny stamp kernels", get("cost tiny stamp kernels"), 1000);
  verdict("added GPU time per zone edge, tiny stamps + events",
          get("cost tiny stamp kernels + events"), 1000);
  verdict("added GPU time per zone edge, events", get("cost events"), 1000);
  verdict("added GPU time per kernel, CUPTI observer", get("cost cupti per kernel"), 1000);
  verdict("clock mapping bound p99 (bracketed calibration)", get("bound p99"), 2000);

  check_cuda(cudaFree(b.data), "cudaFree");
  b.fused.reset();
  b.slots.reset();
  b.bare_slots.reset();
  check_cuda(cudaStreamDestroy(b.stream), "cudaStreamDestroy");
  return 0;
}
