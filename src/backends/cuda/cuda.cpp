// CUDA backend, host side: devices, the timestamp query pool, calibration,
// the latency device and the test helpers. Device code: cuda_kernels.cu.
#include "latlab/cuda.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cstring>
#include <ctime>
#include <mutex>
#include <optional>
#include <string_view>

#include "backends/cuda/cuda_internal.hpp"
#include "backends/cuda/cuda_kernels.hpp"
#include "latlab/host_clock.hpp"

#ifndef LATLAB_CUDA_MIN_CC
#define LATLAB_CUDA_MIN_CC \
  90  // lowest compute capability the kernels are built for (10*major+minor)
#endif

namespace latlab {
namespace cd = cuda_detail;

namespace {

std::string cuda_error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

Error cuda_fail(std::string_view what, cudaError_t e) {
  return make_error("CUDA: " + std::string(what) + " failed (" + cuda_error_text(e) + ")");
}

// Mapped memory shared with the GPU is read and written through atomic_ref:
// the device is a concurrent writer the C++ memory model does not know of.
uint64_t load_acquire(uint64_t& word) {
  return std::atomic_ref<uint64_t>(word).load(std::memory_order_acquire);
}
uint64_t load_relaxed(uint64_t& word) {
  return std::atomic_ref<uint64_t>(word).load(std::memory_order_relaxed);
}
void store_relaxed(uint64_t& word, uint64_t v) {
  std::atomic_ref<uint64_t>(word).store(v, std::memory_order_relaxed);
}
void store_release(uint64_t& word, uint64_t v) {
  std::atomic_ref<uint64_t>(word).store(v, std::memory_order_release);
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Waits for pred() up to timeout_ns. Spins (with a pause hint) for the first
// `spin_ns`, where the expected wait is a bus round trip or a kernel launch;
// then sleeps 50 us between checks so a long wait does not burn a core.
template <class Pred>
bool wait_until(Pred pred, int64_t timeout_ns, int64_t spin_ns) {
  const int64_t start = host_now_ns();
  for (;;) {
    if (pred()) return true;
    const int64_t waited = host_now_ns() - start;
    if (waited > timeout_ns) return pred();
    if (waited < spin_ns) {
      cpu_relax();
    } else {
      const timespec nap{0, 50'000};
      nanosleep(&nap, nullptr);
    }
  }
}

// Selects `device` on the calling thread for the scope (CUDA's current device
// is per thread) and restores the previous one if it changed it.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    if (device >= 0 && device != previous_) {
      status_ = cudaSetDevice(device);
      changed_ = status_ == cudaSuccess && previous_ >= 0;
    }
  }
  ~DeviceScope() {
    if (changed_) (void)cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  cudaError_t status() const { return status_; }

 private:
  int previous_ = -1;
  bool changed_ = false;
  cudaError_t status_ = cudaSuccess;
};

Result<int> device_count() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    int runtime = 0;
    (void)cudaRuntimeGetVersion(&runtime);
    return make_error(
        "CUDA: no usable device: cudaGetDeviceCount failed (" + cuda_error_text(e) +
        "). Check that the NVIDIA driver is installed and loaded (nvidia-smi), that it "
        "supports CUDA runtime " +
        format_cuda_version(runtime) + ", and that CUDA_VISIBLE_DEVICES does not hide the GPU.");
  }
  if (n <= 0) {
    return make_error(
        "CUDA: no usable device: cudaGetDeviceCount returned 0. Check nvidia-smi and "
        "CUDA_VISIBLE_DEVICES.");
  }
  return n;
}

// `requested` < 0: the calling thread's current device.
Result<int> resolve_device(int requested) {
  auto count = device_count();
  if (!count) return count.error();
  int device = requested;
  if (device < 0) {
    const cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess) return cuda_fail("cudaGetDevice", e);
  }
  if (device >= *count) {
    return make_error("CUDA: device " + std::to_string(device) + " does not exist (" +
                      std::to_string(*count) + " device(s) visible)");
  }
  return device;
}

Result<void> require_mapped_memory(int device) {
  int can_map = 0;
  const cudaError_t e = cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, device);
  if (e != cudaSuccess) return cuda_fail("cudaDeviceGetAttribute(CanMapHostMemory)", e);
  if (!can_map) {
    return make_error("CUDA: device " + std::to_string(device) +
                      " cannot map host memory; latlab's timestamps and calibration need mapped "
                      "pinned memory (cudaHostAllocMapped)");
  }
  return {};
}

