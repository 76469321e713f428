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

#include "latlab/profiler_cuda.hpp"

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

  // latlab: the profiler and the clock sync on the current device
  auto gpu = latlab::cuda::attach({.profiler = {.name = "cuda", .frames_in_flight = 2}});
  if (!gpu) return fail("attach", gpu.error().message);
  if (argc > 1) {
    if (auto t = (*gpu)->trace(argv[1]); !t) return fail("trace", t.error().message);  // latlab
  }

  for (int frame = 0; frame < kFrames; ++frame) {
    for (int i = 0; i < 2; ++i) {
      LATLAB_GPU_ZONE(*gpu, streams[i], "frame");  // latlab: the stream is the program's
      {
        LATLAB_GPU_ZONE(*gpu, streams[i], "memset");  // latlab
        cudaMemsetAsync(buffers[i], frame, kBytes, streams[i]);
      }
    }
    const uint64_t id = (*gpu)->frame();  // latlab: closes the frame, collects what is ready
    for (auto s : streams) cudaStreamSynchronize(s);
    (*gpu)->retire(id);  // latlab: its streams are done, nothing more will be written
  }
  // latlab: every frame collected, the trace closed
  if (auto done = (*gpu)->finish(); !done) return fail("trace", done.error().message);
  std::printf("%s", (*gpu)->stat_table().c_str());  // latlab
  const latlab::ClockSync& clock = (*gpu)->clock();  // latlab
  std::printf("clock: %s\n", clock.available() ? clock.method().c_str() : clock.reason().c_str());
  if (argc > 1) std::printf("trace: %s (%zu spans)\n", argv[1], (*gpu)->trace_spans());
  const bool all_timed = (*gpu)->counters().zones_ok == 4u * kFrames;  // latlab
  gpu->reset();
  for (auto b : buffers) cudaFree(b);
  for (auto s : streams) cudaStreamDestroy(s);
  return all_timed ? 0 : fail("zones", "not every zone was timed");
}
