#!/usr/bin/env bash
# Soak: one long `latlab run`, its RSS, open file descriptors and threads
# sampled from /proc every SAMPLE_S seconds and checked flat after the
# warm-up (the first 10% of the run), the last fifth of the run against
# the samples between: RSS median growth <= 10 MB, and fds and threads no
# higher at their lowest. Medians and lowest counts, not end points: the
# thread count moves with the phase of the block a sample falls in (a
# block's generator thread ends before its consumer), and a sample may fall
# in the last seconds, where the result is built (the summaries' sorted
# copies: +80 MB for a day of frames); a leak stays, and raises both.
# Usage:
#   bench/soak.sh [vulkan|sim] [seconds]      (default: vulkan 3600)
# vulkan: lavapipe (or the default device), Baseline, --seconds SECONDS.
# sim: the sim backend at --time-scale 1000, a day (86400 s) of schedule
# (8.6 million frames at the default 8-12 ms) in about 86 s of wall time;
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
printf 't_s\trss_kb\tfds\tthreads\n' >"$out"
start=$SECONDS
while kill -0 "$pid" 2>/dev/null; do
  rss=$(awk '/^VmRSS:/ {print $2}' /proc/$pid/status 2>/dev/null || true)
  thr=$(awk '/^Threads:/ {print $2}' /proc/$pid/status 2>/dev/null || true)
  fds=$(ls /proc/$pid/fd 2>/dev/null | wc -l || true)
  [[ -n $rss && -n $thr ]] && printf '%d\t%s\t%s\t%s\n' $((SECONDS - start)) "$rss" "$fds" "$thr" >>"$out"
  sleep "$sample_s"
done
wait "$pid" && rc=0 || rc=$?
awk -v rc="$rc" -v backend="$backend" '
  function median(lo, hi,   k, m, j, x, v) {  # of r[lo..hi], by insertion sort
    m = 0
    for (k = lo; k <= hi; k++) { x = r[k]; j = m; while (j > 0 && v[j] > x) { v[j + 1] = v[j]; j-- } v[j + 1] = x; m++ }
    return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
  }
  NR > 1 { t[NR] = $1; r[NR] = $2; f[NR] = $3; h[NR] = $4; n = NR; if ($2 > peak) peak = $2 }
  END {
    if (n < 5) { print "soak " backend ": too few samples"; exit 1 }
    w = 2; while (w < n && t[w] < 0.1 * t[n]) w++   # first sample after the warm-up
    mid = w + 1; while (mid < n && t[mid] < 0.8 * t[n]) mid++   # first sample of the last fifth
    f1 = f2 = h1 = h2 = -1
    for (i = w; i <= n; i++) {
      if (i < mid) { if (f1 < 0 || f[i] < f1) f1 = f[i]; if (h1 < 0 || h[i] < h1) h1 = h[i] }
      else         { if (f2 < 0 || f[i] < f2) f2 = f[i]; if (h2 < 0 || h[i] < h2) h2 = h[i] }
    }
    r1 = median(w, mid - 1) / 1024; r2 = median(mid, n) / 1024
    ok = (rc == 0 && r2 - r1 <= 10 && f2 <= f1 && h2 <= h1)
    printf "soak %s: %d s, exit %d, rss median %.1f -> %.1f MB (%+.1f MB; after the warm-up at %d s -> over the last fifth from %d s; peak %.1f), lowest fds %d -> %d, lowest threads %d -> %d: %s\n",
      backend, t[n], rc, r1, r2, r2 - r1, t[w], t[mid], peak / 1024, f1, f2, h1, h2, ok ? "flat" : "NOT FLAT"
    exit ok ? 0 : 1
  }' "$out"
