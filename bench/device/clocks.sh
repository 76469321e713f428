#!/usr/bin/env bash
# Clock study on the GPU machine: device clock vs CLOCK_MONOTONIC for ~9 min
# per backend (the device tool allows 10 min per command), both backends at
# once. Writes $OUT/clocks-<backend>.json (+ .log with stderr) and
# $OUT/clocks-machine.txt.
#
# Run from the repository root after a release build:
#   cmake --preset release && cmake --build --preset release --target latlab
#   OUT=/some/dir bench/device/clocks.sh            # default 540 s
#   CLOCKS_SECONDS=60 OUT=/some/dir bench/device/clocks.sh   # quick check
#
# What to read in each JSON: drift_ppm (+- drift_uncertainty_ppm), the
# residual_us distribution (non-zero spread beyond deviations = the clocks do
# not drift linearly, e.g. NTP slewing CLOCK_MONOTONIC), bound_now_ns, and
# fresh.single_pair_error_us vs fresh.model_error_us (a single start-up pair
# vs the drift-corrected model, against pairs never used in the fit).
set -uo pipefail
OUT=${OUT:?set OUT to the output directory}
BIN=${LATLAB_BINARY:-build/release/apps/latlab/latlab}
SECS=${CLOCKS_SECONDS:-540}
BACKENDS=${CLOCKS_BACKENDS:-"vulkan cuda"}
mkdir -p "$OUT"
if [[ ! -x "$BIN" ]]; then
  echo "clocks.sh: $BIN not found; build it first (cmake --build --preset release --target latlab)" >&2
  exit 2
fi
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  uname -a
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv
  command -v chronyc >/dev/null && chronyc tracking
  command -v timedatectl >/dev/null && timedatectl show 2>/dev/null | grep -i ntp
} > "$OUT/clocks-machine.txt" 2>&1

pids=()
for b in $BACKENDS; do
  # Window large enough to fit drift over the whole run (10 pairs/s).
  "$BIN" clocks --backend "$b" --seconds "$SECS" --interval-ms 100 --window 8192 --json \
    > "$OUT/clocks-$b.json" 2> "$OUT/clocks-$b.log" &
  pids+=("$!")
done
rc=0
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then
    echo "clocks.sh: backend $(echo $BACKENDS | cut -d' ' -f$((i + 1))) failed, see its .log" >&2
    rc=1
  fi
done
exit $rc
