#!/usr/bin/env bash
# The OpenGL backend (EGL, no window) on a real GPU (the H200 machine, device
# tool), from prebuilt binaries (bench/device/pack.sh; h200_round.sh sets the
# NVIDIA EGL vendor file):
#   * the GL tests (latlab_opengl_tests: pool, slots, latency device,
#     profiler zones, `latlab profile --backend gl` CLI), KHR_debug on;
#   * `latlab profile --backend gl` at 128x128 (JSON) and 1920x1080
#     complexity 256 (table + Chrome trace), --validation;
#   * `latlab run --backend gl`: baseline with --bare (1000 frames, seed 1,
#     8-12 ms, as bench/device/latency.sh), then latency (baseline + loaded);
#   * `latlab calibrate-load --backend gl`, `latlab clocks --backend gl`.
# Every step is bounded by `timeout`: a hang costs its budget, not the round.
#
#   LATLAB_BINARY=.devbin/latlab LATLAB_GL_TESTS=.devbin/latlab_opengl_tests OUT=out bench/device/gl.sh
#
# Output in $OUT: gl_tests.{txt,json}, profile_gl*.{json,txt,log},
# run_gl_baseline.{json,csv,txt}, run_gl_latency.{json,csv,txt},
# load_gl.{json,log}, clocks_gl.{json,log}; each .txt ends with "rc=N".
# Exit status: non-zero if a step failed.
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/latlab-xdg-$(id -u)}
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
T() { local s=$1; shift; timeout -k 5 "$s" "$@"; }
bin=${LATLAB_BINARY:?LATLAB_BINARY: the latlab binary}
tests=${LATLAB_GL_TESTS:?LATLAB_GL_TESTS: the latlab_opengl_tests binary}
status=0
step() { local rc=$1 f=$2; echo "rc=$rc" >> "$f"; [[ $rc -eq 0 ]] || status=1; }

T "${GL_TEST_S:-180}" env LATLAB_BINARY="$bin" "$tests" --gtest_output=json:"$out/gl_tests.json" > "$out/gl_tests.txt" 2>&1
step $? "$out/gl_tests.txt"

T 60 "$bin" profile --backend gl --validation --frames 600 --json > "$out/profile_gl.json" 2> "$out/profile_gl.log"
step $? "$out/profile_gl.log"
T 90 "$bin" profile --backend gl --validation --frames 600 --size 1920x1080 --complexity 256 \
  --trace "$out/profile_gl_c256_trace.json" > "$out/profile_gl_c256.txt" 2>&1
step $? "$out/profile_gl_c256.txt"

T 120 "$bin" run --backend gl --mode baseline --bare --frames "${GL_FRAMES:-1000}" --blocks 5 --warmup 200 --seed 1 \
  --interval-ms 8-12 --out "$out/run_gl_baseline.json" --frames-csv "$out/run_gl_baseline.csv" > "$out/run_gl_baseline.txt" 2>&1
step $? "$out/run_gl_baseline.txt"
T 150 "$bin" run --backend gl --mode latency --frames "${GL_FRAMES:-1000}" --blocks 5 --warmup 100 --seed 1 \
  --out "$out/run_gl_latency.json" --frames-csv "$out/run_gl_latency.csv" > "$out/run_gl_latency.txt" 2>&1
step $? "$out/run_gl_latency.txt"

T 30 "$bin" calibrate-load --backend gl --json > "$out/load_gl.json" 2> "$out/load_gl.log"
step $? "$out/load_gl.log"
T $(( ${GL_CLOCKS_SECONDS:-90} + 15 )) "$bin" clocks --backend gl --seconds "${GL_CLOCKS_SECONDS:-90}" --interval-ms 100 \
  --json > "$out/clocks_gl.json" 2> "$out/clocks_gl.log"
step $? "$out/clocks_gl.log"
exit $status
