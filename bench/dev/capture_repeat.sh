#!/usr/bin/env bash
# Captures one program N times and counts the runs that did not end with
# exit 0 (a crash of the program under capture shows as 139); the logs of
# those runs, and their core files where the system writes them to the
# working directory, stay in OUT.
#   N=200 OUT=/tmp/latlab-repeat xvfb-run -a bash bench/dev/capture_repeat.sh [LATLAB] -- PROGRAM ARGS...
# The gfxreconstruct replay that crashed lavapipe before the layer read its
# timestamps from memory (docs/BENCHMARKS.md):
#   VK_INSTANCE_LAYERS=VK_LAYER_LUNARG_gfxreconstruct GFXRECON_CAPTURE_FILE_TIMESTAMP=false \
#     GFXRECON_CAPTURE_FILE=/tmp/cube.gfxr xvfb-run -a vkcube --c 300
#   N=200 xvfb-run -a bash bench/dev/capture_repeat.sh -- gfxrecon-replay --surface-index 5 /tmp/cube.gfxr
set -uo pipefail
bin=build/release/apps/latlab/latlab
if [ "${1:-}" != "--" ]; then bin=$1; shift; fi
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "usage: capture_repeat.sh [LATLAB] -- PROGRAM ARGS..." >&2; exit 2; }
bin=$(realpath "$bin")
n=${N:-100}; out=${OUT:-/tmp/latlab-repeat}
mkdir -p "$out"; cd "$out" || exit 2
ulimit -c unlimited 2>/dev/null || true
failed=0
for i in $(seq 1 "$n"); do
  "$bin" capture --out "$out/r.json" -- "$@" > run.txt 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then
    failed=$((failed + 1)); echo "run $i: exit $rc"
    mv run.txt "fail$i.txt"; [ -f core ] && mv core "core.$i"
  fi
done
rm -f r.json run.txt
echo "$n captures, $failed did not exit 0 (logs in $out)"
[ $failed -eq 0 ]
