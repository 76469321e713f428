#include "latlab/bench/device_listing.hpp"

#include <utility>

namespace latlab {
namespace {

void list_vulkan(DeviceListing& out) {
  if (auto enumerated = enumerate_vulkan_devices(); enumerated) {
    out.vulkan = std::move(enumerated.value());
  } else {
    out.vulkan_unavailable = enumerated.error().message;
  }
  if (out.vulkan.empty() && out.vulkan_unavailable.empty()) {
    out.vulkan_unavailable =
        "no Vulkan device found (no driver, or the driver sees no device). "
        "For a software device install Mesa's lavapipe (apt install mesa-vulkan-drivers)";
  }
}

void list_cuda(DeviceListing& out) {
#if LATLAB_HAVE_CUDA
  if (auto devices = enumerate_cuda_devices()) {
    out.cuda = std::move(devices.value());
  } else {
    out.cuda_unavailable = devices.error().message;
  }
#else
  out.cuda_unavailable =
      "the CUDA backend is not built (configure with nvcc present or -DLATLAB_CUDA=ON)";
#endif
}

void list_gl(DeviceListing& out) {
#if LATLAB_HAVE_OPENGL
  if (auto devices = enumerate_gl_devices(); !devices) {
    out.gl_unavailable = devices.error().message;
  } else if (devices->empty()) {
    out.gl_unavailable =
        "EGL lists no device (install Mesa's EGL driver: apt install libegl-mesa0 libgl1-mesa-dri)";
  } else {
    out.gl = std::move(devices.value());
  }
#else
  out.gl_unavailable =
      "the GL backend is not built (configure with libegl-dev and libopengl-dev present)";
#endif
}

}  // namespace

DeviceListing list_devices() {
  DeviceListing out;
  list_vulkan(out);
  list_cuda(out);
  list_gl(out);
  for (const VulkanDeviceReport& d : out.vulkan) {
    out.physical.push_back({std::string(backend_name(Backend::vulkan)), static_cast<int>(d.index),
                            d.name, d.device_uuid, normalize_pci_bus_id(d.pci_bus_id)});
  }
  for (const CudaDeviceReport& d : out.cuda) {
    out.physical.push_back({std::string(backend_name(Backend::cuda)), d.index, d.name, d.uuid,
                            normalize_pci_bus_id(d.pci_bus_id)});
  }
  for (const GlDeviceReport& d : out.gl) {
    out.physical.push_back({std::string(backend_name(Backend::gl)), d.index, d.renderer,
                            d.device_uuid,
                            normalize_pci_bus_id(pci_bus_id_of_drm_node(d.drm_node))});
  }
  assign_physical_groups(out.physical);
  return out;
}

std::vector<PhysicalIdentity> list_physical_devices(Backend backend) {
  if (backend == Backend::sim) return {};
  return list_devices().physical;
}

Result<std::vector<std::string>> device_names(Backend backend) {
  if (!backend_info(backend).built) return make_error(std::string(backend_info(backend).not_built));
  std::vector<std::string> names;
  switch (backend) {
    case Backend::vulkan: {
      auto devices = enumerate_vulkan_devices();
      if (!devices) return devices.error();
      for (const auto& d : *devices) names.push_back(d.name);
      break;
    }
    case Backend::cuda: {
#if LATLAB_HAVE_CUDA
      auto devices = enumerate_cuda_devices();
      if (!devices) return devices.error();
      for (const auto& d : *devices) names.push_back(d.name);
#endif
      break;
    }
    case Backend::gl: {
#if LATLAB_HAVE_OPENGL
      auto devices = enumerate_gl_devices();
      if (!devices) return devices.error();
      for (const auto& d : *devices)
        names.push_back(d.renderer.empty() ? d.egl_vendor : d.renderer);
#endif
      break;
    }
    case Backend::sim:
      names = {"latlab simulated device 0", "latlab simulated device 1"};
      break;
  }
  return names;
}

}  // namespace latlab
