// A CUDA program that picks its device and makes its own streams, then
// attaches latlab to them in its current context: zones around its own
// work on two streams, the stat table and a Perfetto trace. The lines that
// call latlab are marked "latlab:".
//
// Usage: cuda_attach [trace.json]. Exit 0 on success, 1 on a CUDA or latlab
// error, 3 when there is no usable CUDA device.
#include <cuda_runtime.h>

#include <cstdio>
#include <string>

#include "latlab/cuda.hpp"
#include "latlab/profiler.hpp"
#include "latlab/profiler_cuda.hpp"
#include "latlab/profiler_trace.hpp"

namespace {

int fail(const char* what, const std::string& why) {
  std::fprintf(stderr, "cuda_attach: %s: %s\n", what, why.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  // The program's own device, streams and memory.
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "cuda_attach: no usable CUDA device\n");
    return 3;
  }
  if (cudaSetDevice(0) != cudaSuccess) return fail("cudaSetDevice", "failed");
  cudaStream_t streams[2] = {nullptr, nullptr};
  for (auto& s : streams) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  constexpr size_t kBytes = 64u << 20;
  void* buffers[2] = {nullptr, nullptr};
  for (auto& b : buffers) {
    if (cudaMalloc(&b, kBytes) != cudaSuccess) return fail("cudaMalloc", "failed");
  }
  constexpr int kFrames = 24;

  // latlab: the profiler and the clock on the current device (-1)
  auto prof = latlab::create_cuda_profiler(
      -1, {.name = "cuda", .max_zones_per_frame = 8, .frames_in_flight = 2});
  if (!prof) return fail("profiler", prof.error().message);
  auto clock = latlab::start_cuda_clock_sync(-1);  // latlab: GPU times on the host clock
  (*prof)->set_clock_mapper(clock->mapper());      // latlab
  latlab::ChromeTraceWriter trace;  // latlab: streams the trace to argv[1] as frames come
  if (auto o = argc > 1 ? trace.open(argv[1]) : latlab::Result<void>{}; !o)  // latlab
    return fail("trace", o.error().message);
  (*prof)->set_frame_sink(
      [&](const latlab::ProfilerFrame& f) { trace.add_frame("cuda", f); });  // latlab

  for (int frame = 0; frame < kFrames; ++frame) {
    for (int i = 0; i < 2; ++i) {
      LATLAB_GPU_ZONE(*prof, streams[i], "frame");  // latlab: the stream is the program's
      {
        LATLAB_GPU_ZONE(*prof, streams[i], "memset");  // latlab
        cudaMemsetAsync(buffers[i], frame, kBytes, streams[i]);
      }
    }
    const uint64_t id = (*prof)->current_frame_id();  // latlab
    for (auto s : streams) cudaStreamSynchronize(s);
    (*prof)->next_frame();      // latlab: collects what is ready
    (*prof)->retire_frame(id);  // latlab: its streams are done, nothing more will be written
  }
  (*prof)->collect();                                                              // latlab
  std::printf("%s", latlab::format_stat_table("cuda", (*prof)->stats()).c_str());  // latlab
  std::printf("clock: %s\n",
              clock->available() ? clock->method().c_str() : clock->reason().c_str());  // latlab
  if (argc > 1) {
    if (auto w = trace.close(); !w) return fail("trace", w.error().message);  // latlab
    std::printf("trace: %s (%zu spans)\n", argv[1], trace.span_count());
  }
  const bool all_timed = (*prof)->counters().zones_ok == 4u * kFrames;  // latlab
  prof->reset();
  for (auto b : buffers) cudaFree(b);
  for (auto s : streams) cudaStreamDestroy(s);
  return all_timed ? 0 : fail("zones", "not every zone was timed");
}
