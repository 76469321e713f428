#!/usr/bin/env bash
# The GPU profiler on CUDA on a real GPU (the H200 machine, device tool):
#   * the CUDA profiler tests (ProfilerCuda*: nested zones, a zone around a
#     known spin, two threads on two streams, frames in flight; ProfileCudaCli*:
#     `latlab profile --backend cuda --json` and its trace);
#   * `latlab profile --backend cuda --frames 600 --json` (defaults: 128x128,
#     complexity 8, 3 frames in flight);
#   * the same at 1920x1080, complexity 256, as a table with a Chrome trace,
#     beside bench/device/profiler.sh's Vulkan runs.
# Every step is bounded by `timeout`: a hang costs its budget, not the round.
#
#   bench/device/profiler_cuda.sh              builds latlab and latlab_cuda_tests (release preset)
#   LATLAB_BINARY=.devbin/latlab LATLAB_CUDA_TESTS=.devbin/latlab_cuda_tests bench/device/profiler_cuda.sh
#                                              prebuilt binaries, no build (h200_round.sh: ROUND_STEPS=profiler_cuda)
#
# Output in $OUT (or ./out): machine.txt, profiler_cuda_tests.{txt,json},
# profile_cuda.json (+ .log: stderr), profile_cuda_c256.txt, profile_cuda_c256_trace.json.
# Exit status: non-zero if the build, a test or a profile run failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-out}
mkdir -p "$out"
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/latlab-xdg-$(id -u)}
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
T() { local s=$1; shift; timeout -k 5 "$s" "$@"; }

bin=${LATLAB_BINARY:-}
tests=${LATLAB_CUDA_TESTS:-}
if [[ -z $bin || -z $tests ]]; then
  T 300 cmake --preset release >"$out/configure.log" 2>&1 \
    || { echo "configure failed: see $out/configure.log"; tail -20 "$out/configure.log"; exit 1; }
  T 900 cmake --build --preset release -j"$(nproc)" --target latlab latlab_cuda_tests >"$out/build.log" 2>&1 \
    || { echo "build failed: see $out/build.log"; tail -40 "$out/build.log"; exit 1; }
  bin=build/release/apps/latlab/latlab
  tests=build/release/tests/latlab_cuda_tests
fi

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  uname -a
  nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.mem,temperature.gpu --format=csv 2>&1
} >"$out/machine.txt"

status=0
# The CLI tests run the binary named by LATLAB_BINARY.
LATLAB_BINARY="$bin" T "${PROFILER_CUDA_TEST_S:-120}" "$tests" --gtest_filter='ProfilerCuda*:ProfileCudaCli*' \
  --gtest_output=json:"$out/profiler_cuda_tests.json" >"$out/profiler_cuda_tests.txt" 2>&1
rc=$?; echo "rc=$rc" >>"$out/profiler_cuda_tests.txt"; [[ $rc -eq 0 ]] || status=1

T 60 "$bin" profile --backend cuda --frames 600 --json >"$out/profile_cuda.json" 2>"$out/profile_cuda.log"
rc=$?; echo "rc=$rc" >>"$out/profile_cuda.log"; [[ $rc -eq 0 ]] || status=1

T 60 "$bin" profile --backend cuda --frames 600 --size 1920x1080 --complexity 256 \
  --trace "$out/profile_cuda_c256_trace.json" >"$out/profile_cuda_c256.txt" 2>&1
rc=$?; echo "rc=$rc" >>"$out/profile_cuda_c256.txt"; [[ $rc -eq 0 ]] || status=1

grep -E "tests? (passed|failed|skipped)|FAILED|SKIPPED" "$out/profiler_cuda_tests.txt"
cat "$out/profile_cuda_c256.txt"
echo "profiler_cuda.sh: exit $status; outputs in $out"
exit $status
