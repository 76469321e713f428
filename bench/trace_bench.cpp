// Spans per second into a Chrome trace file: ChromeTraceWriter (streamed,
// bounded memory) against ChromeTrace (every span in memory, the whole JSON
// built and written at the end), for the same spans: frames of one parent
// and three children on "CPU main" plus four GPU zones, the GPU zones added
// a frame late (as a profiler's sink gives them). Each iteration writes a
// whole trace of range(0) frames to a file in /tmp; items/s is spans per
// second, time included from the first span to the file renamed in place.
//
// Usage (release build, 5 repetitions, medians):
//   latlab_bench --benchmark_filter=BM_Trace --benchmark_repetitions=5
//     --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "latlab/profiler_trace.hpp"

namespace latlab {
namespace {

std::string bench_path() { return "/tmp/latlab-trace-bench-" + std::to_string(getpid()) + ".json"; }

template <class Trace>
void add_frames(Trace& t, int64_t frames) {
  for (int64_t f = 0; f < frames; ++f) {
    const int64_t b = f * 100000;
    t.add_span("CPU main", "record", b + 1000, b + 30000, false, f);
    t.add_span("CPU main", "pass a", b + 2000, b + 10000, false, f);
    t.add_span("CPU main", "pass b", b + 10000, b + 25000, false, f);
    t.add_span("CPU main", "frame", b, b + 40000, false, f);
    if (f > 0) {  // the previous frame's GPU zones
      const int64_t g = b - 100000 + 50000;
      t.add_span("GPU q (thread 1)", "frame", g, g + 40000, true, f - 1);
      t.add_span("GPU q (thread 1)", "simulate", g + 100, g + 9000, true, f - 1);
      t.add_span("GPU q (thread 1)", "lighting", g + 9000, g + 30000, true, f - 1);
      t.add_span("GPU q (thread 1)", "post", g + 30000, g + 39000, true, f - 1);
    }
  }
}

void BM_TraceWholeInMemory(benchmark::State& state) {
  const std::string path = bench_path();
  size_t spans = 0;
  for (auto _ : state) {
    ChromeTrace t;
    add_frames(t, state.range(0));
    if (!t.write_file(path)) state.SkipWithError("write failed");
    spans = t.span_count();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * spans));
  state.counters["spans"] = static_cast<double>(spans);
  std::remove(path.c_str());
}

void BM_TraceStreamed(benchmark::State& state) {
  const std::string path = bench_path();
  size_t spans = 0;
  size_t peak = 0;
  for (auto _ : state) {
    ChromeTraceWriter t;
    if (!t.open(path)) state.SkipWithError("open failed");
    add_frames(t, state.range(0));
    if (!t.close()) state.SkipWithError("close failed");
    spans = t.span_count();
    peak = t.peak_buffered_spans();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * spans));
  state.counters["spans"] = static_cast<double>(spans);
  state.counters["peak_buffered"] = static_cast<double>(peak);
  std::remove(path.c_str());
}

BENCHMARK(BM_TraceWholeInMemory)->Arg(12500)->Arg(125000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TraceStreamed)->Arg(12500)->Arg(125000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace latlab