Result<void> preload(int device) {
  const cudaError_t e = cd::preload_kernels();
  if (e != cudaSuccess)
    return cuda_fail("loading latlab's kernels on device " + std::to_string(device), e);
  return {};
}

Result<void> require_kernel_arch(int device) {
  int major = 0;
  int minor = 0;
  cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  if (e != cudaSuccess) return cuda_fail("cudaDeviceGetAttribute(ComputeCapability)", e);
  if (major * 10 + minor < LATLAB_CUDA_MIN_CC) {
    return make_error(
        "CUDA: device " + std::to_string(device) + " has compute capability " +
        std::to_string(major) + "." + std::to_string(minor) + "; latlab's kernels are built for " +
        std::to_string(LATLAB_CUDA_MIN_CC / 10) + "." + std::to_string(LATLAB_CUDA_MIN_CC % 10) +
        " and newer (rebuild with CUDA_ARCHITECTURES for this GPU)");
  }
  return {};
}

// Pinned, host-mapped memory: host pointer and the device's address of it.
struct MappedBlock {
  void* host = nullptr;
  void* device = nullptr;
};

Result<MappedBlock> alloc_mapped(size_t bytes) {
  MappedBlock b;
  // Not write-combined: the host reads this memory, and WC reads are uncached.
  cudaError_t e = cudaHostAlloc(&b.host, bytes, cudaHostAllocMapped | cudaHostAllocPortable);
  if (e != cudaSuccess)
    return cuda_fail("cudaHostAlloc(mapped, " + std::to_string(bytes) + " bytes)", e);
  std::memset(b.host, 0, bytes);
  e = cudaHostGetDevicePointer(&b.device, b.host, 0);
  if (e != cudaSuccess) {
    (void)cudaFreeHost(b.host);
    return cuda_fail("cudaHostGetDevicePointer", e);
  }
  return b;
}

Result<cudaStream_t> create_stream(bool highest_priority) {
  int least = 0;
  int greatest = 0;
  cudaError_t e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
  if (e != cudaSuccess) return cuda_fail("cudaDeviceGetStreamPriorityRange", e);
  cudaStream_t s = nullptr;
  // Non-blocking: never serialised behind the legacy default stream.
  e = cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, highest_priority ? greatest : least);
  if (e != cudaSuccess) return cuda_fail("cudaStreamCreateWithPriority", e);
  return s;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------
// Internals (unit-tested without a GPU)
// ---------------------------------------------------------------------------

namespace cuda_detail {

DecodedStamp decode_stamp(uint64_t tag, uint64_t ticks, uint64_t expected_generation) {
  DecodedStamp q;
  if (tag == 0) return q;  // not written since the reset
  q.available = true;
  q.ticks = ticks;
  if (tag == stamp_tag(expected_generation, ticks)) {
    q.generation = expected_generation;
    return q;
  }
  const uint64_t writer = tag ^ stamp_mix(ticks);
  q.generation = writer != 0 && writer != expected_generation ? writer : kUnknownGeneration;
  return q;
}

Result<int> select_device_index(const std::string& selector,
                                const std::vector<std::string>& names) {
  auto listing = [&names] {
    std::string s;
    for (size_t i = 0; i < names.size(); ++i) {
      s += (i ? ", " : "") + std::to_string(i) + ": " + names[i];
    }
    return s.empty() ? std::string("none") : s;
  };
  if (names.empty()) return make_error("CUDA: no device to select from");
  if (selector.empty()) return 0;
  const bool digits = std::all_of(selector.begin(), selector.end(),
                                  [](unsigned char c) { return std::isdigit(c) != 0; });
  if (digits) {
    if (selector.size() > 6 || std::stoul(selector) >= names.size()) {
      return make_error("CUDA: device index " + selector +
                        " is out of range; devices: " + listing());
    }
    return static_cast<int>(std::stoul(selector));
  }
  const std::string want = lower(selector);
  for (size_t i = 0; i < names.size(); ++i) {
    if (lower(names[i]).find(want) != std::string::npos) return static_cast<int>(i);
  }
  return make_error("CUDA: no device name contains \"" + selector + "\"; devices: " + listing());
}

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

// ---------------------------------------------------------------------------
// Devices
// ---------------------------------------------------------------------------

std::string format_cuda_version(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

Result<std::vector<CudaDeviceReport>> enumerate_cuda_devices() {
  auto count = device_count();
  if (!count) return count.error();
  int driver = 0;
  int runtime = 0;
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);

  std::vector<CudaDeviceReport> out;
  for (int i = 0; i < *count; ++i) {
    cudaDeviceProp p{};
    const cudaError_t e = cudaGetDeviceProperties(&p, i);
    if (e != cudaSuccess) return cuda_fail("cudaGetDeviceProperties(" + std::to_string(i) + ")", e);
    CudaDeviceReport r;
    r.index = i;
    r.name = p.name;
    r.cc_major = p.major;
    r.cc_minor = p.minor;
    r.sm_count = p.multiProcessorCount;
    r.total_memory_bytes = p.totalGlobalMem;
    r.memory_bus_width_bits = p.memoryBusWidth;
    r.driver_version = driver;
    r.runtime_version = runtime;
    r.can_map_host_memory = p.canMapHostMemory != 0;
    r.concurrent_kernels = p.concurrentKernels != 0;
    r.unified_addressing = p.unifiedAddressing != 0;
    if (cudaDeviceGetAttribute(&r.clock_khz, cudaDevAttrClockRate, i) != cudaSuccess)
      r.clock_khz = 0;
    if (cudaDeviceGetAttribute(&r.memory_clock_khz, cudaDevAttrMemoryClockRate, i) != cudaSuccess) {
      r.memory_clock_khz = 0;
    }
    std::array<char, 32> bus{};
    if (cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), i) == cudaSuccess)
      r.pci_bus_id = bus.data();

