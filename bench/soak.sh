#!/usr/bin/env bash
# Soak: one long `latlab run`, its RSS, open file descriptors and threads
# sampled from /proc every SAMPLE_S seconds and checked flat by
# bench/soak_check.awk (RSS median growth <= 10 MB, fd and thread medians not
# growing, the early window after the warm-up against the last fifth). Usage:
#   bench/soak.sh [vulkan|sim] [seconds]      (default: vulkan 3600)
# vulkan: lavapipe (or the default device), Baseline, --seconds SECONDS.
# sim: the sim backend at --time-scale 1000, a day (86400 s) of schedule
# (8.6 million frames at the default 8-12 ms) in 20-25 minutes of wall time
# on the 2-vCPU dev machine (the consumer, about 150 us a frame, bounds it);
# SIM_SCHEDULE_S sets the simulated span (SECONDS is then ignored).
# Writes the samples to $SOAK_OUT (default build/soak-<backend>.tsv) and one
# summary line; exits 1 when a check fails.
set -euo pipefail
cd "$(dirname "$0")/.."
backend=${1:-vulkan}
seconds=${2:-3600}
sample_s=${SAMPLE_S:-5}
bin=${LATLAB:-build/release/apps/latlab/latlab}
out=${SOAK_OUT:-build/soak-$backend.tsv}
result=$(mktemp -d)/soak.json
case $backend in
  vulkan) args=(run --mode baseline --backend vulkan --seconds "$seconds" --warmup 50) ;;
  sim) args=(run --mode baseline --backend sim --time-scale 1000 --seconds "${SIM_SCHEDULE_S:-86400}"
             --warmup 50) ;;
  *) echo "soak: backend is vulkan or sim" >&2; exit 2 ;;
esac
mkdir -p "$(dirname "$out")"
"$bin" "${args[@]}" --out "$result" >/dev/null 2>&1 &
pid=$!
source bench/proc_samples.sh
sample_process "$pid" "$out" "$sample_s"
wait "$pid" && rc=0 || rc=$?
awk -v rc="$rc" -v backend="$backend" -f bench/soak_check.awk "$out"
