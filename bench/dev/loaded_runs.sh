#!/usr/bin/env bash
# Loaded in `latlab run` on the default device, run after run (does Loaded
# calibrate and stay on target every time?): RUNS runs of
# `latlab run --frames FRAMES --seed N`, N = 1..RUNS,
# one after another, on an otherwise idle machine. Per run: Loaded available,
# on target, scored; the size and complexity chosen; the calibration's wall
# time; the warm-up re-check. Then the counts and the calibration time's
# median and max. Results stay in OUT (default /tmp/latlab-loaded-runs).
#   bash bench/dev/loaded_runs.sh [LATLAB_BINARY]     (RUNS=10 FRAMES=100 by default)
set -euo pipefail
bin=${1:-build/release/apps/latlab/latlab}
out=${OUT:-/tmp/latlab-loaded-runs}; runs=${RUNS:-10}; frames=${FRAMES:-100}
mkdir -p "$out"
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/latlab-xdg-$(id -u)}; mkdir -p -m 700 "$XDG_RUNTIME_DIR"
for n in $(seq 1 "$runs"); do
  start=$(date +%s.%N)
  "$bin" run --frames "$frames" --seed "$n" --out "$out/r$n.json" > "$out/r$n.txt" 2>&1 || true
  echo "$n $start $(date +%s.%N)" >> "$out/times.txt.$$"
done
mv "$out/times.txt.$$" "$out/times.txt"
python3 - "$out" <<'PY'
import json, statistics, sys
out = sys.argv[1]
rows, cal_ms = [], []
for line in open(f"{out}/times.txt"):
    n, s, e = line.split()
    j = json.load(open(f"{out}/r{n}.json"))
    loaded = j["modes"]["loaded"]
    cal = j.get("load_calibration") or {}
    target = loaded.get("gpu_target") or {}
    check = target.get("warmup_check") or {}
    avail = bool(loaded.get("available"))
    on = avail and loaded.get("off_target") is False
    scored = (j.get("score") or {}).get("value") is not None
    if cal.get("wall_ms") is not None: cal_ms.append(cal["wall_ms"])
    rows.append((avail, on, scored))
    print(f"seed {n}: available {avail} on_target {on} scored {scored} size {(cal.get('size') or {}).get('used')} "
          f"complexity {cal.get('complexity')} -> {check.get('complexity_after')} calibration {cal.get('wall_ms', 0)/1e3:.1f} s "
          f"run {float(e)-float(s):.1f} s measured {target.get('measured_ms')} ms"
          + ("" if avail else f" | {loaded.get('reason')}"))
print(f"available {sum(r[0] for r in rows)}/{len(rows)}, on target {sum(r[1] for r in rows)}/{len(rows)}, "
      f"scored {sum(r[2] for r in rows)}/{len(rows)}; calibration wall time median "
      f"{statistics.median(cal_ms)/1e3:.1f} s, max {max(cal_ms)/1e3:.1f} s" if cal_ms else "no calibration ran")
PY