    if (!r.can_map_host_memory) {
      r.missing.push_back(
          {"timestamps", "the device cannot map host memory (canMapHostMemory = 0)"});
    }
    if (auto arch = require_kernel_arch(i); !arch)
      r.missing.push_back({"kernels", arch.error().message});
    r.missing.push_back({"calibrated_timestamps",
                         "CUDA has no calibrated timestamp query: pairs are bracketed %globaltimer "
                         "reads (estimated)"});
    out.push_back(std::move(r));
  }
  return out;
}

// ---------------------------------------------------------------------------
// Timestamp slots
// ---------------------------------------------------------------------------

CudaTimestampSlots::CudaTimestampSlots(uint32_t count, int device, bool timing_events)
    : count_(count),
      device_(device),
      timing_events_(timing_events),
      slot_generation_(count, 0),
      events_(count, nullptr),
      event_generation_(count, 0) {}

Result<std::shared_ptr<CudaTimestampSlots>> CudaTimestampSlots::create(const CudaTimestampSlotsDesc& desc) {
  if (desc.count < 2) {
    return make_error("CUDA slots: count = " + std::to_string(desc.count) + " must be >= 2");
  }
  auto device = resolve_device(desc.device);
  if (!device) return device.error();
  DeviceScope scope(*device);
  if (scope.status() != cudaSuccess) return cuda_fail("cudaSetDevice", scope.status());
  if (auto ok = require_mapped_memory(*device); !ok) return ok.error();
  if (auto ok = require_kernel_arch(*device); !ok) return ok.error();
  if (auto ok = preload(*device); !ok) return ok.error();

  std::shared_ptr<CudaTimestampSlots> slots(
      new CudaTimestampSlots(desc.count, *device, desc.cross_check_events));
  auto block = alloc_mapped(sizeof(cd::StampSlot) * desc.count);
  if (!block) return block.error();
  slots->host_slots_ = block->host;
  slots->device_slots_ = block->device;
  const unsigned flags = desc.cross_check_events ? cudaEventDefault : cudaEventDisableTiming;
  for (auto& ev : slots->events_) {
    const cudaError_t e = cudaEventCreateWithFlags(&ev, flags);
    if (e != cudaSuccess)
      return cuda_fail("cudaEventCreateWithFlags", e);  // the destructor frees the rest
  }
  return slots;
}

CudaTimestampSlots::~CudaTimestampSlots() {
  DeviceScope scope(device_);
  // A stamp kernel still queued would write into freed memory: wait for each
  // slot's latest record first (its event follows its stamp in the stream).
  for (size_t i = 0; i < events_.size(); ++i) {
    if (events_[i] && event_generation_[i] != 0) (void)cudaEventSynchronize(events_[i]);
  }
  for (auto& ev : events_) {
    if (ev) (void)cudaEventDestroy(ev);
  }
  if (host_slots_) (void)cudaFreeHost(host_slots_);
}

Result<void> CudaTimestampSlots::write_timestamp(CudaStream stream, uint32_t slot) {
  if (slot >= count_) {
    return make_error("CUDA slots: slot " + std::to_string(slot) + " is out of range (count " +
                      std::to_string(count_) + ")");
  }
  const uint64_t generation = slot_generation_[slot];
  if (generation == 0) {
    return make_error("CUDA slots: slot " + std::to_string(slot) +
                      " was never allocated (reset); use allocate_queries_for_context's offset");
  }
  auto* stamp = static_cast<cd::StampSlot*>(device_slots_) + slot;
  cudaError_t e = cd::launch_stamp(stream, stamp, generation);
  if (e != cudaSuccess) return cuda_fail("launching the timestamp kernel", e);
  e = cudaEventRecord(events_[slot], stream);
  if (e != cudaSuccess) return cuda_fail("cudaEventRecord", e);
  event_generation_[slot] = generation;
  return {};
}

