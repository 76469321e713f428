// CUDA backend: workload checks and launchers, the spin kernel, the stream
// gate and the %globaltimer probe (for the latency device, tests, benchmarks).
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "backends/cuda/cuda_internal.hpp"
#include "backends/cuda/cuda_kernels.hpp"
#include "backends/cuda/cuda_runtime_util.hpp"
#include "latlab/bench/cuda_rig.hpp"
#include "latlab/cuda.hpp"

namespace latlab {
namespace cd = cuda_detail;

namespace cuda_detail {

Result<void> validate_workload(const FrameWorkload& work) {
  if (work.form != WorkloadForm::compute) {
    return make_error(
        "CUDA: the CUDA backend runs compute passes only (FrameWorkload::form = fragment)");
  }
  if (work.passes < 1 || work.passes > 64) {
    return make_error("CUDA: FrameWorkload::passes = " + std::to_string(work.passes) +
                      " is outside 1..64");
  }
  if (work.complexity < kMinComplexity || work.complexity > kMaxComplexity) {
    return make_error("CUDA: FrameWorkload::complexity = " + std::to_string(work.complexity) +
                      " is outside " + std::to_string(kMinComplexity) + ".." +
                      std::to_string(kMaxComplexity));
  }
  const uint64_t elements = uint64_t{work.width} * work.height;
  if (elements == 0 || elements > (1ull << 30)) {
    return make_error("CUDA: FrameWorkload target " + std::to_string(work.width) + "x" +
                      std::to_string(work.height) + " must have 1..2^30 elements");
  }
  return {};
}

}  // namespace cuda_detail

Result<void> cuda_launch_workload(CudaStream stream, const FrameWorkload& work, float* data) {
  if (auto ok = cd::validate_workload(work); !ok) return ok;
  if (!data) return make_error("CUDA: cuda_launch_workload needs a device buffer");
  const cudaError_t e =
      cd::launch_workload(stream, data, work.width * work.height, work.passes, work.complexity);
  if (e != cudaSuccess) return cd::cuda_fail("launching the workload", e);
  return {};
}

Result<void> cuda_launch_spin(CudaStream stream, int64_t duration_ns) {
  if (duration_ns < 0) return make_error("CUDA: spin duration must be >= 0 ns");
  const cudaError_t e = cd::launch_spin(stream, static_cast<uint64_t>(duration_ns));
  if (e != cudaSuccess) return cd::cuda_fail("launching the spin kernel", e);
  return {};
}

struct CudaStreamGate::Impl {
  int device = 0;
  int64_t timeout_ns = 0;
  cd::MappedBlock flag;  // one uint64_t: 0 closed, 1 open
  std::vector<cudaEvent_t> holds;

  ~Impl() {
    cd::DeviceScope scope(device);
    if (flag.host) cd::store_release(*static_cast<uint64_t*>(flag.host), 1);
    for (auto ev : holds) {
      (void)cudaEventSynchronize(ev);
      (void)cudaEventDestroy(ev);
    }
    if (flag.host) (void)cudaFreeHost(flag.host);
  }
};

CudaStreamGate::CudaStreamGate(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaStreamGate::~CudaStreamGate() = default;

Result<std::unique_ptr<CudaStreamGate>> CudaStreamGate::create(int device, int64_t timeout_ns) {
  if (timeout_ns <= 0) return make_error("CUDA gate: timeout must be > 0");
  auto dev = cd::resolve_device(device);
  if (!dev) return dev.error();
  cd::DeviceScope scope(*dev);
  if (auto ok = cd::ready_device(scope, *dev); !ok) return ok.error();
  auto impl = std::make_unique<Impl>();
  impl->device = *dev;
  impl->timeout_ns = timeout_ns;
  auto flag = cd::alloc_mapped(sizeof(uint64_t));
  if (!flag) return flag.error();
  impl->flag = *flag;
  return std::unique_ptr<CudaStreamGate>(new CudaStreamGate(std::move(impl)));
}

Result<void> CudaStreamGate::hold(CudaStream stream) {
  cudaEvent_t ev = nullptr;
  cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventBlockingSync | cudaEventDisableTiming);
  if (e != cudaSuccess) return cd::cuda_fail("cudaEventCreateWithFlags", e);
  e = cd::launch_gate(stream, static_cast<const uint64_t*>(impl_->flag.device), 1,
                      static_cast<uint64_t>(impl_->timeout_ns));
  if (e != cudaSuccess) {
    (void)cudaEventDestroy(ev);
    return cd::cuda_fail("launching the gate kernel", e);
  }
  e = cudaEventRecord(ev, stream);
  impl_->holds.push_back(ev);  // destroyed by the destructor either way
  if (e != cudaSuccess) return cd::cuda_fail("cudaEventRecord(gate)", e);
  return {};
}

void CudaStreamGate::open() { cd::store_release(*static_cast<uint64_t*>(impl_->flag.host), 1); }

Result<GlobaltimerProbe> probe_globaltimer(int device, uint32_t steps) {
  if (steps < 1 || steps > 1'000'000) return make_error("CUDA: probe steps must be in 1..1000000");
  auto dev = cd::resolve_device(device);
  if (!dev) return dev.error();
  cd::DeviceScope scope(*dev);
  if (scope.status() != cudaSuccess) return cd::cuda_fail("cudaSetDevice", scope.status());
  if (auto ok = cd::require_kernel_arch(*dev); !ok) return ok.error();
  if (auto ok = cd::preload(*dev); !ok) return ok.error();
  auto stream = cd::create_stream(false);
  if (!stream) return stream.error();
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { (void)cudaStreamDestroy(s); }
  } guard{*stream};

  std::vector<uint64_t> deltas(steps, 0);
  void* d = nullptr;
  const size_t bytes = sizeof(uint64_t) * steps;
  cudaError_t e = cudaMallocAsync(&d, bytes, *stream);
  if (e != cudaSuccess) return cd::cuda_fail("cudaMallocAsync", e);
  e = cd::launch_timer_probe(*stream, static_cast<uint64_t*>(d), steps);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(deltas.data(), d, bytes, cudaMemcpyDeviceToHost, *stream);
  const cudaError_t free_status = cudaFreeAsync(d, *stream);
  const cudaError_t sync = cudaStreamSynchronize(*stream);
  if (e != cudaSuccess) return cd::cuda_fail("running the timer probe", e);
  if (free_status != cudaSuccess) return cd::cuda_fail("cudaFreeAsync", free_status);
  if (sync != cudaSuccess) return cd::cuda_fail("cudaStreamSynchronize(probe)", sync);

  GlobaltimerProbe p;
  const auto stalled = std::find(deltas.begin(), deltas.end(), uint64_t{0});
  deltas.erase(stalled, deltas.end());
  p.steps = static_cast<uint32_t>(deltas.size());
  if (deltas.empty()) return p;
  std::sort(deltas.begin(), deltas.end());
  p.min_step_ns = deltas.front();
  p.median_step_ns = deltas[deltas.size() / 2];
  p.max_step_ns = deltas.back();
  return p;
}

}  // namespace latlab
