#!/usr/bin/env bash
# What `latlab capture` costs glmark2 (a program nobody here wrote, which
# dlopens GL): alternating pairs of glmark2 alone and under capture on
# llvmpipe under Xvfb; per run glmark2's own FPS and its CPU time (user +
# sys, /usr/bin/time) per frame drawn, and what latlab reports of its own
# cost per frame.
#   bench/dev/glmark2_cost.sh [LATLAB]   (default build/release/apps/latlab/latlab)
#   PAIRS=5 DURATION=5 SCENE=build
#   GM_ENV="MESA_EXTENSION_OVERRIDE=-GL_ARB_timer_query"   (both runs: capture
#   without GPU spans, to tell their cost from the rest of the interposer's)
# Output: one line a run (kind, pair, FPS, CPU s, frames, reported us a
# frame, the interposer's p50 us a swap), then the per-pair medians.
set -euo pipefail
latlab=$(realpath "${1:-build/release/apps/latlab/latlab}")
pairs=${PAIRS:-5}
duration=${DURATION:-5}
scene=${SCENE:-build}
command -v glmark2 >/dev/null || { echo "glmark2 not installed (apt-get install glmark2)"; exit 2; }
out=$(mktemp -d)
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/latlab-xdg-$(id -u)}
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
gm=(env ${GM_ENV:-} glmark2 -s 400x300 -b "$scene:duration=$duration")

# One run: `alone` or `captured`, pair $2; appends "kind pair fps cpu_s frames reported_us".
run() {
  local kind=$1 i=$2 log=$out/$1_$2.txt
  if [[ $kind == alone ]]; then
    /usr/bin/time -f 'cpu %U %S' -o "$out/time" xvfb-run -a "${gm[@]}" >"$log" 2>&1
  else
    /usr/bin/time -f 'cpu %U %S' -o "$out/time" xvfb-run -a "$latlab" capture \
      --out "$out/c_$i.json" -- "${gm[@]}" >"$log" 2>&1
  fi
  python3 - "$kind" "$i" "$log" "$out/time" "$out/c_$i.json" <<'PY' | tee -a "$out/runs.txt"
import json, re, sys
kind, i, log, tm, cj = sys.argv[1:]
fps = float(re.search(r"FPS: (\d+)", open(log).read()).group(1))
u, s = re.search(r"cpu ([\d.]+) ([\d.]+)", open(tm).read()).groups()
cpu = float(u) + float(s)
frames = rep = per_swap = None
if kind == "captured":
    j = json.load(open(cj))
    frames = j.get("frames")
    o = j.get("overhead", {})
    parts = [o.get(k) for k in ("threads_cpu_per_frame_us", "layer_cpu_per_frame_us")]
    rep = sum(p for p in parts if p is not None) if any(p is not None for p in parts) else None
    per_swap = (o.get("layer_cpu_per_present") or {}).get("p50")
print(kind, i, fps, round(cpu, 2), frames, rep, per_swap)
PY
}

for i in $(seq 1 "$pairs"); do
  if (( i % 2 )); then run alone "$i"; run captured "$i"; else run captured "$i"; run alone "$i"; fi
done
python3 - "$out/runs.txt" "$duration" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
dur = float(sys.argv[2])
by = {}
for kind, i, fps, cpu, frames, rep, _ in rows:
    by.setdefault(i, {})[kind] = (float(fps), float(cpu), rep)
fps_change, cpu_added, reported = [], [], []
for i, r in by.items():
    if "alone" not in r or "captured" not in r: continue
    (fa, ca, _), (fc, cc, rep) = r["alone"], r["captured"]
    fps_change.append((fc - fa) / fa * 100)
    # CPU per frame drawn in the timed part (glmark2's FPS x duration); the
    # whole process's CPU, set-up included, so this overstates per frame.
    cpu_added.append((cc / (fc * dur) - ca / (fa * dur)) * 1e6)
    if rep != "None": reported.append(float(rep))
print(f"pairs {len(fps_change)}: FPS change per pair, median {st.median(fps_change):+.1f} % "
      f"(slower in {sum(1 for x in fps_change if x < 0)} of {len(fps_change)}); "
      f"CPU per frame added, median {st.median(cpu_added):+.0f} us; "
      f"reported (latlab's threads + interposer) median "
      f"{st.median(reported) if reported else float('nan'):.1f} us a frame")
PY
