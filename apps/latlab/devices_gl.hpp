// `latlab devices`: the GL part (devices_gl.cpp), every EGL device with what
// latlab can time on it, or why GL is unavailable.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace latlab::cli {

struct GlListing {
  nlohmann::json devices = nlohmann::json::array();  // one object per EGL device, "backend": "gl"
  std::string unavailable;  // why none could be listed; empty when EGL answered
  std::string table;        // the devices as `latlab devices` prints them
};

// Probes every EGL device with a context (GlApiKind::automatic) and says which
// timer GlTimer::automatic (or LATLAB_GL_TIMER) would time with there.
GlListing list_gl();

}  // namespace latlab::cli
