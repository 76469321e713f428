#!/usr/bin/env bash
# What the Wayland presentation feedback costs a present: on a
# headless weston this script starts, PAIRS alternating pairs of captures
# with the feedback (the default) and without it
# (LATLAB_CAPTURE_WAYLAND_FEEDBACK=0), odd pairs with first, even pairs
# without first; no warm-up run. Programs: vkcube-wayland --c FRAMES on
# lavapipe (the Vulkan layer) and es2gears_wayland for FRAMES frames on
# llvmpipe (the GL interposer). Per capture: the source's own CPU time in
# the present (overhead.layer_cpu_per_present, p50 and p90, us), the CPU of
# latlab's threads per frame (overhead.threads_cpu_per_frame_us: the Vulkan
# layer's collector dispatches the feedback) and the frames with a display
# time. Then per program the medians over the pairs.
# The load average before and after, and the busiest other processes, say
# what else ran.
#   bash bench/dev/capture_wayland_cost.sh [LATLAB_BINARY]
#   PAIRS=7 FRAMES=500 OUT=/tmp/latlab-wayland-cost
# Needs weston, vulkan-tools (vkcube-wayland), mesa-utils (es2gears_wayland).
set -euo pipefail
bin=$(realpath "${1:-build/release/apps/latlab/latlab}")
out=${OUT:-/tmp/latlab-wayland-cost}; pairs=${PAIRS:-7}; frames=${FRAMES:-500}
mkdir -p "$out"; rm -f "$out"/runs.txt
xdg=$(mktemp -d /tmp/latlab-wayland-cost-XXXXXX); chmod 700 "$xdg"
XDG_RUNTIME_DIR=$xdg weston --backend=headless-backend.so --socket=cost --idle-time=0 \
  --no-config > "$out/weston.log" 2>&1 &
weston_pid=$!
trap 'kill $weston_pid 2>/dev/null; wait $weston_pid 2>/dev/null; rm -rf "$xdg"' EXIT
for _ in $(seq 100); do [ -S "$xdg/cost" ] && break; sleep 0.1; done
export XDG_RUNTIME_DIR=$xdg WAYLAND_DISPLAY=cost
export VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
run() {  # $1: with|without, $2: vk|gl, $3: pair number
  local feedback=1; [ "$1" = without ] && feedback=0
  local result="$out/$1-$2-$3.json"
  if [ "$2" = vk ]; then
    LATLAB_CAPTURE_WAYLAND_FEEDBACK=$feedback "$bin" capture --out "$result" -- \
      vkcube-wayland --c "$frames" > "$out/$1-$2-$3.txt" 2>&1 || true
  else
    LATLAB_CAPTURE_WAYLAND_FEEDBACK=$feedback "$bin" capture --out "$result" --frames "$frames" \
      --terminate -- es2gears_wayland > "$out/$1-$2-$3.txt" 2>&1 || true
  fi
  echo "$1 $2 $3 $result" >> "$out/runs.txt"
}
cut -d' ' -f1-3 /proc/loadavg > "$out/load_before.txt"
ps -eo pcpu,comm --sort=-pcpu | head -8 > "$out/busiest_before.txt"
for n in $(seq 1 "$pairs"); do
  for prog in vk gl; do
    if [ $((n % 2)) = 1 ]; then run with $prog "$n"; run without $prog "$n"
    else run without $prog "$n"; run with $prog "$n"; fi
  done
done
cut -d' ' -f1-3 /proc/loadavg > "$out/load_after.txt"
ps -eo pcpu,comm --sort=-pcpu | head -8 > "$out/busiest_after.txt"
python3 - "$out" <<'PY'
import json, statistics, sys
out = sys.argv[1]
rows = {}
for line in open(f"{out}/runs.txt"):
    kind, prog, n, path = line.split()
    try:
        j = json.load(open(path))
    except (OSError, ValueError):
        print(f"{kind} {prog} {n}: no result ({path})"); continue
    d = j["overhead"]["layer_cpu_per_present"]
    threads = j["overhead"]["threads_cpu_per_frame_us"] or 0.0
    rows.setdefault((prog, kind), []).append((d["p50"], d["p90"], threads))
    print(f"{prog} {kind:7} pair {n}: layer CPU per present p50 {d['p50']:.2f} us, "
          f"p90 {d['p90']:.2f} us; threads {threads:.1f} us per frame; "
          f"{j['display']['shown']} of {j['frames']} frames shown")
for prog in ("vk", "gl"):
    for kind in ("with", "without"):
        r = rows.get((prog, kind), [])
        if r:
            print(f"{prog} {kind:7}: median over {len(r)} captures of the p50 "
                  f"{statistics.median(x[0] for x in r):.2f} us, of the p90 "
                  f"{statistics.median(x[1] for x in r):.2f} us; threads per frame "
                  f"{statistics.median(x[2] for x in r):.1f} us")
print("load average (1, 5, 15 min) before:", open(f"{out}/load_before.txt").read().strip(),
      "after:", open(f"{out}/load_after.txt").read().strip())
PY
