// CUDA backend: fused stamps (the workload writes its own begin/end stamps)
// and the (%globaltimer, SM clock) sampler. See cuda.hpp.
#include <cuda_runtime.h>

#include "backends/cuda/cuda_internal.hpp"
#include "backends/cuda/cuda_kernels.hpp"
#include "backends/cuda/cuda_runtime_util.hpp"
#include "latlab/bench/cuda_rig.hpp"
#include "latlab/cuda.hpp"

namespace latlab {
namespace cd = cuda_detail;

// ---------------------------------------------------------------------------
// CudaFusedStamps
// ---------------------------------------------------------------------------

CudaFusedStamps::CudaFusedStamps(std::shared_ptr<CudaTimestampSlots> slots, void* scratch)
    : slots_(std::move(slots)), scratch_(scratch) {}

Result<std::unique_ptr<CudaFusedStamps>> CudaFusedStamps::create(
    std::shared_ptr<CudaTimestampSlots> slots) {
  if (!slots) return make_error("CUDA fused stamps: no slots");
  cd::DeviceScope scope(slots->device());
  if (scope.status() != cudaSuccess) return cd::cuda_fail("cudaSetDevice", scope.status());
  void* scratch = nullptr;
  cudaError_t e = cudaMalloc(&scratch, sizeof(cd::FusedScratch));
  if (e != cudaSuccess) return cd::cuda_fail("cudaMalloc(fused stamp scratch)", e);
  // Initialised on the legacy stream and waited for, so every later stream sees it.
  e = cd::launch_init_fused_scratch(nullptr, static_cast<cd::FusedScratch*>(scratch));
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    (void)cudaFree(scratch);
    return cd::cuda_fail("initialising the fused stamp scratch", e);
  }
  return std::unique_ptr<CudaFusedStamps>(new CudaFusedStamps(std::move(slots), scratch));
}

CudaFusedStamps::~CudaFusedStamps() {
  cd::DeviceScope scope(slots_->device());
  // A stamped kernel still queued uses the scratch: wait for the device.
  (void)cudaDeviceSynchronize();
  if (scratch_) (void)cudaFree(scratch_);
}

Result<void> CudaFusedStamps::check_pair(uint32_t begin_slot) const {
  if (begin_slot + 1 >= slots_->count_ || begin_slot + 1 < begin_slot) {
    return make_error("CUDA fused stamps: slots " + std::to_string(begin_slot) + ".." +
                      std::to_string(begin_slot + 1) + " out of range (count " +
                      std::to_string(slots_->count_) + ")");
  }
  if (slots_->slot_generation_[begin_slot] == 0 || slots_->slot_generation_[begin_slot + 1] == 0) {
    return make_error("CUDA fused stamps: slot pair " + std::to_string(begin_slot) +
                      " was never allocated (reset)");
  }
  return {};
}

namespace {
cd::FusedStamps fused_targets(void* device_slots, const std::vector<uint64_t>& generation,
                              uint32_t begin_slot, void* scratch) {
  auto* base = static_cast<cd::StampSlot*>(device_slots);
  return cd::FusedStamps{base + begin_slot, generation[begin_slot], base + begin_slot + 1,
                         generation[begin_slot + 1], static_cast<cd::FusedScratch*>(scratch)};
}
}  // namespace

Result<void> CudaFusedStamps::launch_workload(CudaStream stream, const FrameWorkload& work,
                                              float* data, uint32_t begin_slot) {
  if (auto ok = cd::validate_workload(work); !ok) return ok.error();
  if (data == nullptr) return make_error("CUDA fused stamps: data is null");
  if (auto ok = check_pair(begin_slot); !ok) return ok.error();
  const cudaError_t e = cd::launch_fused_workload(
      stream, data, work.width * work.height, work.passes, work.complexity,
      fused_targets(slots_->device_slots_, slots_->slot_generation_, begin_slot, scratch_));
  if (e != cudaSuccess) return cd::cuda_fail("launching the stamped workload", e);
  return {};
}

Result<void> CudaFusedStamps::launch_spin(CudaStream stream, int64_t duration_ns,
                                          uint32_t begin_slot) {
  if (duration_ns < 0) return make_error("CUDA fused stamps: spin duration must be >= 0");
  if (auto ok = check_pair(begin_slot); !ok) return ok.error();
  const cudaError_t e = cd::launch_fused_spin(
      stream, static_cast<uint64_t>(duration_ns),
      fused_targets(slots_->device_slots_, slots_->slot_generation_, begin_slot, scratch_));
  if (e != cudaSuccess) return cd::cuda_fail("launching the stamped spin", e);
  return {};
}

