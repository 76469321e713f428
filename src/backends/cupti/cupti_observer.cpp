// CuptiKernelObserver: CUPTI Activity API buffers -> CuptiKernelRecord.
// CUPTI calls back into plain functions (buffer requested / completed), on
// its own thread or inside cuptiActivityFlushAll; they reach the one live
// observer's state through a process-wide pointer under a mutex.
#include "latlab/cupti.hpp"

#include <cuda.h>
#include <cupti.h>

#include <cstdlib>
#include <mutex>
#include <new>

#include "latlab/host_clock.hpp"

namespace latlab {
namespace {

// CUPTI needs activity buffers aligned to 8 bytes.
constexpr size_t kAlign = 8;

struct State {
  std::mutex mutex;
  bool live = false;            // an observer exists
  size_t buffer_bytes = 0;
  std::vector<CuptiKernelRecord> records;  // delivered, not yet taken
  uint64_t dropped = 0;
};

State& state() {
  static State s;  // never destroyed before CUPTI's last callback: process lifetime
  return s;
}

std::string cupti_text(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || s == nullptr) {
    return "CUPTI error " + std::to_string(static_cast<int>(r));
  }
  return s;
}

Error cupti_fail(const std::string& what, CUptiResult r) {
  return Error{"CUPTI: " + what + " failed (" + cupti_text(r) +
               "). Check that libcupti matches the driver's CUDA version and that no other "
               "profiler (Nsight Systems, another CUPTI client) is attached"};
}

uint64_t CUPTIAPI host_clock_timestamp() { return static_cast<uint64_t>(host_now_ns()); }

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  size_t bytes = 0;
  {
    std::lock_guard lock(state().mutex);
    bytes = state().buffer_bytes;
  }
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kAlign, bytes));
  *size = *buffer ? bytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                               size_t /*size*/, size_t valid_size) {
  std::vector<CuptiKernelRecord> got;
  size_t incomplete = 0;
  CUpti_Activity* record = nullptr;
  while (buffer && cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
        record->kind != CUPTI_ACTIVITY_KIND_KERNEL) {
      continue;
    }
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    if (k->start == 0 || k->end < k->start) {  // incomplete (a forced flush): not a time
      ++incomplete;
      continue;
    }
    CuptiKernelRecord r;
    r.name = k->name ? k->name : "";
    r.device = k->deviceId;
    r.context_id = k->contextId;
    r.stream_id = k->streamId;
    r.correlation_id = k->correlationId;
    r.start_ns = static_cast<int64_t>(k->start);
    r.end_ns = static_cast<int64_t>(k->end);
    r.grid_blocks = static_cast<int64_t>(k->gridX) * k->gridY * k->gridZ;
    got.push_back(std::move(r));
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) != CUPTI_SUCCESS) dropped = 0;
  std::free(buffer);
  std::lock_guard lock(state().mutex);
  if (!state().live) return;  // the observer is gone: nobody takes these
  state().dropped += dropped + incomplete;
  for (auto& r : got) state().records.push_back(std::move(r));
}

CUpti_ActivityKind kernel_kind(bool serialize) {
  return serialize ? CUPTI_ACTIVITY_KIND_KERNEL : CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
}

bool g_serialize = false;  // the kind the live observer enabled (under state().mutex)

}  // namespace

Result<std::unique_ptr<CuptiKernelObserver>> CuptiKernelObserver::create(
    const CuptiObserverDesc& desc) {
  if (desc.buffer_bytes < 4096) return make_error("CUPTI: buffer_bytes must be >= 4096");
  {
    std::lock_guard lock(state().mutex);
    if (state().live) return make_error("CUPTI: an observer already exists in this process");
    state().live = true;
    state().buffer_bytes = (desc.buffer_bytes + kAlign - 1) / kAlign * kAlign;
    state().records.clear();
    state().dropped = 0;
    g_serialize = desc.serialize_kernels;
  }
  auto undo = [](Error e) {
    std::lock_guard lock(state().mutex);
    state().live = false;
    return e;
  };
  // Before any kind is enabled, so that every record uses it.
  CUptiResult r = cuptiActivityRegisterTimestampCallback(host_clock_timestamp);
  if (r != CUPTI_SUCCESS) return undo(cupti_fail("cuptiActivityRegisterTimestampCallback", r));
  r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (r != CUPTI_SUCCESS) return undo(cupti_fail("cuptiActivityRegisterCallbacks", r));
  r = cuptiActivityEnable(kernel_kind(desc.serialize_kernels));
  if (r != CUPTI_SUCCESS) return undo(cupti_fail("cuptiActivityEnable(kernel)", r));
  return std::unique_ptr<CuptiKernelObserver>(new CuptiKernelObserver());
}

CuptiKernelObserver::~CuptiKernelObserver() {
  bool serialize = false;
  {
    std::lock_guard lock(state().mutex);
    serialize = g_serialize;
  }
  (void)cuptiActivityDisable(kernel_kind(serialize));
  (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard lock(state().mutex);
  state().live = false;
  state().records.clear();
}

Result<std::vector<CuptiKernelRecord>> CuptiKernelObserver::take() {
  // Without the forced flag, buffers holding a record of an unfinished
  // kernel are kept: what comes back is complete.
  const CUptiResult r = cuptiActivityFlushAll(0);
  if (r != CUPTI_SUCCESS) return cupti_fail("cuptiActivityFlushAll", r);
  std::lock_guard lock(state().mutex);
  std::vector<CuptiKernelRecord> out;
  out.swap(state().records);
  return out;
}

Result<uint32_t> CuptiKernelObserver::stream_id(CudaStream stream) const {
  uint32_t id = 0;
  const CUptiResult r =
      cuptiGetStreamIdEx(nullptr, reinterpret_cast<CUstream>(stream), 0, &id);
  if (r != CUPTI_SUCCESS) return cupti_fail("cuptiGetStreamIdEx", r);
  return id;
}

uint64_t CuptiKernelObserver::dropped() const {
  std::lock_guard lock(state().mutex);
  return state().dropped;
}

}  // namespace latlab
