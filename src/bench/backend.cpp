// The backend table (backend.hpp).
#include "latlab/bench/backend.hpp"

#include <array>
#include <string>

namespace latlab {
namespace {

#ifndef LATLAB_HAVE_VULKAN
#define LATLAB_HAVE_VULKAN 0
#endif
#ifndef LATLAB_HAVE_CUDA
#define LATLAB_HAVE_CUDA 0
#endif
#ifndef LATLAB_HAVE_OPENGL
#define LATLAB_HAVE_OPENGL 0
#endif

constexpr std::array<BackendInfo, 4> kBackends{{
    {Backend::vulkan, "vulkan", "", "Vulkan", LATLAB_HAVE_VULKAN != 0,
     LATLAB_HAVE_VULKAN ? "" : "backend vulkan is not built (configure with -DLATLAB_VULKAN=ON)"},
    {Backend::cuda, "cuda", "", "CUDA", LATLAB_HAVE_CUDA != 0,
     LATLAB_HAVE_CUDA
         ? ""
         : "backend cuda is not built (configure with nvcc present or -DLATLAB_CUDA=ON)"},
    {Backend::gl, "gl", "opengl", "OpenGL (EGL)", LATLAB_HAVE_OPENGL != 0,
     LATLAB_HAVE_OPENGL
         ? ""
         : "backend gl is not built (configure with libegl-dev and libopengl-dev present)"},
    {Backend::sim, "sim", "", "sim", true, ""},
}};

}  // namespace

std::span<const BackendInfo> backends() { return kBackends; }

const BackendInfo& backend_info(Backend backend) {
  for (const BackendInfo& b : kBackends) {
    if (b.id == backend) return b;
  }
  return kBackends.back();  // unreachable: every enumerator has a row
}

std::string_view backend_name(Backend backend) { return backend_info(backend).name; }

std::string built_backend_names() {
  std::string out;
  for (const BackendInfo& b : kBackends) {
    if (!b.built) continue;
    if (!out.empty()) out += ", ";
    out += b.name;
  }
  return out;
}

Result<Backend> parse_backend(std::string_view name) {
  for (const BackendInfo& b : kBackends) {
    if (name == b.name || (!b.alias.empty() && name == b.alias)) return b.id;
  }
  return make_error("unknown backend '" + std::string(name) +
                    "'; this build has: " + built_backend_names());
}

}  // namespace latlab
