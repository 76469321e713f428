// CUDA backend: CudaCalibrationSampler, bracketed %globaltimer reads by a
// handshake in mapped memory.
#include <cuda_runtime.h>

#include <mutex>
#include <optional>

#include "backends/cuda/cuda_kernels.hpp"
#include "backends/cuda/cuda_runtime_util.hpp"
#include "latlab/cuda.hpp"
#include "latlab/host_clock.hpp"

namespace latlab {
namespace cd = cuda_detail;

struct CudaCalibrationSampler::Impl {
  CudaCalibrationDesc desc;
  int device = 0;
  std::mutex mutex;
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;  // blocking-sync: waiting for the kernel's exit sleeps
  cd::CalibrationMailbox* host = nullptr;
  cd::CalibrationMailbox* dev = nullptr;
  uint64_t sequence = 0;

  ~Impl() {
    cd::DeviceScope scope(device);
    if (stream) (void)cudaStreamSynchronize(stream);  // no kernel may write the freed mailbox
    if (done) (void)cudaEventDestroy(done);
    if (stream) (void)cudaStreamDestroy(stream);
    if (host) (void)cudaFreeHost(host);
  }

  Result<CalibrationPair> bracket();
};

Result<CalibrationPair> CudaCalibrationSampler::Impl::bracket() {
  const uint64_t seq = ++sequence;
  cd::CalibrationMailbox& m = *host;
  cd::store_relaxed(m.started, 0);
  cd::store_relaxed(m.tag, 0);
  cd::store_relaxed(m.ticks, 0);
  cudaError_t e =
      cd::launch_calibration(stream, dev, seq, static_cast<uint64_t>(desc.gpu_wait_timeout_ns));
  if (e != cudaSuccess) return cd::cuda_fail("launching the calibration kernel", e);
  e = cudaEventRecord(done, stream);
  if (e != cudaSuccess) {
    (void)cudaStreamSynchronize(stream);
    return cd::cuda_fail("cudaEventRecord(calibration)", e);
  }
  auto finish = [this]() -> Result<void> {
    const cudaError_t s = cudaEventSynchronize(done);
    if (s != cudaSuccess) return cd::cuda_fail("cudaEventSynchronize(calibration)", s);
    return {};
  };

  // The bracket must not contain the launch: wait until the kernel runs.
  const bool started = cd::wait_until([&] { return cd::load_acquire(m.started) == seq; },
                                      desc.start_timeout_ns, 1'000'000);
  if (!started) {
    (void)finish();  // the kernel gives up on its own after gpu_wait_timeout_ns
    return make_error("CUDA calibration: the kernel did not start within " +
                      std::to_string(desc.start_timeout_ns / 1'000'000) + " ms (GPU busy?)");
  }
  uint64_t ticks = 0;
  const int64_t t0 = host_now_ns();
  cd::store_release(m.go, seq);
  const bool replied = cd::wait_until(
      [&] {
        const uint64_t tag = cd::load_acquire(m.tag);
        if (tag == 0) return false;
        ticks = cd::load_relaxed(m.ticks);
        return tag == cd::stamp_tag(seq, ticks);
      },
      desc.reply_timeout_ns, desc.reply_timeout_ns);
  const int64_t t2 = host_now_ns();
  auto finished = finish();
  if (!replied) {
    return make_error("CUDA calibration: no reply from the GPU within " +
                      std::to_string(desc.reply_timeout_ns / 1'000) + " us after the flag");
  }
  if (!finished) return finished.error();
  CalibrationPair pair;
  pair.device_ticks = ticks;
  pair.host_ns = t0 + (t2 - t0) / 2;
  pair.max_deviation_ns = (t2 - t0 + 1) / 2;  // covers both halves when the width is odd
  pair.estimated = true;
  return pair;
}

CudaCalibrationSampler::CudaCalibrationSampler(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
CudaCalibrationSampler::~CudaCalibrationSampler() = default;
int CudaCalibrationSampler::device() const { return impl_->device; }

Result<std::unique_ptr<CudaCalibrationSampler>> CudaCalibrationSampler::create(
    const CudaCalibrationDesc& desc) {
  if (desc.brackets < 1 || desc.start_timeout_ns <= 0 || desc.reply_timeout_ns <= 0 ||
      desc.gpu_wait_timeout_ns <= 0) {
    return make_error("CUDA calibration: brackets must be >= 1 and every timeout > 0");
  }
  auto device = cd::resolve_device(desc.device);
  if (!device) return device.error();
  cd::DeviceScope scope(*device);
  if (auto ok = cd::ready_device(scope, *device); !ok) return ok.error();

  auto impl = std::make_unique<Impl>();
  impl->desc = desc;
  impl->device = *device;
  auto stream =
      cd::create_stream(/*highest_priority=*/true);  // scheduled ahead of queued frame work
  if (!stream) return stream.error();
  impl->stream = *stream;
  cudaError_t e =
      cudaEventCreateWithFlags(&impl->done, cudaEventBlockingSync | cudaEventDisableTiming);
  if (e != cudaSuccess) return cd::cuda_fail("cudaEventCreateWithFlags", e);
  auto block = cd::alloc_mapped(sizeof(cd::CalibrationMailbox));
  if (!block) return block.error();
  impl->host = static_cast<cd::CalibrationMailbox*>(block->host);
  impl->dev = static_cast<cd::CalibrationMailbox*>(block->device);
  return std::unique_ptr<CudaCalibrationSampler>(new CudaCalibrationSampler(std::move(impl)));
}

Result<CalibrationPair> CudaCalibrationSampler::sample() {
  std::lock_guard lock(impl_->mutex);
  cd::DeviceScope scope(impl_->device);
  if (scope.status() != cudaSuccess) return cd::cuda_fail("cudaSetDevice", scope.status());
  std::optional<CalibrationPair> best;
  std::string last_error;
  uint32_t failures = 0;
  for (uint32_t i = 0; i < impl_->desc.brackets; ++i) {
    auto pair = impl_->bracket();
    if (!pair) {
      last_error = pair.error().message;
      ++failures;
      continue;
    }
    if (!best || pair->max_deviation_ns < best->max_deviation_ns) best = *pair;
  }
  if (!best) {
    return make_error(last_error + " (" + std::to_string(failures) + " of " +
                      std::to_string(impl_->desc.brackets) + " brackets failed)");
  }
  return *best;
}

}  // namespace latlab