void CudaTimestampSlots::write(GpuCommandStream stream, uint32_t slot, TimestampEdge /*edge*/) {
  if (!write_timestamp(static_cast<CudaStream>(stream), slot)) {
    write_errors_.fetch_add(1, std::memory_order_relaxed);
  }
}

CudaTimestampSlots::EventSpan CudaTimestampSlots::event_elapsed(uint32_t begin_slot) const {
  EventSpan span;
  if (!timing_events_ || begin_slot + 1 >= count_ || begin_slot % 2 != 0) {
    return span;  // missing
  }
  const uint64_t g = event_generation_[begin_slot];
  if (g == 0 || event_generation_[begin_slot + 1] != g) return span;
  for (uint32_t q : {begin_slot, begin_slot + 1}) {
    const cudaError_t e = cudaEventQuery(events_[q]);
    if (e == cudaErrorNotReady) {
      span.status = QueryStatus::not_ready;
      return span;
    }
    if (e != cudaSuccess) {
      span.status = QueryStatus::invalid;
      return span;
    }
  }
  float ms = 0.0f;
  const cudaError_t e = cudaEventElapsedTime(&ms, events_[begin_slot], events_[begin_slot + 1]);
  if (e == cudaErrorNotReady) {
    span.status = QueryStatus::not_ready;
  } else if (e != cudaSuccess) {
    span.status = QueryStatus::invalid;
  } else {
    span.status = QueryStatus::ok;
    span.ms = static_cast<double>(ms);
  }
  return span;
}

void CudaTimestampSlots::read(uint32_t first, std::span<SlotReading> out) {
  auto* slots = static_cast<cd::StampSlot*>(host_slots_);
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t q = first + i;
    if (!slots || q >= count_) {
      out[i] = SlotReading{};
      continue;
    }
    cd::StampSlot& s = slots[q];
    const uint64_t tag = load_acquire(s.tag);  // then the value: it was written before the tag
    const uint64_t ticks = load_relaxed(s.ticks);
    const cd::DecodedStamp d = cd::decode_stamp(tag, ticks, slot_generation_[q]);
    out[i].ticks = d.ticks;
    out[i].available = d.available ? 1u : 0u;
    out[i].flags = d.available && d.generation != slot_generation_[q] ? SlotReading::kLate : 0u;
  }
}

void CudaTimestampSlots::reset(uint32_t first, uint32_t count, bool /*previous_use_done*/) {
  // The generation tag catches a late stamp, so the host may reset at once.
  auto* slots = static_cast<cd::StampSlot*>(host_slots_);
  const uint64_t generation = next_generation_++;
  for (uint32_t q = first; q < first + count && q < count_; ++q) {
    slot_generation_[q] = generation;
    if (!slots) continue;
    store_relaxed(slots[q].tag, 0);
    store_relaxed(slots[q].ticks, 0);
  }
}

Result<std::unique_ptr<TimestampQueryPool>> create_cuda_query_pool(const CudaQueryPoolDesc& desc) {
  if (desc.pool.max_queries < 2 || desc.pool.max_queries % 2 != 0) {
    return make_error("CUDA pool: max_queries = " + std::to_string(desc.pool.max_queries) +
                      " must be even and >= 2");
  }
  auto slots = CudaTimestampSlots::create(
      {.count = desc.pool.max_queries, .device = desc.device, .cross_check_events = desc.cross_check_events});
  if (!slots) return slots.error();
  return TimestampQueryPool::create(std::move(slots.value()), desc.pool);
}

