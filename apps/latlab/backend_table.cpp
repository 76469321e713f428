// The CLI's backend table (backend_table.hpp).
#include "backend_table.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "latlab/bench/vulkan_rig.hpp"
#if LATLAB_HAVE_CUDA
#include "latlab/bench/cuda_rig.hpp"
#endif
#if LATLAB_HAVE_OPENGL
#include "latlab/bench/gl_rig.hpp"
#endif

namespace latlab::cli {
namespace {

// A backend this binary was built without (profile says so before opening).
[[maybe_unused]] std::unique_ptr<ProfileRig> not_built(const ProfileRigDesc& /*desc*/,
                                                       ProfileFailure& failure) {
  failure = {"this backend is not built", ProfileFailureKind::missing_capability};
  return nullptr;
}
#if !LATLAB_HAVE_CUDA
constexpr OpenProfileRig open_cuda_profile_rig = not_built;
#endif
#if !LATLAB_HAVE_OPENGL
constexpr OpenProfileRig open_gl_profile_rig = not_built;
#endif

constexpr const char* kCudaNoValidation =
    "--validation is a Vulkan option (the Khronos validation layer; on gl: KHR_debug); CUDA has "
    "no counterpart";

const std::array<CliBackend, 4> kCliBackends{{
    {.id = Backend::vulkan,
     .open_profile_rig = open_vulkan_profile_rig,
     .validation = "the Khronos validation layer",
     .queue_families = true,
     .present = true},
    {.id = Backend::cuda,
     .open_profile_rig = open_cuda_profile_rig,
     .profile_zones_note = " (stamp kernels)",
     .no_validation = kCudaNoValidation},
    {.id = Backend::gl,
     .open_profile_rig = open_gl_profile_rig,
     .validation = "KHR_debug",
     .validation_on = "on (KHR_debug)"},
    {.id = Backend::sim, .time_scale = true},
}};

bool accepts(BackendUse use, const CliBackend& b) {
  switch (use) {
    case BackendUse::profile:
      return b.open_profile_rig != nullptr;
    case BackendUse::any:
      return true;
  }
  return false;
}

// The backends `use` accepts, built or not, joined by `sep`.
std::string accepted_names(BackendUse use, const char* sep, bool built_only) {
  std::string out;
  for (const CliBackend& b : kCliBackends) {
    if (!accepts(use, b) || (built_only && !backend_info(b.id).built)) continue;
    if (!out.empty()) out += sep;
    out += backend_name(b.id);
  }
  return out;
}

}  // namespace

const CliBackend& cli_backend(Backend backend) {
  for (const CliBackend& b : kCliBackends) {
    if (b.id == backend) return b;
  }
  return kCliBackends.back();  // unreachable: every enumerator has a row
}

CLI::Option* add_backend_option(CLI::App* app, Backend& backend, BackendUse use,
                                const std::string& help, const std::string& flags) {
  const std::string choices = "{" + accepted_names(use, ",", false) + "}";
  const CLI::Validator check(
      [use, choices](std::string& name) -> std::string {
        const Result<Backend> b = parse_backend(name);
        if (!b) {
          return "unknown backend '" + name +
                 "'; this build has: " + accepted_names(use, ", ", true);
        }
        // The CLI takes each backend by its one name (the library also takes
        // aliases).
        if (!accepts(use, cli_backend(*b)) || name != backend_name(*b))
          return name + " not in " + choices;
        return "";
      },
      choices);
  return app
      ->add_option_function<std::string>(
          flags, [&backend](const std::string& name) { backend = *parse_backend(name); }, help)
      ->default_str(std::string(backend_name(backend)))
      ->check(check);
}

}  // namespace latlab::cli
