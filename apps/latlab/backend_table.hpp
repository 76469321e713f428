// The CLI's side of the backend table (latlab/bench/backend.hpp names the
// backends and opens their latency devices): per backend, its profiling rig
// and what it cannot do, so that no command compares backend names. Every
// --backend option is parsed once, here, into a Backend.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "latlab/bench/backend.hpp"
#include "latlab/core/profile_rig.hpp"

namespace latlab::cli {

struct CliBackend {
  Backend id = Backend::sim;
  // `latlab profile`: opens the rig of the reference frame; null: profile
  // does not run on this backend.
  OpenProfileRig open_profile_rig = nullptr;
  const char* profile_zones_note = "";  // after "scoped GPU zones" in profile's first line
  // What --validation turns on ("on" / "on (KHR_debug)" in the settings
  // line); null: nothing, and `no_validation` says why.
  const char* validation = nullptr;
  const char* validation_on = "on";
  const char* no_validation = "";
  bool queue_families = false;  // profile --queues all and device lists
  bool present = false;         // run --present (a swapchain)
  bool time_scale = false;      // run --time-scale (scripted time)
};

const CliBackend& cli_backend(Backend backend);

// Which commands accept a backend; the --backend check says which do not.
enum class BackendUse {
  profile,  // vulkan, cuda, gl
  any,      // every backend, sim included
};

// Adds --backend (`flags`, CLI11's spelling) to `app`, parsed into `backend`
// (its default shown): an unknown name fails with the backends built into
// this binary, a backend that `use` excludes with the ones it accepts.
CLI::Option* add_backend_option(CLI::App* app, Backend& backend, BackendUse use,
                                const std::string& help, const std::string& flags = "--backend");

}  // namespace latlab::cli