// ---------------------------------------------------------------------------
// Calibration
// ---------------------------------------------------------------------------

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
    DeviceScope scope(device);
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
  store_relaxed(m.started, 0);
  store_relaxed(m.tag, 0);
  store_relaxed(m.ticks, 0);
  cudaError_t e =
      cd::launch_calibration(stream, dev, seq, static_cast<uint64_t>(desc.gpu_wait_timeout_ns));
  if (e != cudaSuccess) return cuda_fail("launching the calibration kernel", e);
  e = cudaEventRecord(done, stream);
  if (e != cudaSuccess) {
    (void)cudaStreamSynchronize(stream);
    return cuda_fail("cudaEventRecord(calibration)", e);
  }
  auto finish = [this]() -> Result<void> {
    const cudaError_t s = cudaEventSynchronize(done);
    if (s != cudaSuccess) return cuda_fail("cudaEventSynchronize(calibration)", s);
    return {};
  };

  // The bracket must not contain the launch: wait until the kernel runs.
  const bool started =
      wait_until([&] { return load_acquire(m.started) == seq; }, desc.start_timeout_ns, 1'000'000);
  if (!started) {
    (void)finish();  // the kernel gives up on its own after gpu_wait_timeout_ns
    return make_error("CUDA calibration: the kernel did not start within " +
                      std::to_string(desc.start_timeout_ns / 1'000'000) + " ms (GPU busy?)");
  }
  uint64_t ticks = 0;
  const int64_t t0 = host_now_ns();
  store_release(m.go, seq);
  const bool replied = wait_until(
      [&] {
        const uint64_t tag = load_acquire(m.tag);
        if (tag == 0) return false;
        ticks = load_relaxed(m.ticks);
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
  auto device = resolve_device(desc.device);
  if (!device) return device.error();
  DeviceScope scope(*device);
  if (scope.status() != cudaSuccess) return cuda_fail("cudaSetDevice", scope.status());
  if (auto ok = require_mapped_memory(*device); !ok) return ok.error();
  if (auto ok = require_kernel_arch(*device); !ok) return ok.error();
  if (auto ok = preload(*device); !ok) return ok.error();

  auto impl = std::make_unique<Impl>();
  impl->desc = desc;
  impl->device = *device;
  auto stream = create_stream(/*highest_priority=*/true);  // scheduled ahead of queued frame work
  if (!stream) return stream.error();
  impl->stream = *stream;
  cudaError_t e =
      cudaEventCreateWithFlags(&impl->done, cudaEventBlockingSync | cudaEventDisableTiming);
  if (e != cudaSuccess) return cuda_fail("cudaEventCreateWithFlags", e);
  auto block = alloc_mapped(sizeof(cd::CalibrationMailbox));
  if (!block) return block.error();
  impl->host = static_cast<cd::CalibrationMailbox*>(block->host);
  impl->dev = static_cast<cd::CalibrationMailbox*>(block->device);
  return std::unique_ptr<CudaCalibrationSampler>(new CudaCalibrationSampler(std::move(impl)));
}

Result<CalibrationPair> CudaCalibrationSampler::sample() {
  std::lock_guard lock(impl_->mutex);
  DeviceScope scope(impl_->device);
  if (scope.status() != cudaSuccess) return cuda_fail("cudaSetDevice", scope.status());
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

// ---------------------------------------------------------------------------
// Latency device
// ---------------------------------------------------------------------------

namespace {

class CudaLatencyDevice final : public LatencyDevice {
 public:
  static Result<std::unique_ptr<LatencyDevice>> create(const CudaLatencyDeviceDesc& desc);
  ~CudaLatencyDevice() override;
  CudaLatencyDevice(const CudaLatencyDevice&) = delete;
  CudaLatencyDevice& operator=(const CudaLatencyDevice&) = delete;

  const DeviceInfo& info() const override { return info_; }
  Result<void> submit_frame(uint64_t frame_id, const FrameWorkload& work) override;
  Result<GpuFrameTiming> wait_frame(uint64_t frame_id) override;
  Result<CalibrationPair> sample_calibration() override { return sampler_->sample(); }

 private:
  CudaLatencyDevice() = default;
  struct FrameSlot {
    bool busy = false;
    uint64_t frame_id = 0;
    uint64_t generation = 0;
    cudaEvent_t done = nullptr;
  };
  cd::StampSlot* host_stamp(size_t slot, int end) {
    return static_cast<cd::StampSlot*>(stamps_.host) + 2 * slot + end;
  }
  cd::StampSlot* dev_stamp(size_t slot, int end) {
    return static_cast<cd::StampSlot*>(stamps_.device) + 2 * slot + end;
  }
  Result<void> ensure_buffer(uint64_t elements);

  DeviceInfo info_;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  MappedBlock stamps_;  // 2 StampSlots (begin, end) per frame slot
  std::vector<FrameSlot> slots_;
  uint64_t next_generation_ = 1;
  float* buffer_ = nullptr;  // workload target, stream-ordered allocation
  uint64_t buffer_elements_ = 0;
  std::unique_ptr<CudaCalibrationSampler> sampler_;
};

Result<std::unique_ptr<LatencyDevice>> CudaLatencyDevice::create(
    const CudaLatencyDeviceDesc& desc) {
  if (desc.frames_in_flight < 1) return make_error("CUDA: frames_in_flight must be >= 1");
  auto count = device_count();
  if (!count) return count.error();
  std::vector<std::string> names;
  for (int i = 0; i < *count; ++i) {
    cudaDeviceProp p{};
    const cudaError_t e = cudaGetDeviceProperties(&p, i);
    if (e != cudaSuccess) return cuda_fail("cudaGetDeviceProperties(" + std::to_string(i) + ")", e);
    names.emplace_back(p.name);
  }
  auto index = cd::select_device_index(desc.device, names);
  if (!index) return index.error();

  std::unique_ptr<CudaLatencyDevice> dev(new CudaLatencyDevice());
  dev->device_ = *index;
  DeviceScope scope(dev->device_);
  if (scope.status() != cudaSuccess) return cuda_fail("cudaSetDevice", scope.status());
  if (auto ok = require_mapped_memory(dev->device_); !ok) return ok.error();
  if (auto ok = require_kernel_arch(dev->device_); !ok) return ok.error();
  if (auto ok = preload(dev->device_); !ok) return ok.error();

  auto stream = create_stream(/*highest_priority=*/false);
  if (!stream) return stream.error();
  dev->stream_ = *stream;
  auto stamps = alloc_mapped(sizeof(cd::StampSlot) * 2 * desc.frames_in_flight);
  if (!stamps) return stamps.error();
  dev->stamps_ = *stamps;
  dev->slots_.resize(desc.frames_in_flight);
  for (auto& s : dev->slots_) {
    // Blocking sync: wait_frame sleeps in the driver instead of spinning.
    const cudaError_t e =
        cudaEventCreateWithFlags(&s.done, cudaEventBlockingSync | cudaEventDisableTiming);
    if (e != cudaSuccess) return cuda_fail("cudaEventCreateWithFlags", e);
  }
  CudaCalibrationDesc cal = desc.calibration;
  cal.device = dev->device_;
  auto sampler = CudaCalibrationSampler::create(cal);
  if (!sampler) return sampler.error();
  dev->sampler_ = std::move(*sampler);

  int driver = 0;
  int runtime = 0;
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);
  DeviceInfo& info = dev->info_;
  info.backend = "cuda";
  info.name = names[static_cast<size_t>(dev->device_)];
  info.driver = "NVIDIA driver (CUDA " + format_cuda_version(driver) + "), runtime " +
                format_cuda_version(runtime);
  info.ticks = kCudaGlobaltimerTicks;
  info.can_time = true;
  info.calibration_domain = kCudaCalibrationDomain;
  info.calibration_estimated = true;
  info.missing.push_back(
      {"calibrated_timestamps",
       "CUDA has no calibrated timestamp query: pairs are bracketed %globaltimer reads"});
  info.missing.push_back({"fragment_workload", "the CUDA backend runs compute passes only"});
  info.missing.push_back({"present", "CUDA has no presentation path"});
  return std::unique_ptr<LatencyDevice>(std::move(dev));
}

CudaLatencyDevice::~CudaLatencyDevice() {
  DeviceScope scope(device_);
  if (stream_) {
    if (buffer_) (void)cudaFreeAsync(buffer_, stream_);
    (void)cudaStreamSynchronize(stream_);  // nothing may write the stamps after they are freed
  }
  for (auto& s : slots_) {
    if (s.done) (void)cudaEventDestroy(s.done);
  }
  if (stream_) (void)cudaStreamDestroy(stream_);
  if (stamps_.host) (void)cudaFreeHost(stamps_.host);
}

Result<void> CudaLatencyDevice::ensure_buffer(uint64_t elements) {
  if (elements <= buffer_elements_) return {};
  if (buffer_) {
    const cudaError_t e = cudaFreeAsync(buffer_, stream_);
    buffer_ = nullptr;
    buffer_elements_ = 0;
    if (e != cudaSuccess) return cuda_fail("cudaFreeAsync", e);
  }
  void* p = nullptr;
  const size_t bytes = elements * sizeof(float);
  cudaError_t e = cudaMallocAsync(&p, bytes, stream_);  // stream-ordered: no device-wide sync
  if (e != cudaSuccess) return cuda_fail("cudaMallocAsync(" + std::to_string(bytes) + " bytes)", e);
  buffer_ = static_cast<float*>(p);
  buffer_elements_ = elements;
  e = cudaMemsetAsync(p, 0, bytes, stream_);
  if (e != cudaSuccess) return cuda_fail("cudaMemsetAsync", e);
  return {};
}

Result<void> CudaLatencyDevice::submit_frame(uint64_t frame_id, const FrameWorkload& work) {
  if (auto ok = cd::validate_workload(work); !ok) return ok.error();
  FrameSlot* free_slot = nullptr;
  size_t index = 0;
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].busy && slots_[i].frame_id == frame_id) {
      return make_error("CUDA: frame " + std::to_string(frame_id) + " is already in flight");
    }
    if (!slots_[i].busy && !free_slot) {
      free_slot = &slots_[i];
      index = i;
    }
  }
  if (!free_slot) {
    return make_error("CUDA: " + std::to_string(slots_.size()) +
                      " frames are already in flight (frames_in_flight); wait_frame one first");
  }
  DeviceScope scope(device_);
  if (scope.status() != cudaSuccess) return cuda_fail("cudaSetDevice", scope.status());
  if (auto ok = ensure_buffer(uint64_t{work.width} * work.height); !ok) return ok;

  const uint64_t generation = next_generation_++;
  for (int end = 0; end < 2; ++end) {
    store_relaxed(host_stamp(index, end)->tag, 0);
    store_relaxed(host_stamp(index, end)->ticks, 0);
  }
  // A failure part-way leaves stamps of this generation queued; the slot stays
  // free and its next use has a new generation, so they can never be taken
  // for that frame's.
  cudaError_t e = cd::launch_stamp(stream_, dev_stamp(index, 0), generation);
  if (e != cudaSuccess) return cuda_fail("launching the begin timestamp", e);
  e = cd::launch_workload(stream_, buffer_, work.width * work.height, work.passes, work.complexity);
  if (e != cudaSuccess) return cuda_fail("launching the workload", e);
  e = cd::launch_stamp(stream_, dev_stamp(index, 1), generation);
  if (e != cudaSuccess) return cuda_fail("launching the end timestamp", e);
  e = cudaEventRecord(free_slot->done, stream_);
  if (e != cudaSuccess) return cuda_fail("cudaEventRecord(frame)", e);
  free_slot->busy = true;
  free_slot->frame_id = frame_id;
  free_slot->generation = generation;
  return {};
}

