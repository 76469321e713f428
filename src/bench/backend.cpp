// The backend table (backend.hpp).
#include "latlab/bench/backend.hpp"

#include <array>
#include <memory>
#include <string>

#if LATLAB_HAVE_VULKAN
#include "latlab/bench/vulkan_rig.hpp"
#endif
#if LATLAB_HAVE_CUDA
#include "latlab/bench/cuda_rig.hpp"
#endif
#if LATLAB_HAVE_OPENGL
#include "latlab/bench/gl_rig.hpp"
#endif

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

// A backend this binary was built without (profile says so before opening).
[[maybe_unused]] std::unique_ptr<ProfileRig> not_built(const ProfileRigDesc& /*desc*/,
                                                       ProfileFailure& failure) {
  failure = {"this backend is not built", ProfileFailureKind::missing_capability};
  return nullptr;
}
#if !LATLAB_HAVE_VULKAN
constexpr OpenProfileRig open_vulkan_profile_rig = not_built;
#endif
#if !LATLAB_HAVE_CUDA
constexpr OpenProfileRig open_cuda_profile_rig = not_built;
#endif
#if !LATLAB_HAVE_OPENGL
constexpr OpenProfileRig open_gl_profile_rig = not_built;
#endif

constexpr std::array<BackendInfo, 4> kBackends{{
    {.id = Backend::vulkan,
     .name = "vulkan",
     .api = "Vulkan",
     .built = LATLAB_HAVE_VULKAN != 0,
     .not_built = LATLAB_HAVE_VULKAN
                      ? ""
                      : "backend vulkan is not built (configure with -DLATLAB_VULKAN=ON)",
     .open_profile_rig = open_vulkan_profile_rig,
     .validation = "the Khronos validation layer",
     .queue_families = true,
     .present = true},
    {.id = Backend::cuda,
     .name = "cuda",
     .api = "CUDA",
     .built = LATLAB_HAVE_CUDA != 0,
     .not_built =
         LATLAB_HAVE_CUDA
             ? ""
             : "backend cuda is not built (configure with nvcc present or -DLATLAB_CUDA=ON)",
     .open_profile_rig = open_cuda_profile_rig,
     .profile_zones_note = " (stamp kernels)",
     .no_validation = "--validation is a Vulkan option (the Khronos validation layer; on gl: "
                      "KHR_debug); CUDA has no counterpart"},
    {.id = Backend::gl,
     .name = "gl",
     .alias = "opengl",
     .api = "OpenGL (EGL)",
     .built = LATLAB_HAVE_OPENGL != 0,
     .not_built =
         LATLAB_HAVE_OPENGL
             ? ""
             : "backend gl is not built (configure with libegl-dev and libopengl-dev present)",
     .open_profile_rig = open_gl_profile_rig,
     .validation = "KHR_debug",
     .validation_on = "on (KHR_debug)"},
    {.id = Backend::sim, .name = "sim", .api = "sim", .built = true, .time_scale = true},
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
