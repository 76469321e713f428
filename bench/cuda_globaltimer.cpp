// cuda_globaltimer: is %globaltimer slewed or stepped against the GPU's own
// cycle counter and against the host clock, over minutes?
//
// One GPU thread (CudaClockSampler) reads (%globaltimer, clock64(),
// %globaltimer) every --interval-cycles SM cycles; the host takes a bracketed
// calibration pair (CudaCalibrationSampler, %globaltimer vs CLOCK_MONOTONIC)
// every --pair-ms. Printed:
//  * monotonic: decreases of %globaltimer between consecutive reads (must be 0);
//  * the update step: globaltimer_after - globaltimer of one sample (0 or one step);
//  * vs the SM clock: per-interval SM frequency dc/dg; per-window (--window-s)
//    frequency in ppm from the run's median. A *step* of %globaltimer shows as
//    one interval whose dg differs from dc / f_local by much more than the
//    read quantum (listed, with its time and size); a *slew* shows as windows
//    whose frequency moves by ppm while no interval jumps. The SM clock is a
//    reference only while its own frequency is steady (boost/power states
//    change it in large, discrete jumps: tens of MHz, not ppm);
//  * vs the host: per-window rate (ppm) of the pairs and residuals from one
//    line over the run; a step shows as a jump between consecutive pairs
//    larger than their bounds.
// Usage: cuda_globaltimer [--seconds S (120)] [--device D (0)]
//                         [--interval-cycles N (1000000)] [--pair-ms M (100)]
//                         [--window-s W (10)] [--csv FILE]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "latlab/bench/cuda_rig.hpp"
#include "latlab/cuda.hpp"
#include "latlab/host_clock.hpp"
#include "latlab/stats.hpp"

namespace {

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "cuda_globaltimer: %s\n", what.c_str());
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