Result<GpuFrameTiming> CudaLatencyDevice::wait_frame(uint64_t frame_id) {
  auto it = std::find_if(slots_.begin(), slots_.end(), [frame_id](const FrameSlot& s) {
    return s.busy && s.frame_id == frame_id;
  });
  if (it == slots_.end()) {
    return make_error("CUDA: frame " + std::to_string(frame_id) +
                      " is not in flight (never submitted or already waited)");
  }
  DeviceScope scope(device_);
  if (scope.status() != cudaSuccess) return cuda_fail("cudaSetDevice", scope.status());
  const cudaError_t e = cudaEventSynchronize(it->done);  // sleeps: blocking-sync event
  const int64_t wake = host_now_ns();
  it->busy = false;
  if (e != cudaSuccess)
    return cuda_fail("cudaEventSynchronize(frame " + std::to_string(frame_id) + ")", e);

  GpuFrameTiming t;
  t.fence_status = QueryStatus::ok;
  t.fence_wake_ns = wake;
  const size_t index = static_cast<size_t>(it - slots_.begin());
  cd::DecodedStamp q[2];
  for (int end = 0; end < 2; ++end) {
    cd::StampSlot* s = host_stamp(index, end);
    const uint64_t tag = load_acquire(s->tag);
    q[end] = cd::decode_stamp(tag, load_relaxed(s->ticks), it->generation);
  }
  // The frame's work completed: a stamp missing or of another generation now
  // will never be right. Never a substitute value.
  const bool ok = q[0].available && q[1].available && q[0].generation == it->generation &&
                  q[1].generation == it->generation && q[1].ticks >= q[0].ticks;
  t.gpu_status = ok ? QueryStatus::ok : QueryStatus::invalid;
  if (ok) {
    t.gpu_begin_ticks = q[0].ticks;
    t.gpu_end_ticks = q[1].ticks;
  }
  return t;
}

}  // namespace

