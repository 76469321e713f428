#!/usr/bin/env bash
# Builds latlab the ordinary way (CMake's default generator, no preset, no
# build type: it must default to an optimised one), installs it into a fresh
# prefix, then, against that prefix alone:
#  - the timing library's link interface (scripts/link-interface): the link
#    closure of latlab::vulkan, opengl, cuda and profiler holds only latlab,
#    threads and the GPU API, and find_package of those components succeeds
#    with fmt, nlohmann_json, SQLite3 and (but for cuda) CUDAToolkit made
#    unfindable;
#  - a program built with its own -DLATLAB_ENABLE_PROFILER=0 has its zones
#    compiled out (scripts/profiler-off);
#  - the examples, built with -Werror and those packages unfindable too, and
#    run: vulkan_zone, vulkan_attach under the Khronos validation layer (any
#    validation message fails), gl_attach, cuda_attach (built where the
#    install has CUDA, run where a GPU answers); `ldd` of each shows no
#    libfmt, libsqlite3 or libpq, and none but cuda_attach libcudart;
# then the libraries alone, without Vulkan. A header, target or dependency
# missing from the install, or one too many, fails here. Usage:
# scripts/check-install.sh (from anywhere). LATLAB_CHECK_CUDA=OFF builds
# without the CUDA backend (default: CMake's AUTO, as a plain build does).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD/build/install-check
jobs=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
# The check is about the default generator: a CMAKE_GENERATOR from the
# environment would hide exactly the failure it looks for.
unset CMAKE_GENERATOR
rm -rf "$root"
start=$SECONDS
fail() {
  echo "check-install: FAIL: $*" >&2
  exit 1
}

# Tests and benchmarks are not installed. No CMAKE_BUILD_TYPE: the project
# must pick an optimised one itself. Warnings as errors, as `make run`
# builds: -O2 warnings that a debug build never sees (GCC 12's
# maybe-uninitialized) fail here, not there.
cuda_args=()
[[ "${LATLAB_CHECK_CUDA:-AUTO}" == OFF ]] && cuda_args=(-DLATLAB_CUDA=OFF)
cmake -S . -B "$root/latlab" -DLATLAB_BUILD_TESTS=OFF -DLATLAB_BUILD_BENCH=OFF -DLATLAB_WERROR=ON \
  "${cuda_args[@]}" >/dev/null
grep -q '^CMAKE_BUILD_TYPE:STRING=RelWithDebInfo$' "$root/latlab/CMakeCache.txt" ||
  fail "a plain configure did not default CMAKE_BUILD_TYPE to RelWithDebInfo"
cmake --build "$root/latlab" -j "$jobs"
cmake --install "$root/latlab" --prefix "$root/prefix" >/dev/null
echo "check-install: latlab built and installed after $((SECONDS - start)) s"
config=$(find "$root/prefix" -name latlabConfig.cmake | head -n 1)
installed=$(sed -n 's/^set(latlab_COMPONENTS_BUILT \(.*\))$/\1/p' "$config" | tr ';' ' ')
has() { [[ " $installed " == *" $1 "* ]]; }
echo "check-install: components: $installed"

# What the timing library must not need (the cuda component needs CUDAToolkit).
not_needed=(-DCMAKE_DISABLE_FIND_PACKAGE_fmt=ON -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON
  -DCMAKE_DISABLE_FIND_PACKAGE_SQLite3=ON -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON)
no_cuda=(-DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON)
timing="vulkan;profiler"
has opengl && timing+=";opengl"
cmake -S scripts/link-interface -B "$root/link-interface" -DCMAKE_PREFIX_PATH="$root/prefix" \
  "-DLATLAB_CHECK=$timing" "${not_needed[@]}" "${no_cuda[@]}" | grep 'link closure'
if has cuda; then
  cmake -S scripts/link-interface -B "$root/link-interface-cuda" -DCMAKE_PREFIX_PATH="$root/prefix" \
    "-DLATLAB_CHECK=cuda;profiler" "${not_needed[@]}" | grep 'link closure'
