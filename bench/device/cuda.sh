#!/usr/bin/env bash
# The CUDA backend on a real GPU (the H200 machine): builds the CUDA tests and
# the comparison program, runs both, and keeps their output.
#
#   bench/device/cuda.sh [REPS]      (REPS for cuda_vs_events, default 200)
#
# Needs what scripts/install-deps.sh lists plus nvcc at /usr/local/cuda and an
# NVIDIA driver. Output goes to $OUT if set (the device tool's folder), else
# build/device-cuda/out. Exit status: non-zero if the build, a test, or the
# comparison program failed. Takes about 2-4 minutes on 16 cores.
set -uo pipefail
cd "$(dirname "$0")/../.."

reps="${1:-200}"
build=build/device-cuda
out="${OUT:-$build/out}"
mkdir -p "$out"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/latlab-xdg-$(id -u)}"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  uname -a
  nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.mem,temperature.gpu --format=csv 2>&1
  /usr/local/cuda/bin/nvcc --version | tail -2
} | tee "$out/machine.txt"

status=0
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLATLAB_WERROR=ON \
      -DLATLAB_CUDA=ON -DLATLAB_BUILD_TESTS=ON -DLATLAB_BUILD_BENCH=ON >"$out/configure.log" 2>&1 \
  || { echo "configure failed: see $out/configure.log"; tail -20 "$out/configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target latlab_cuda_tests latlab_cuda_vs_events >"$out/build.log" 2>&1 \
  || { echo "build failed: see $out/build.log"; tail -40 "$out/build.log"; exit 1; }

# Tests: every test of the binary (skips print their reason), with XML.
"$build/tests/latlab_cuda_tests" --gtest_output="xml:$out/cuda_tests.xml" 2>&1 | tee "$out/cuda_tests.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

# Comparison program: latlab timings beside cudaEventElapsedTime, launch
# latency on the host clock, latency-device frames.
"$build/bench/cuda_vs_events" --reps "$reps" 2>&1 | tee "$out/cuda_vs_events.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "cuda.sh: exit $status; outputs in $out"
exit $status
