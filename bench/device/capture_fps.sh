#!/usr/bin/env bash
# What `latlab capture` costs a program that runs as fast as it can, on a
# machine without a display (the GPU machine): latlab's own Performance
# mode, offscreen, at a size and complexity small enough that the CPU, not
# the GPU, sets the pace (300 frames, each submitted and waited for).
# PAIRS alternating pairs (odd pairs plain first, even pairs captured first)
# of
#   latlab run --mode performance --perf-size SIZE --perf-complexity C
# without and with `latlab capture --`. Per run: frames per second of wall
# time (frames / the result's wall_ms); per capture also the layer's
# reported cost per submission: CPU (overhead.layer_cpu_us + driver_cpu_us)
# plus the device time its command buffers add (overhead.gpu_us: the
# program waits for each frame, so it loses that in wall time).
# Then the medians, the per-pair change and the reported cost against the
# measured one.
#   LATLAB_BINARY=.devbin/latlab LATLAB_CAPTURE_LAYER_DIR=.devbin/capture_layer \
#     PAIRS=10 SIZE=64x64 C=1 OUT=/tmp/o bash bench/device/capture_fps.sh
set -uo pipefail
bin=${LATLAB_BINARY:-build/release/apps/latlab/latlab}
out=${OUT:-/tmp/latlab-capture-fps}; pairs=${PAIRS:-10}
size=${SIZE:-64x64}; complexity=${C:-1}
mkdir -p "$out"; rm -f "$out"/runs.txt
run() {  # $1: plain|capture, $2: pair
  local r=("$bin" run --mode performance --perf-size "$size" --perf-complexity "$complexity"
           --out "$out/$1$2.json")
  if [ "$1" = plain ]; then
    timeout -k 5 60 "${r[@]}" > "$out/$1$2.txt" 2>&1
  else
    timeout -k 5 60 "$bin" capture --out "$out/capture_result$2.json" -- "${r[@]}" > "$out/$1$2.txt" 2>&1
  fi
  echo "$1 $2 rc=$?" >> "$out/runs.txt"
}
cut -d' ' -f1-3 /proc/loadavg > "$out/load_before.txt"
for p in $(seq 1 "$pairs"); do
  if [ $((p % 2)) = 1 ]; then run plain "$p"; run capture "$p"; else run capture "$p"; run plain "$p"; fi
done
cut -d' ' -f1-3 /proc/loadavg > "$out/load_after.txt"
python3 - "$out" "$pairs" <<'PY' | tee "$out/summary.txt"
import json, statistics, sys, os
out, pairs = sys.argv[1], int(sys.argv[2])
def fps(path):
    try:
        p = json.load(open(path))["modes"]["performance"]
        return p["frames"] / (p["wall_ms"] / 1000.0), p["wall_ms"] * 1000.0 / p["frames"]
    except Exception:
        return None, None
rows = []
for i in range(1, pairs + 1):
    a, ua = fps(f"{out}/plain{i}.json"); b, ub = fps(f"{out}/capture{i}.json")
    rep = None
    try:
        c = json.load(open(f"{out}/capture_result{i}.json")); o = c["overhead"]
        if o.get("layer_cpu_us") is not None and c["submits"]:
            rep = (o["layer_cpu_us"] + (o.get("driver_cpu_us") or 0) + (o.get("gpu_us") or 0)) / c["submits"]
    except Exception:
        pass
    if a and b:
        rows.append((a, b, ub - ua, rep))
        print(f"pair {i}: fps {a:.1f} -> {b:.1f} ({100*(b/a-1):+.1f} %), wall per frame +{ub-ua:.1f} us, reported {rep if rep is None else round(rep,1)} us per submission")
if rows:
    pa = statistics.median(r[0] for r in rows); pb = statistics.median(r[1] for r in rows)
    per = statistics.median(100 * (r[1] / r[0] - 1) for r in rows)
    added = statistics.median(r[2] for r in rows)
    reps = [r[3] for r in rows if r[3] is not None]
    print(f"{len(rows)} pairs, load before {open(out+'/load_before.txt').read().strip()}, after {open(out+'/load_after.txt').read().strip()}")
    print(f"frame rate median {pa:.1f} -> {pb:.1f} fps ({100*(pb/pa-1):+.1f} %; per pair median {per:+.1f} %, capture slower in {sum(r[1] < r[0] for r in rows)} of {len(rows)})")
    print(f"wall time per frame added, median {added:.1f} us; reported {statistics.median(reps):.1f} us per submission" if reps else f"wall time per frame added, median {added:.1f} us")
PY
