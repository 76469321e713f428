// Clock calibration micro-benchmarks.
//
// Units: time per iteration (ns) as Google Benchmark reports it. Warm-up: the
// model's window is filled before timing. Repetitions: run with
// --benchmark_repetitions=5 --benchmark_report_aggregates_only=true for
// mean/median/stddev. BM_MappingAccuracy is not a speed figure: its counters
// are the mapping error and bound of a simulated 4 ppm clock (ns).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "latlab/bench/sim.hpp"
#include "latlab/calibrator.hpp"
#include "latlab/clock_model.hpp"
#include "latlab/host_clock.hpp"

namespace latlab {
namespace {

SimClockDesc bench_clock() {
  SimClockDesc d;
  d.drift_ppm = 4.0;
  d.deviation_ns = 1'000;
  d.deviation_spread_ns = 1'000;
  d.offset_ns = -1'000'000'000;  // device ticks positive at any host time
  return d;
}

// One read of the host clock (host_now_ns: clock_gettime(CLOCK_MONOTONIC)):
// what each time stamp of the capture layer's submit and present hooks
// costs the program. Cheap (tens of ns) where the kernel's clock source can
// be read in user space (vDSO: tsc), a system call otherwise (e.g. hpet).
void BM_HostNowNs(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(host_now_ns());
}
BENCHMARK(BM_HostNowNs);

// One calibrator refresh (best-of-N from a sim source + fit + publish) on the
// caller's thread: what calibrate_now() costs, and what the refresh thread
// spends per period. Arg: samples per refresh; window 64 (full).
void BM_CalibratorRefresh(benchmark::State& state) {
  SimClock clock(bench_clock());
  CalibratorDesc desc;
  desc.samples_per_refresh = static_cast<uint32_t>(state.range(0));
  Calibrator cal(clock.source(), clock.ticks(), desc);
  for (int i = 0; i < 80; ++i) (void)cal.calibrate_now();  // fill the window
  for (auto _ : state) {
    Result<void> r = cal.calibrate_now();
    benchmark::DoNotOptimize(r.ok());
  }
  const CalibratorStats s = cal.stats();
  state.counters["max_refresh_cost_ns"] = static_cast<double>(s.max_refresh_cost_ns);
  state.counters["refreshes"] = static_cast<double>(s.refreshes);
}
BENCHMARK(BM_CalibratorRefresh)->Arg(1)->Arg(8)->Arg(32);

// What the frame loop pays: read the published fit and map one timestamp.
void BM_CalibratorFitAndMap(benchmark::State& state) {
  SimClock clock(bench_clock());
  Calibrator cal(clock.source(), clock.ticks());
  for (int i = 0; i < 64; ++i) (void)cal.calibrate_now();
  const uint64_t tick = clock.device_ticks_at(host_now_ns());
  for (auto _ : state) {
    const auto fit = cal.fit();
    benchmark::DoNotOptimize(fit->map(tick));
  }
}
BENCHMARK(BM_CalibratorFitAndMap);

// ClockFit::map alone (wrap-aware, 128-bit tick conversion). Arg: valid bits.
void BM_ClockFitMap(benchmark::State& state) {
  SimClockDesc d = bench_clock();
  d.ticks = TickFormat::from_period_ns(41.666668, static_cast<uint32_t>(state.range(0)));
  SimClock clock(d);
  ClockModel model(clock.ticks());
  for (int i = 0; i < 64; ++i) (void)model.add_pair(*clock.sample());
  const auto fit = model.fit();
  uint64_t tick = clock.device_ticks_at(host_now_ns());
  for (auto _ : state) {
    benchmark::DoNotOptimize(fit->map(tick));
    tick += 7;
  }
}
BENCHMARK(BM_ClockFitMap)->Arg(36)->Arg(64);

// One ClockModel::add_pair with a full window (the refit is O(window)).
void BM_ClockModelAddPair(benchmark::State& state) {
  int64_t now = 0;
  SimClockDesc d = bench_clock();
  d.drift_ppm = 0.0;  // so that shifted replays of the pairs stay on one line
  d.host_clock = [&now] { return now; };
  SimClock clock(d);
  ClockModel model(clock.ticks(), ClockModelDesc{.window = static_cast<uint32_t>(state.range(0))});
  std::vector<CalibrationPair> pairs;
  for (int64_t i = 0; i < 4096; ++i) {
    now = i * 1'000'000;
    pairs.push_back(*clock.sample());
  }
  size_t i = 0;
  int64_t shift = 0;
  for (auto _ : state) {
    CalibrationPair p = pairs[i];
    p.host_ns += shift;
    p.device_ticks += static_cast<uint64_t>(shift);  // replays the pairs later in time
    benchmark::DoNotOptimize(model.add_pair(p));
    if (++i == pairs.size()) {
      i = 0;
      shift += int64_t{4096} * 1'000'000;
    }
  }
}
BENCHMARK(BM_ClockModelAddPair)->Arg(64)->Arg(1024);

// Accuracy, on a virtual clock: 4 ppm drift, 1-2 us deviations, one pair
// (best of 8) per second, window 64, 600 s. Every 10 ms a tick is mapped
// through the fit of the previous refresh and compared with the truth.
void BM_MappingAccuracy(benchmark::State& state) {
  double max_err = 0, max_bound = 0, sum_err = 0, sum_bound = 0, single_err = 0, count = 0;
  double worst_ratio = 0;
  for (auto _ : state) {
    int64_t now = 0;
    SimClockDesc d = bench_clock();
    d.host_clock = [&now] { return now; };
    SimClock clock(d);
    Calibrator cal(clock.source(), clock.ticks());
    (void)cal.calibrate_now();
    const auto start = cal.fit();
    for (int64_t s = 1; s <= 600; ++s) {
      for (int64_t k = 0; k < 100; ++k) {
        const int64_t t = (s - 1) * 1'000'000'000 + k * 10'000'000;
        const uint64_t tick = clock.device_ticks_at(t);
        const MappedTime m = cal.fit()->map(tick);
        const auto err = static_cast<double>(std::llabs(m.host_ns - clock.true_host_ns(tick, t)));
        max_err = std::max(max_err, err);
        max_bound = std::max(max_bound, static_cast<double>(m.error_ns));
        worst_ratio = std::max(worst_ratio, err / static_cast<double>(m.error_ns));
        sum_err += err;
        sum_bound += static_cast<double>(m.error_ns);
        count += 1;
        if (s == 600 && k == 99) {
          single_err = static_cast<double>(
              std::llabs(start->map(tick).host_ns - clock.true_host_ns(tick, t)));
        }
      }
      now = s * 1'000'000'000;
      (void)cal.calibrate_now();
    }
  }
  state.counters["max_error_ns"] = max_err;
  state.counters["mean_error_ns"] = sum_err / count;
  state.counters["max_bound_ns"] = max_bound;
  state.counters["mean_bound_ns"] = sum_bound / count;
  state.counters["worst_error_over_bound"] = worst_ratio;
  state.counters["single_pair_error_at_600s_ns"] = single_err;
}
BENCHMARK(BM_MappingAccuracy)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace latlab