void print_dist(const char* label, std::vector<double> v, const char* unit) {
  const latlab::Distribution d = latlab::summarize_in_place(v, 0);
  if (d.empty()) {
    std::printf("  %-44s n=0\n", label);
    return;
  }
  std::printf("  %-44s n=%-7llu min %11.3f p50 %11.3f p90 %11.3f p99 %11.3f max %11.3f %s\n", label,
              static_cast<unsigned long long>(d.count), d.min, d.p50, d.p90, d.p99, d.max, unit);
}

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 120;
  int device = 0;
  uint64_t interval_cycles = 1'000'000;
  int pair_ms = 100;
  double window_s = 10;
  std::string csv;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--seconds" && has) {
      seconds = std::atof(argv[++i]);
    } else if (a == "--device" && has) {
      device = std::atoi(argv[++i]);
    } else if (a == "--interval-cycles" && has) {
      interval_cycles = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--pair-ms" && has) {
      pair_ms = std::atoi(argv[++i]);
    } else if (a == "--window-s" && has) {
      window_s = std::atof(argv[++i]);
    } else if (a == "--csv" && has) {
      csv = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: cuda_globaltimer [--seconds S (120)] [--device D (0)] "
                   "[--interval-cycles N (1000000)] [--pair-ms M (100)] [--window-s W (10)] "
                   "[--csv FILE]\n");
      return 2;
    }
  }
  if (seconds <= 0 || device < 0 || interval_cycles < 1000 || pair_ms < 1 || window_s <= 0)
    die("bad option");

  const auto step_probe = check(latlab::probe_globaltimer(device, 10'000), "probe_globaltimer");
  std::printf(
      "settings: %.0f s, device %d, sample every %llu SM cycles, pair every %d ms, windows of %.0f "
      "s\n",
      seconds, device, static_cast<unsigned long long>(interval_cycles), pair_ms, window_s);
  std::printf(
      "tight-loop %%globaltimer step (start): min %llu median %llu max %llu ns over %u changes\n",
      static_cast<unsigned long long>(step_probe.min_step_ns),
      static_cast<unsigned long long>(step_probe.median_step_ns),
      static_cast<unsigned long long>(step_probe.max_step_ns), step_probe.steps);

  latlab::CudaCalibrationDesc cal;
  cal.device = device;
  auto pairs_sampler = check(latlab::CudaCalibrationSampler::create(cal), "calibration sampler");
  latlab::CudaClockSampler::Desc desc;
  desc.device = device;
  desc.interval_cycles = interval_cycles;
  desc.max_ns = static_cast<int64_t>((seconds + 30) * 1e9);
  auto sampler = check(latlab::CudaClockSampler::create(desc), "clock sampler");

  std::vector<latlab::CudaClockSample> samples;
  std::vector<latlab::CalibrationPair> pairs;
  const int64_t start = latlab::host_now_ns();
  uint64_t failed_pairs = 0;
  while (latlab::host_now_ns() - start < static_cast<int64_t>(seconds * 1e9)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(pair_ms));
    check(sampler->take(samples), "clock sampler");
    auto p = pairs_sampler->sample();
    if (p) {
      pairs.push_back(*p);
    } else {
      ++failed_pairs;
    }
  }
  check(sampler->stop(), "clock sampler stop");
  check(sampler->take(samples), "clock sampler");
  const auto end_probe = check(latlab::probe_globaltimer(device, 10'000), "probe_globaltimer");
  std::printf("tight-loop %%globaltimer step (end):   min %llu median %llu max %llu ns\n",
              static_cast<unsigned long long>(end_probe.min_step_ns),
              static_cast<unsigned long long>(end_probe.median_step_ns),
              static_cast<unsigned long long>(end_probe.max_step_ns));
  std::printf("samples %zu, calibration pairs %zu (failed %llu)\n\n", samples.size(), pairs.size(),
              static_cast<unsigned long long>(failed_pairs));
  if (samples.size() < 3 || pairs.size() < 3) die("too few samples");

  // --- vs the SM clock ---------------------------------------------------------
  uint64_t decreases = 0;
  std::vector<double> read_width;
  std::vector<double> freq_mhz;  // per interval
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto& s = samples[i];
    if (s.globaltimer_after_ns < s.globaltimer_ns) ++decreases;
    read_width.push_back(static_cast<double>(s.globaltimer_after_ns - s.globaltimer_ns));
    if (i == 0) continue;
    const auto& p = samples[i - 1];
    if (s.globaltimer_ns < p.globaltimer_after_ns) ++decreases;
    const double dg =
        static_cast<double>(static_cast<int64_t>(s.globaltimer_ns - p.globaltimer_ns));
    const double dc = static_cast<double>(static_cast<int64_t>(s.sm_cycles - p.sm_cycles));
    freq_mhz.push_back(dg > 0 ? dc / dg * 1e3 : std::nan(""));
  }
  std::printf("[1] monotonic: %llu decreases of %%globaltimer over %zu reads\n",
              static_cast<unsigned long long>(decreases), 2 * samples.size());
  print_dist("read width (g_after - g_before)", read_width, "ns");
  print_dist("SM frequency per interval", freq_mhz, "MHz");
  // Steps vs the SM clock: dg - dc / f_local, f_local = median of +-50 intervals.
  std::vector<double> residual_ns;
  struct Jump {
    double at_s;
    double size_ns;
  };
  std::vector<Jump> jumps;
  const double quantum = std::max(1.0, static_cast<double>(step_probe.median_step_ns));
  for (size_t i = 1; i < samples.size(); ++i) {
    const size_t lo = i > 51 ? i - 51 : 0;
    const size_t hi = std::min(freq_mhz.size(), i + 50);
    std::vector<double> local(freq_mhz.begin() + static_cast<std::ptrdiff_t>(lo),
                              freq_mhz.begin() + static_cast<std::ptrdiff_t>(hi));
    const double f = median(local);  // MHz
    const auto& s = samples[i];
    const auto& p = samples[i - 1];
    const double dg =
        static_cast<double>(static_cast<int64_t>(s.globaltimer_ns - p.globaltimer_ns));
    const double dc = static_cast<double>(static_cast<int64_t>(s.sm_cycles - p.sm_cycles));
    const double r = dg - dc / f * 1e3;
    residual_ns.push_back(r);
    if (std::abs(r) > 8 * quantum + 100)
      jumps.push_back({static_cast<double>(s.globaltimer_ns - samples[0].globaltimer_ns) / 1e9, r});
  }
  print_dist("interval residual dg - dc/f_local", residual_ns, "ns");
  std::printf("  intervals off the local SM rate by > %.0f ns: %zu\n", 8 * quantum + 100,
              jumps.size());
  for (size_t i = 0; i < jumps.size() && i < 20; ++i)
    std::printf("    at %9.3f s: %+10.1f ns\n", jumps[i].at_s, jumps[i].size_ns);
  // Per window: SM frequency in ppm from the whole run's.
  const double f_all = median(freq_mhz);
  std::printf("  per %.0f s window: SM frequency (ppm from the run's median %.3f MHz)\n", window_s,
              f_all);
  {
    size_t i0 = 0;
    const uint64_t g0 = samples[0].globaltimer_ns;
    while (i0 + 1 < samples.size()) {
      size_t i1 = i0 + 1;
      while (i1 + 1 < samples.size() &&
             static_cast<double>(samples[i1].globaltimer_ns - samples[i0].globaltimer_ns) <
                 window_s * 1e9)
        ++i1;
      const double dg =
          static_cast<double>(samples[i1].globaltimer_ns - samples[i0].globaltimer_ns);
      const double dc = static_cast<double>(samples[i1].sm_cycles - samples[i0].sm_cycles);
      std::printf("    %8.1f s .. %8.1f s: %+10.3f ppm\n",
                  static_cast<double>(samples[i0].globaltimer_ns - g0) / 1e9,
                  static_cast<double>(samples[i1].globaltimer_ns - g0) / 1e9,
                  (dc / dg * 1e3 / f_all - 1.0) * 1e6);
      i0 = i1;
    }
  }

  // --- vs the host clock ---------------------------------------------------------
  std::printf("\n[2] vs the host clock (%s), bracketed pairs\n", latlab::kHostClockName);
  const auto& a = pairs.front();
  const auto& z = pairs.back();
  const double rate = static_cast<double>(static_cast<int64_t>(z.device_ticks - a.device_ticks)) /
                      static_cast<double>(z.host_ns - a.host_ns);
  std::printf("  rate over the run: %+.3f ppm\n", (rate - 1.0) * 1e6);
  std::vector<double> resid_us;
  std::vector<double> bound_us;
  std::vector<double> pair_jump_us;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto& p = pairs[i];
    const double predicted =
        static_cast<double>(a.device_ticks) + rate * static_cast<double>(p.host_ns - a.host_ns);
    resid_us.push_back((static_cast<double>(p.device_ticks) - predicted) / 1e3);
    bound_us.push_back(static_cast<double>(p.max_deviation_ns) / 1e3);
    if (i > 0) {
      const auto& q = pairs[i - 1];
      const double dd = static_cast<double>(static_cast<int64_t>(p.device_ticks - q.device_ticks));
      const double dh = static_cast<double>(p.host_ns - q.host_ns);
      // Beyond what the two brackets allow: a jump between consecutive pairs.
      const double excess =
          std::abs(dd - rate * dh) - static_cast<double>(p.max_deviation_ns + q.max_deviation_ns);
      pair_jump_us.push_back(std::max(0.0, excess) / 1e3);
    }
  }
  print_dist("residual from one line", resid_us, "us");
  print_dist("pair bound (+-)", bound_us, "us");
  print_dist("consecutive-pair jump beyond bounds", pair_jump_us, "us");
  std::printf("  per %.0f s window: rate vs host (ppm)\n", window_s);
  {
    size_t i0 = 0;
    while (i0 + 1 < pairs.size()) {
      size_t i1 = i0 + 1;
      while (i1 + 1 < pairs.size() &&
             static_cast<double>(pairs[i1].host_ns - pairs[i0].host_ns) < window_s * 1e9)
        ++i1;
      const double dd = static_cast<double>(
          static_cast<int64_t>(pairs[i1].device_ticks - pairs[i0].device_ticks));
      const double dh = static_cast<double>(pairs[i1].host_ns - pairs[i0].host_ns);
      const double b = static_cast<double>(pairs[i1].max_deviation_ns + pairs[i0].max_deviation_ns);
      std::printf("    %8.1f s .. %8.1f s: %+10.3f ppm (+-%.3f)\n",
                  static_cast<double>(pairs[i0].host_ns - a.host_ns) / 1e9,
                  static_cast<double>(pairs[i1].host_ns - a.host_ns) / 1e9, (dd / dh - 1.0) * 1e6,
                  b / dh * 1e6);
      i0 = i1;
    }
  }
  if (!csv.empty()) {
    std::FILE* f = std::fopen(csv.c_str(), "w");
    if (!f) die("cannot write " + csv);
    std::fprintf(f, "globaltimer_ns,sm_cycles,globaltimer_after_ns\n");
    for (const auto& s : samples)
      std::fprintf(f, "%llu,%llu,%llu\n", static_cast<unsigned long long>(s.globaltimer_ns),
                   static_cast<unsigned long long>(s.sm_cycles),
                   static_cast<unsigned long long>(s.globaltimer_after_ns));
    std::fclose(f);
  }
  return decreases == 0 ? 0 : 3;
}
