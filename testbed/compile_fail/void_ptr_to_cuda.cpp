// Must not compile: a plain void* given to a CUDA profiler.
#include "latlab/profiler_cuda.hpp"

void record(latlab::CudaGpuProfiler& prof, void* stream) {
  LATLAB_GPU_ZONE(prof, stream, "untyped stream");
}
