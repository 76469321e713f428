// The backends latlab knows, as one table: the only place that spells their
// names. Commands parse --backend once into a Backend and look everything
// else up by it (open_latency_device, the CLI's profiling rigs).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "latlab/result.hpp"

namespace latlab {

enum class Backend { vulkan, cuda, gl, sim };

struct BackendInfo {
  Backend id = Backend::sim;
  std::string_view name;       // as --backend, JSON and tables spell it
  std::string_view alias;      // another accepted spelling ("opengl"); empty: none
  std::string_view api;        // for people: "Vulkan", "CUDA", "OpenGL (EGL)", "sim"
  bool built = false;          // compiled into this binary
  std::string_view not_built;  // why not, with what to do; empty when built
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