// ---------------------------------------------------------------------------
// CudaClockSampler
// ---------------------------------------------------------------------------

struct CudaClockSampler::Impl {
  int device = 0;
  uint32_t capacity = 0;
  cudaStream_t stream = nullptr;
  cd::MappedBlock ring;   // cd::ClockSample[capacity]
  cd::MappedBlock words;  // [0] count (GPU), [1] stop (host)
  uint64_t taken = 0;     // samples copied out so far
  bool running = false;

  uint64_t& count() { return static_cast<uint64_t*>(words.host)[0]; }
  uint64_t& stop_flag() { return static_cast<uint64_t*>(words.host)[1]; }
};

CudaClockSampler::CudaClockSampler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<CudaClockSampler>> CudaClockSampler::create(const Desc& desc) {
  if (desc.capacity < 2) return make_error("CUDA clock sampler: capacity must be >= 2");
  if (desc.max_ns <= 0) return make_error("CUDA clock sampler: max_ns must be > 0");
  auto dev = cd::resolve_device(desc.device);
  if (!dev) return dev.error();
  cd::DeviceScope scope(*dev);
  if (scope.status() != cudaSuccess) return cd::cuda_fail("cudaSetDevice", scope.status());
  if (auto ok = cd::require_mapped_memory(*dev); !ok) return ok.error();
  if (auto ok = cd::require_kernel_arch(*dev); !ok) return ok.error();
  if (auto ok = cd::preload(*dev); !ok) return ok.error();
  auto impl = std::make_unique<Impl>();
  impl->device = *dev;
  impl->capacity = desc.capacity;
  auto ring = cd::alloc_mapped(sizeof(cd::ClockSample) * desc.capacity);
  if (!ring) return ring.error();
  impl->ring = *ring;
  std::unique_ptr<CudaClockSampler> sampler(new CudaClockSampler(std::move(impl)));
  auto words = cd::alloc_mapped(2 * sizeof(uint64_t));
  if (!words) return words.error();
  sampler->impl_->words = *words;
  auto stream = cd::create_stream(false);
  if (!stream) return stream.error();
  sampler->impl_->stream = *stream;
  auto* dwords = static_cast<uint64_t*>(sampler->impl_->words.device);
  const cudaError_t e = cd::launch_clock_sampler(
      *stream, static_cast<cd::ClockSample*>(sampler->impl_->ring.device), dwords, dwords + 1,
      desc.capacity, desc.interval_cycles, static_cast<uint64_t>(desc.max_ns));
  if (e != cudaSuccess) return cd::cuda_fail("launching the clock sampler", e);
  sampler->impl_->running = true;
  return sampler;
}

Result<void> CudaClockSampler::take(std::vector<CudaClockSample>& out) {
  Impl& m = *impl_;
  const uint64_t written = cd::load_acquire(m.count());
  if (written - m.taken > m.capacity) {
    const uint64_t lost = written - m.taken - m.capacity;
    m.taken = written;
    return make_error("CUDA clock sampler: the ring overran, " + std::to_string(lost) +
                      " samples lost (take more often or raise capacity)");
  }
  auto* ring = static_cast<cd::ClockSample*>(m.ring.host);
  const uint64_t first = m.taken;
  for (; m.taken < written; ++m.taken) {
    cd::ClockSample& s = ring[m.taken % m.capacity];
    out.push_back({cd::load_relaxed(s.globaltimer_ns), cd::load_relaxed(s.sm_cycles),
                   cd::load_relaxed(s.globaltimer_after_ns)});
  }
  // The GPU may have lapped the reader while it copied: a sample of index k
  // is intact only while count - capacity <= k.
  const uint64_t now = cd::load_acquire(m.count());
  if (now > m.capacity && now - m.capacity > first) {
    return make_error("CUDA clock sampler: the ring overran while copying (raise capacity)");
  }
  return {};
}

Result<void> CudaClockSampler::stop() {
  Impl& m = *impl_;
  if (!m.running) return {};
  cd::DeviceScope scope(m.device);
  cd::store_release(m.stop_flag(), 1);
  m.running = false;
  const cudaError_t e = cudaStreamSynchronize(m.stream);
  if (e != cudaSuccess) return cd::cuda_fail("waiting for the clock sampler", e);
  return {};
}

CudaClockSampler::~CudaClockSampler() {
  if (!impl_) return;
  (void)stop();
  cd::DeviceScope scope(impl_->device);
  if (impl_->stream) (void)cudaStreamDestroy(impl_->stream);
  if (impl_->ring.host) (void)cudaFreeHost(impl_->ring.host);
  if (impl_->words.host) (void)cudaFreeHost(impl_->words.host);
}

}  // namespace latlab
