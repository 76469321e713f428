// What the `latlab capture` e2e tests need of the machine, and why each skips
// where it is missing: not a sanitizer build, the captured program on PATH,
// lavapipe, an Xvfb server (xvfb_server.hpp). Shared by capture_test.cpp,
// capture_results_test.cpp, capture_screen_test.cpp and capture_gl_test.cpp.
#pragma once

#include <unistd.h>

#include <string>

#include "cli_run_helpers.hpp"
#include "xvfb_server.hpp"

namespace latlab::e2e {

// Set in sanitizer builds (the asan and tsan presets), with the reason the
// capture tests skip there: capture loads latlab's layer and LD_PRELOADs its
// GL interposer, both built with the sanitizer, into the captured program,
// which is not (an ASan-built interposer aborts it: "ASan runtime does not
// come first"). nullptr in other builds.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LATLAB_E2E_SANITIZER_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define LATLAB_E2E_SANITIZER_BUILD 1
#endif
#endif
#ifdef LATLAB_E2E_SANITIZER_BUILD
inline constexpr const char* kSanitizerBuild =
    "a sanitizer build: latlab's layer and GL interposer cannot load into uninstrumented "
    "programs";
#else
inline constexpr const char* kSanitizerBuild = nullptr;
#endif

// Mesa's lavapipe: the vkcube tests count frames against vkcube's own
// count, which needs a driver that presents to Xvfb (NVIDIA's X11 WSI does
// not), so they run on lavapipe only.
inline constexpr const char* kLavapipeIcd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

// Whether `program` is on PATH.
inline bool on_path(const char* program) {
  std::string out;
  return run_shell(std::string("command -v ") + program + " >/dev/null 2>&1", out) == 0;
}

// Why vkcube cannot be captured on lavapipe here (a sanitizer build, no
// vkcube, no lavapipe), or empty. Xvfb is checked apart: the caller owns the
// server (XvfbServer::why_not()).
inline std::string vkcube_skip_reason() {
  if (kSanitizerBuild != nullptr) return kSanitizerBuild;
  if (!on_path("vkcube")) return "vkcube not installed (vulkan-tools)";
  if (access(kLavapipeIcd, R_OK) != 0) return "lavapipe not installed (mesa-vulkan-drivers)";
  return {};
}

// The environment of a capture of vkcube on `xvfb` through lavapipe.
inline std::string vkcube_env(const XvfbServer& xvfb) {
  return "DISPLAY=" + xvfb.display() + " VK_ICD_FILENAMES=" + kLavapipeIcd;
}

inline constexpr const char* kMesaEglVendor = "/usr/share/glvnd/egl_vendor.d/50_mesa.json";

// The environment of a capture of a GL program on `xvfb`: Mesa's software
// renderer (GLX: what Xvfb offers anyway; EGL: Mesa's vendor library, not a
// GPU vendor's, whose X11 support may not work against Xvfb).
inline std::string gl_env(const XvfbServer& xvfb) {
  std::string env = "DISPLAY=" + xvfb.display() + " LIBGL_ALWAYS_SOFTWARE=1";
  if (access(kMesaEglVendor, R_OK) == 0)
    env += std::string(" __EGL_VENDOR_LIBRARY_FILENAMES=") + kMesaEglVendor;
  return env;
}

}  // namespace latlab::e2e
