// Every device of every GPU API this build has (`latlab devices`), with what
// latlab can time on each, or why an API lists none; and which entries are
// the same physical GPU. The JSON and text are report/devices_report.hpp.
#pragma once

#include <string>
#include <vector>

#include "latlab/bench/physical_devices.hpp"
#include "latlab/cuda.hpp"
#include "latlab/opengl.hpp"
#include "latlab/vulkan.hpp"

namespace latlab {

struct DeviceListing {
  std::vector<VulkanDeviceReport> vulkan;
  std::vector<CudaDeviceReport> cuda;
  std::vector<GlDeviceReport> gl;
  // Why an API lists no device; "" when it answered with devices. An API
  // that fails outright (a broken driver file) does not hide the others.
  std::string vulkan_unavailable, cuda_unavailable, gl_unavailable;
  // One entry per device above, Vulkan's first, then CUDA's, then GL's,
  // grouped by physical device.
  std::vector<PhysicalIdentity> physical;
  bool empty() const { return physical.empty(); }
};

// Enumerates the APIs: creates no Vulkan or CUDA device; GL probes each EGL
// device with a context (GlApiKind::automatic).
DeviceListing list_devices();

// list_devices().physical: every device of every API, grouped; empty for the
// sim backend (its devices are no physical GPU, and nothing is enumerated).
std::vector<PhysicalIdentity> list_physical_devices(Backend backend);

// The names of `backend`'s devices, by index (`--device N`), or why they
// cannot be listed (the backend is not built, the API fails).
Result<std::vector<std::string>> device_names(Backend backend);

}  // namespace latlab