fi

# The program's -DLATLAB_ENABLE_PROFILER=0 wins over the package: profiler-off
# static_asserts it (and builds with -Werror, where a redefinition warns), and
# its binary holds no zone code.
cmake -S scripts/profiler-off -B "$root/profiler-off" -DCMAKE_PREFIX_PATH="$root/prefix" \
  -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" "${not_needed[@]}" "${no_cuda[@]}" >/dev/null
cmake --build "$root/profiler-off" -j "$jobs"
if nm -C "$root/profiler-off/profiler_off" | grep -E 'latlab::(GpuZone|CpuZone)::'; then
  fail "profiler-off: zone code is in a program built with -DLATLAB_ENABLE_PROFILER=0 (above)"
fi
"$root/profiler-off/profiler_off"
echo "check-install: a program's -DLATLAB_ENABLE_PROFILER=0 compiles its zones out"

# ldd of an example: none of the libraries the timing library must not bring.
check_ldd() {
  local binary=$1 forbidden='libfmt|libsqlite3|libpq|libnlohmann'
  [[ "${2:-}" != cuda ]] && forbidden+='|libcudart'
  if ldd "$binary" | grep -E "$forbidden"; then
    fail "$(basename "$binary") links a library the timing library must not bring (above)"
  fi
}
# Builds example $1 with -Werror (its own code; installed headers are system
# headers to it) and the extra configure arguments after it.
build_example() {
  local name=$1
  shift
  cmake -S "examples/$name" -B "$root/$name" -DCMAKE_PREFIX_PATH="$root/prefix" \
    -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" "$@" >/dev/null
  cmake --build "$root/$name" -j "$jobs"
}

build_example vulkan_zone
"$root/vulkan_zone/vulkan_zone"

build_example vulkan_attach "${not_needed[@]}" "${no_cuda[@]}"
check_ldd "$root/vulkan_attach/vulkan_attach"
log=$root/vulkan_attach/run.log
set +e
VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation "$root/vulkan_attach/vulkan_attach" \
  "$root/vulkan_attach/trace.json" >"$log" 2>&1
rc=$?
set -e
cat "$log"
[[ $rc -eq 0 ]] || fail "vulkan_attach exited $rc under the validation layer"
if grep -qi 'validation' "$log"; then fail "vulkan_attach: the validation layer reported (above)"; fi
echo "check-install: vulkan_attach ran clean under VK_LAYER_KHRONOS_validation"

if has opengl; then
  build_example gl_attach "${not_needed[@]}" "${no_cuda[@]}"
  check_ldd "$root/gl_attach/gl_attach"
  "$root/gl_attach/gl_attach" "$root/gl_attach/trace.json"
fi

if has cuda; then
  build_example cuda_attach "${not_needed[@]}"
  check_ldd "$root/cuda_attach/cuda_attach" cuda
  set +e
  "$root/cuda_attach/cuda_attach" "$root/cuda_attach/trace.json"
  rc=$?
  set -e
  if [[ $rc -eq 3 ]]; then
    echo "check-install: cuda_attach built; not run: no usable CUDA device here"
  elif [[ $rc -ne 0 ]]; then
    fail "cuda_attach exited $rc"
  fi
fi
echo "check-install: ok after $((SECONDS - start)) s"

# The libraries build without Vulkan (the CLI needs it): the benchmark engine,
# the profiler and the report must not reach a GPU API of their own.
cmake -S . -B "$root/no-vulkan" -DLATLAB_VULKAN=OFF -DLATLAB_CUDA=OFF -DLATLAB_BUILD_TESTS=OFF \
  -DLATLAB_BUILD_BENCH=OFF -DLATLAB_WERROR=ON >/dev/null
cmake --build "$root/no-vulkan" -j "$jobs"
echo "check-install: the libraries build without Vulkan after $((SECONDS - start)) s"
