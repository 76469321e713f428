#!/usr/bin/env bash
# Installs the Debian 12 packages latlab needs to build and test, only those
# that are missing. Usable by hand: `sudo scripts/install-deps.sh`.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache
  libvulkan-dev glslc vulkan-validationlayers mesa-vulkan-drivers vulkan-tools
  # the GL backend: EGL/GL/GLES headers, GLVND's libEGL and libOpenGL, Mesa's llvmpipe
  libegl-dev libgl-dev libopengl-dev libgles-dev libegl-mesa0 libgl1-mesa-dri
  nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libsqlite3-dev libpq-dev postgresql
  chromium  # the HTML report's browser test (tests/e2e/report_browser_test.cpp)
  libxcb1-dev libxcb-shm0-dev xvfb x11-apps
  mesa-utils  # glxgears and es2gears_x11: real GL programs for `latlab capture` (tests/e2e/capture_gl_test.cpp)
  glmark2-x11 glmark2-es2-x11 mangohud  # programs that load GL themselves, another GL preload (tests/e2e/capture_programs_test.cpp)
  gfxreconstruct  # a replay that submits without presenting (tests/e2e/capture_test.cpp), bench/dev/capture_overhead.sh
  libxcb-damage0-dev  # capture's X11 screen observer (optional: without it, unavailable with the reason)
  libwayland-dev wayland-protocols  # run --present's Wayland window and wp_presentation observer (optional: X11 only without)
  valgrind  # a capture test checks that the GL interposer never touches a Wayland display the program freed (tests/e2e/capture_wayland_test.cpp)
  weston  # a headless Wayland compositor for capture's wp_presentation tests (tests/e2e/capture_wayland_test.cpp); vkcube-wayland and es2gears_wayland come with vulkan-tools and mesa-utils
  libxi-dev libxtst-dev  # capture --input: XInput2 recorder, XTest injector (optional: without them, unavailable with the reason)
  xterm  # a program nobody here wrote for capture --input's reaction mode (tests/e2e/capture_input_test.cpp)
  clang libclang-rt-14-dev  # make fuzz: clang 14 and its libFuzzer/sanitizer runtimes
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run as root (or: sudo $0) to install them" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
