#!/usr/bin/env bash
# Two (or more) builds of the capture layer, alternating, each through
# bench/device/capture.sh (latlab run --backend vulkan --mode baseline alone
# and under `latlab capture`): what a change to the layer's submit path does
# to its own CPU time per submit and to the program.
#   LATLAB_BINARY=.devbin/latlab OUT=... bash bench/device/capture_ab.sh FRAMES DIR_A DIR_B [DIR...]
# Each DIR holds a layer build (libVkLayer_latlab_capture.so and its
# manifest, as bench/device/pack.sh puts one in .devbin/capture_layer).
# REPS (default 2) rounds of A, B, ...; results in $OUT/<dir name>_<rep>/,
# each summary's figures also in $OUT/ab.txt.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
frames=${1:?FRAMES}; shift
[[ $# -ge 2 ]] || { echo "usage: capture_ab.sh FRAMES DIR_A DIR_B [DIR...]" >&2; exit 2; }
out=${OUT:-$here/build/device-capture-ab}
mkdir -p "$out"
for rep in $(seq 1 "${REPS:-2}"); do
  for dir in "$@"; do
    name=$(basename "$dir")_$rep
    mkdir -p "$out/$name"
    echo "== $name ($(date -u +%T))" | tee -a "$out/ab.txt"
    (cd "$here" && timeout 300 env OUT="$out/$name" LATLAB_CAPTURE_LAYER_DIR="$dir" \
       bash bench/device/capture.sh "$frames") > "$out/$name/sh.txt" 2>&1
    rm -f "$out/$name"/*.csv  # per-frame files: large, and the summary has what they give
    grep -E "layer CPU|workload_submit|submit_start_to_gpu_begin|gpu_begin:|gpu_end:" \
      "$out/$name/summary.txt" | tee -a "$out/ab.txt"
  done
done
