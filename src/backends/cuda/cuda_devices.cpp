// CUDA backend: device enumeration and selection.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "backends/cuda/cuda_internal.hpp"
#include "backends/cuda/cuda_runtime_util.hpp"
#include "core/uuid_text.hpp"
#include "latlab/cuda.hpp"

namespace latlab {
namespace cd = cuda_detail;

namespace cuda_detail {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

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

}  // namespace cuda_detail

Result<std::vector<CudaDeviceReport>> enumerate_cuda_devices() {
  auto count = cd::device_count();
  if (!count) return count.error();
  int driver = 0;
  int runtime = 0;
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);

  std::vector<CudaDeviceReport> out;
  for (int i = 0; i < *count; ++i) {
    cudaDeviceProp p{};
    const cudaError_t e = cudaGetDeviceProperties(&p, i);
    if (e != cudaSuccess)
      return cd::cuda_fail("cudaGetDeviceProperties(" + std::to_string(i) + ")", e);
    CudaDeviceReport r;
    r.index = i;
    r.name = p.name;
    r.uuid = uuid_text(reinterpret_cast<const uint8_t*>(p.uuid.bytes));
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
    if (auto arch = cd::require_kernel_arch(i); !arch)
      r.missing.push_back({"kernels", arch.error().message});
    r.missing.push_back({"calibrated_timestamps",
                         "CUDA has no calibrated timestamp query: pairs are bracketed %globaltimer "
                         "reads (estimated)"});
    r.missing.push_back({"disjoint_detection", std::string(kCudaNoDisjointReason)});
    out.push_back(std::move(r));
  }
  return out;
}

Result<int> find_cuda_device(const std::string& selector) {
  auto count = cd::device_count();
  if (!count) return count.error();
  std::vector<std::string> names;
  for (int i = 0; i < *count; ++i) {
    cudaDeviceProp p{};
    const cudaError_t e = cudaGetDeviceProperties(&p, i);
    if (e != cudaSuccess)
      return cd::cuda_fail("cudaGetDeviceProperties(" + std::to_string(i) + ")", e);
    names.emplace_back(p.name);
  }
  return cd::select_device_index(selector, names);
}

}  // namespace latlab