Result<std::unique_ptr<LatencyDevice>> create_cuda_latency_device(
    const CudaLatencyDeviceDesc& desc) {
  return CudaLatencyDevice::create(desc);
}

Result<std::unique_ptr<LatencyDevice>> create_cuda_latency_device(
    const std::string& device_selector) {
  CudaLatencyDeviceDesc desc;
  desc.device = device_selector;
  return CudaLatencyDevice::create(desc);
}

// ---------------------------------------------------------------------------
// Helpers for tests and benchmarks
// ---------------------------------------------------------------------------

Result<void> cuda_launch_workload(CudaStream stream, const FrameWorkload& work, float* data) {
  if (auto ok = cd::validate_workload(work); !ok) return ok;
  if (!data) return make_error("CUDA: cuda_launch_workload needs a device buffer");
  const cudaError_t e =
      cd::launch_workload(stream, data, work.width * work.height, work.passes, work.complexity);
  if (e != cudaSuccess) return cuda_fail("launching the workload", e);
  return {};
}

Result<void> cuda_launch_spin(CudaStream stream, int64_t duration_ns) {
  if (duration_ns < 0) return make_error("CUDA: spin duration must be >= 0 ns");
  const cudaError_t e = cd::launch_spin(stream, static_cast<uint64_t>(duration_ns));
  if (e != cudaSuccess) return cuda_fail("launching the spin kernel", e);
  return {};
}

