// The backends latlab knows, as one table: the only place that spells their
// names. Commands parse --backend once into a Backend and look everything
// else up by it (open_latency_device, the profiling rigs, what each can do).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "latlab/core/profile_rig.hpp"
#include "latlab/result.hpp"

namespace latlab {

enum class Backend { vulkan, cuda, gl, sim };

struct BackendInfo {
  Backend id = Backend::sim;
  std::string_view name = "";       // as --backend, JSON and tables spell it
  std::string_view alias = "";      // another accepted spelling ("opengl"); empty: none
  std::string_view api = "";        // for people: "Vulkan", "CUDA", "OpenGL (EGL)", "sim"
  bool built = false;               // compiled into this binary
  std::string_view not_built = "";  // why not, with what to do; empty when built
  // `latlab profile`: opens the rig of the reference frame; null: profile
  // does not run on this backend.
  OpenProfileRig open_profile_rig = nullptr;
  std::string_view profile_zones_note = "";  // after "scoped GPU zones" in profile's first line
  // What --validation turns on (the settings line says `validation_on`);
  // empty: nothing, and `no_validation` says why.
  std::string_view validation = "";
  std::string_view validation_on = "on";
  std::string_view no_validation = "";
  bool queue_families = false;  // profile --queues all and device lists
  bool present = false;         // run --present (a swapchain)
  bool time_scale = false;      // run --time-scale (scripted time)
};

// Every backend, built or not, in the order --help lists them.
std::span<const BackendInfo> backends();
const BackendInfo& backend_info(Backend backend);
std::string_view backend_name(Backend backend);
// "vulkan, gl, sim": the backends built into this binary.
std::string built_backend_names();
// The backend a name or alias spells; an error naming the backends built into
// this binary when it spells none. A known backend that is not built parses:
// opening it says why it is missing.
Result<Backend> parse_backend(std::string_view name);

}  // namespace latlab
