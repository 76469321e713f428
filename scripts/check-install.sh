#!/usr/bin/env bash
# Builds latlab the ordinary way (CMake's default generator, no preset),
# installs it into a fresh prefix, then builds and runs examples/vulkan_zone
# against that prefix alone: a header, target or dependency missing from the
# install fails here; then the libraries alone, without Vulkan. Usage:
# scripts/check-install.sh (from anywhere).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD/build/install-check
jobs=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
# The check is about the default generator: a CMAKE_GENERATOR from the
# environment would hide exactly the failure it looks for.
unset CMAKE_GENERATOR
rm -rf "$root"
start=$SECONDS

# Tests and benchmarks are not installed; CUDA is off because nvcc would
# double the build time and the example uses Vulkan only (the CUDA target's
# export is the same code path as the others).
# Optimised with warnings as errors, as `make run` builds: -O2 warnings that a
# debug build never sees (GCC 12's maybe-uninitialized) fail here, not there.
cmake -S . -B "$root/latlab" -DLATLAB_BUILD_TESTS=OFF -DLATLAB_BUILD_BENCH=OFF \
  -DLATLAB_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLATLAB_WERROR=ON >/dev/null
cmake --build "$root/latlab" -j "$jobs"
cmake --install "$root/latlab" --prefix "$root/prefix" >/dev/null
echo "check-install: latlab built and installed after $((SECONDS - start)) s"

# -Werror for the example's own code only (installed headers are system headers to it).
cmake -S examples/vulkan_zone -B "$root/vulkan_zone" -DCMAKE_PREFIX_PATH="$root/prefix" \
  -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" >/dev/null
cmake --build "$root/vulkan_zone" -j "$jobs"
"$root/vulkan_zone/vulkan_zone"
echo "check-install: ok after $((SECONDS - start)) s"

# The libraries build without Vulkan (the CLI needs it): the latency engine,
# the profiler and the report must not reach a GPU API of their own.
cmake -S . -B "$root/no-vulkan" -DLATLAB_VULKAN=OFF -DLATLAB_CUDA=OFF -DLATLAB_BUILD_TESTS=OFF \
  -DLATLAB_BUILD_BENCH=OFF -DLATLAB_WERROR=ON >/dev/null
cmake --build "$root/no-vulkan" -j "$jobs"
echo "check-install: the libraries build without Vulkan after $((SECONDS - start)) s"