struct CudaStreamGate::Impl {
  int device = 0;
  int64_t timeout_ns = 0;
  MappedBlock flag;  // one uint64_t: 0 closed, 1 open
  std::vector<cudaEvent_t> holds;

  ~Impl() {
    DeviceScope scope(device);
    if (flag.host) store_release(*static_cast<uint64_t*>(flag.host), 1);
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
  auto dev = resolve_device(device);
  if (!dev) return dev.error();
  DeviceScope scope(*dev);
  if (scope.status() != cudaSuccess) return cuda_fail("cudaSetDevice", scope.status());
  if (auto ok = require_mapped_memory(*dev); !ok) return ok.error();
  if (auto ok = require_kernel_arch(*dev); !ok) return ok.error();
  if (auto ok = preload(*dev); !ok) return ok.error();
  auto impl = std::make_unique<Impl>();
  impl->device = *dev;
  impl->timeout_ns = timeout_ns;
  auto flag = alloc_mapped(sizeof(uint64_t));
  if (!flag) return flag.error();
  impl->flag = *flag;
  return std::unique_ptr<CudaStreamGate>(new CudaStreamGate(std::move(impl)));
}

Result<void> CudaStreamGate::hold(CudaStream stream) {
  cudaEvent_t ev = nullptr;
  cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventBlockingSync | cudaEventDisableTiming);
  if (e != cudaSuccess) return cuda_fail("cudaEventCreateWithFlags", e);
  e = cd::launch_gate(stream, static_cast<const uint64_t*>(impl_->flag.device), 1,
                      static_cast<uint64_t>(impl_->timeout_ns));
  if (e != cudaSuccess) {
    (void)cudaEventDestroy(ev);
    return cuda_fail("launching the gate kernel", e);
  }
  e = cudaEventRecord(ev, stream);
  impl_->holds.push_back(ev);  // destroyed by the destructor either way
  if (e != cudaSuccess) return cuda_fail("cudaEventRecord(gate)", e);
  return {};
}

void CudaStreamGate::open() { store_release(*static_cast<uint64_t*>(impl_->flag.host), 1); }

Result<GlobaltimerProbe> probe_globaltimer(int device, uint32_t steps) {
  if (steps < 1 || steps > 1'000'000) return make_error("CUDA: probe steps must be in 1..1000000");
  auto dev = resolve_device(device);
  if (!dev) return dev.error();
  DeviceScope scope(*dev);
  if (scope.status() != cudaSuccess) return cuda_fail("cudaSetDevice", scope.status());
  if (auto ok = require_kernel_arch(*dev); !ok) return ok.error();
  if (auto ok = preload(*dev); !ok) return ok.error();
  auto stream = create_stream(false);
  if (!stream) return stream.error();
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { (void)cudaStreamDestroy(s); }
  } guard{*stream};

  std::vector<uint64_t> deltas(steps, 0);
  void* d = nullptr;
  const size_t bytes = sizeof(uint64_t) * steps;
  cudaError_t e = cudaMallocAsync(&d, bytes, *stream);
  if (e != cudaSuccess) return cuda_fail("cudaMallocAsync", e);
  e = cd::launch_timer_probe(*stream, static_cast<uint64_t*>(d), steps);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(deltas.data(), d, bytes, cudaMemcpyDeviceToHost, *stream);
  const cudaError_t free_status = cudaFreeAsync(d, *stream);
  const cudaError_t sync = cudaStreamSynchronize(*stream);
  if (e != cudaSuccess) return cuda_fail("running the timer probe", e);
  if (free_status != cudaSuccess) return cuda_fail("cudaFreeAsync", free_status);
  if (sync != cudaSuccess) return cuda_fail("cudaStreamSynchronize(probe)", sync);

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
