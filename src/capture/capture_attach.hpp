// What `latlab capture` puts into the program: the Vulkan layer's manifest
// folder and the GL interposer, found beside the installed latlab or in the
// build tree, and the child's environment that loads them.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace latlab::capture {

struct Attachments {
  std::string layer_dir;      // folder of VkLayer_latlab_capture.json; "" not found
  std::string gl_interposer;  // path of libLatlabGlCapture.so; "" not found
  // What was not found: {"vulkan_layer" | "gl_interposer", why}.
  std::vector<std::pair<std::string, std::string>> missing;
};

// Looks for both: $LATLAB_CAPTURE_LAYER_DIR / $LATLAB_CAPTURE_GL_DIR when set
// (an explicit choice is never overridden), else ../share/latlab/layers
// beside this executable, then the build tree.
Attachments find_attachments();

// In the forked child, before exec: the record socket's descriptor and the
// variables that load what `a` found. Not async-signal-safe (setenv): call
// it only in the child of a single-threaded fork, or in one that execs.
void set_child_environment(const Attachments& a, int record_fd);

}  // namespace latlab::capture
