#include "capture/capture_attach.hpp"

#include <cstdlib>
#include <filesystem>
#include <optional>

#include "capture/capture_record.hpp"

#ifndef LATLAB_CAPTURE_BUILD_LAYER_DIR
#define LATLAB_CAPTURE_BUILD_LAYER_DIR ""
#endif
#ifndef LATLAB_CAPTURE_BUILD_GL_DIR
#define LATLAB_CAPTURE_BUILD_GL_DIR ""
#endif

namespace latlab::capture {
namespace {

namespace fs = std::filesystem;

constexpr const char* kManifest = "VkLayer_latlab_capture.json";
constexpr const char* kGlInterposer = "libLatlabGlCapture.so";

std::vector<fs::path> search_dirs(const char* env, const char* build_dir) {
  if (const char* e = std::getenv(env); e != nullptr && *e != '\0') return {fs::path(e)};
  std::vector<fs::path> dirs;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path().parent_path() / "share" / "latlab" / "layers");
  if (*build_dir != '\0') dirs.emplace_back(build_dir);
  return dirs;
}

// The folder of `dirs` that holds `file`, or none.
std::optional<fs::path> first_with(const std::vector<fs::path>& dirs, const char* file) {
  std::error_code ec;
  for (const auto& d : dirs) {
    if (fs::exists(d / file, ec)) return d;
  }
  return std::nullopt;
}

std::string prepend(const char* var, const std::string& value, char sep) {
  const char* old = std::getenv(var);
  return old == nullptr || *old == '\0' ? value : value + sep + old;
}

}  // namespace

Attachments find_attachments() {
  Attachments a;
  if (auto d = first_with(search_dirs("LATLAB_CAPTURE_LAYER_DIR", LATLAB_CAPTURE_BUILD_LAYER_DIR),
                          kManifest)) {
    a.layer_dir = d->string();
  } else {
    a.missing.emplace_back(
        "vulkan_layer", std::string("the layer's manifest ") + kManifest +
                            " is not installed beside latlab (../share/latlab/layers) nor in the "
                            "build tree (set LATLAB_CAPTURE_LAYER_DIR to its folder): Vulkan "
                            "programs are not captured");
  }
  if (auto d = first_with(search_dirs("LATLAB_CAPTURE_GL_DIR", LATLAB_CAPTURE_BUILD_GL_DIR),
                          kGlInterposer)) {
    std::error_code ec;
    a.gl_interposer = fs::absolute(*d / kGlInterposer, ec).string();
  } else {
    a.missing.emplace_back("gl_interposer",
                           std::string("the GL interposer ") + kGlInterposer +
                               " is not installed beside latlab nor in the build tree (set "
                               "LATLAB_CAPTURE_GL_DIR to its folder): OpenGL programs are not "
                               "captured");
  }
  return a;
}

void set_child_environment(const Attachments& a, int record_fd) {
  setenv(kCaptureFdEnv, std::to_string(record_fd).c_str(), 1);
  if (!a.layer_dir.empty()) {
    setenv("VK_ADD_LAYER_PATH", prepend("VK_ADD_LAYER_PATH", a.layer_dir, ':').c_str(), 1);
    // Loaders before VK_ADD_LAYER_PATH (Debian 12's 1.3.239 among them)
    // search only VK_LAYER_PATH when it is set.
    if (const char* lp = std::getenv("VK_LAYER_PATH"); lp != nullptr && *lp != '\0')
      setenv("VK_LAYER_PATH", prepend("VK_LAYER_PATH", a.layer_dir, ':').c_str(), 1);
    setenv("VK_INSTANCE_LAYERS",
           prepend("VK_INSTANCE_LAYERS", "VK_LAYER_LATLAB_capture", ':').c_str(), 1);
  }
  // The GL interposer before the preloads already there: another
  // interposer (MangoHud) calls the driver's swap itself, so one listed
  // first would hide every swap from latlab's; first, latlab's wrapper
  // forwards to theirs.
  if (!a.gl_interposer.empty())
    setenv("LD_PRELOAD", prepend("LD_PRELOAD", a.gl_interposer, ':').c_str(), 1);
}

}  // namespace latlab::capture
