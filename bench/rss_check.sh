#!/usr/bin/env bash
# Memory check for `latlab run`: a 60 000-frame run (sim backend, clock
# accelerated x100, so ~6 s of wall time for 10 min of schedule) must not grow
# the process's resident memory by more than 10 MB.
#
# Reports, for a 600-frame and a 60 000-frame run:
#   peak_growth_kb - VmHWM after the run minus VmRSS just before it (from the
#                    result's diagnostics.process_memory)
#   maxrss_kb      - /usr/bin/time's maximum resident set, as a cross-check (if installed)
# and fails (exit 1) if the 60 000-frame run's peak growth exceeds 10 MB.
#
# usage: bench/rss_check.sh [path/to/latlab]   (default build/release/apps/latlab/latlab)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build/release/apps/latlab/latlab}
LIMIT_KB=${LIMIT_KB:-10240}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

measure() {  # frames -> prints "frames peak_growth_kb maxrss_kb"
  local n=$1 timer=()
  [ -x /usr/bin/time ] && timer=(/usr/bin/time -f '%M' -o "$tmp/time$n")
  "${timer[@]}" "$BIN" run --mode baseline --backend sim --time-scale 100 --frames "$n" \
    --warmup 100 --blocks 10 --interval-ms 8-12 --out "$tmp/r$n.json" >/dev/null
  local growth maxrss=unknown
  growth=$(grep -o '"peak_growth_kb": *[0-9-]*' "$tmp/r$n.json" | grep -o '[0-9-]*$')
  [ -f "$tmp/time$n" ] && maxrss=$(tail -1 "$tmp/time$n")
  echo "$n ${growth:-unknown} $maxrss"
}

read -r n1 g1 m1 < <(measure 600)
read -r n2 g2 m2 < <(measure 60000)
echo "frames=$n1 peak_growth_kb=$g1 maxrss_kb=$m1"
echo "frames=$n2 peak_growth_kb=$g2 maxrss_kb=$m2"
if [[ $m1 =~ ^[0-9]+$ && $m2 =~ ^[0-9]+$ ]]; then
  echo "60000 vs 600 frames: maxrss difference $((m2 - m1)) kB; limit ${LIMIT_KB} kB"
fi
if ! [[ $g2 =~ ^[0-9]+$ ]]; then
  echo "FAIL: no peak_growth_kb in the result"
  exit 1
fi
if (( g2 > LIMIT_KB )); then
  echo "FAIL: the 60000-frame run grew RSS by $g2 kB (> $LIMIT_KB kB)"
  exit 1
fi
echo "OK"
