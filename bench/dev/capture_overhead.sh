#!/usr/bin/env bash
# What `latlab capture` costs a program: a
# gfxreconstruct replay of a vkcube trace on lavapipe under Xvfb, PAIRS
# alternating pairs without and with capture (odd pairs plain first, even
# pairs capture first), no warm-up run beyond the trace's own recording.
# Per run: the replay's frame rate (its "Replay FPS") and its CPU time
# (perf stat task-clock of the replay process, every thread of it: the
# layer's and the driver's included); per capture also the result's
# reported cost (overhead.layer_cpu_us, the layer's calls and threads, plus
# overhead.driver_cpu_us, the bracketing probe's estimate) per replayed frame. Then medians: the frame rate's change, the CPU per
# frame added, and the reported figure against the measured one. The load
# average before and after says how busy the machine was.
#   bash bench/dev/capture_overhead.sh [LATLAB_BINARY]
#   PAIRS=7 FRAMES=1000 NO_PRESENT=0 TRACE=(recorded when unset) OUT=/tmp/latlab-capture-overhead
# CAPTURE_ARGS: more options of latlab capture (e.g. "--gpu-spans all").
# NO_PRESENT=1 replays with --surface-index 5 (submits, never presents: no
# X11 copy, as on a machine without a display). Needs gfxreconstruct,
# vulkan-tools (vkcube), xvfb and perf (linux-perf).
set -euo pipefail
bin=$(realpath "${1:-build/release/apps/latlab/latlab}")
out=${OUT:-/tmp/latlab-capture-overhead}; pairs=${PAIRS:-7}; frames=${FRAMES:-1000}
mkdir -p "$out"; rm -f "$out"/runs.txt
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/latlab-xdg-$(id -u)}; mkdir -p -m 700 "$XDG_RUNTIME_DIR"
export VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
trace=${TRACE:-$out/cube$frames.gfxr}
if [ ! -f "$trace" ]; then
  VK_INSTANCE_LAYERS=VK_LAYER_LUNARG_gfxreconstruct GFXRECON_CAPTURE_FILE_TIMESTAMP=false \
    GFXRECON_CAPTURE_FILE="$trace" xvfb-run -a vkcube --c "$frames" > "$out/record.txt" 2>&1
fi
# The frame rate past the trace's first frames (MEASURE, gfxrecon-replay's
# --measurement-frame-range): its first frame creates the device, where
# the layer's one-time set-up (overhead.setup_ms) would count as frame time.
replay=(gfxrecon-replay --measurement-frame-range "${MEASURE:-16-1000000000}")
[ "${NO_PRESENT:-0}" = 1 ] && replay+=(--surface-index 5)
run() {  # $1: plain|capture, $2: pair number
  local log="$out/$1$2.txt"
  if [ "$1" = plain ]; then
    xvfb-run -a perf stat -x, -e task-clock "${replay[@]}" "$trace" > "$log" 2>&1 || true
  else
    xvfb-run -a "$bin" capture --out "$out/capture$2.json" ${CAPTURE_ARGS:-} -- \
      perf stat -x, -e task-clock "${replay[@]}" "$trace" > "$log" 2>&1 || true
  fi
  echo "$1 $2 $log" >> "$out/runs.txt"
}
cut -d' ' -f1-3 /proc/loadavg > "$out/load_before.txt"
for n in $(seq 1 "$pairs"); do
  if [ $((n % 2)) = 1 ]; then run plain "$n"; run capture "$n"; else run capture "$n"; run plain "$n"; fi
done
cut -d' ' -f1-3 /proc/loadavg > "$out/load_after.txt"
python3 - "$out" "$(nproc)" "$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown)" <<'PY'
import json, re, statistics, sys
out, cpus, commit = sys.argv[1], sys.argv[2], sys.argv[3]
rows = {"plain": {}, "capture": {}}
for line in open(f"{out}/runs.txt"):
    kind, n, log = line.split()
    text = open(log).read()
    fps = re.search(r"(?:Replay|Measurement range) FPS: ([0-9.]+) fps, [0-9.]+ seconds, (\d+) frames", text)
    cpu = re.search(r"^([0-9.]+),msec,task-clock", text, re.M)
    if not fps or not cpu:
        print(f"{kind} {n}: no replay figures (see {log})"); continue
    r = {"fps": float(fps[1]), "frames": int(fps[2]), "cpu_ms": float(cpu[1])}
    if kind == "capture":
        # Totals over the replay's frames: a replay that never presents has
        # no frame in the capture.
        o = json.load(open(f"{out}/capture{n}.json"))["overhead"]
        r["own_us"] = (o.get("layer_cpu_us") or 0) / r["frames"]
        r["driver_us"] = (o.get("driver_cpu_us") or 0) / r["frames"]
        r["gpu_us"] = (o.get("gpu_us") or 0) / r["frames"]
        # The spans priced at the budget's learnt price, where it learnt one.
        r["learnt_us"] = None
        if o.get("gpu_span_price_from") in ("frames", "submissions"):
            r["learnt_us"] = o["bracketed_submits"] * o["gpu_span_price_us"] / r["frames"]
    rows[kind][n] = r
pairs = sorted(set(rows["plain"]) & set(rows["capture"]), key=int)
if not pairs: sys.exit("no complete pair")
def med(xs): return statistics.median(xs)
for n in pairs:
    p, c = rows["plain"][n], rows["capture"][n]
    print(f"pair {n}: fps {p['fps']:.1f} -> {c['fps']:.1f} ({100*(c['fps']/p['fps']-1):+.1f} %), "
          f"CPU/frame {1000*p['cpu_ms']/p['frames']:.1f} -> {1000*c['cpu_ms']/c['frames']:.1f} us, "
          f"reported {c['own_us'] or 0:.1f} own + {c['driver_us'] or 0:.1f} driver + {c['gpu_us'] or 0:.1f} device us/frame")
fps_p = med([rows["plain"][n]["fps"] for n in pairs]); fps_c = med([rows["capture"][n]["fps"] for n in pairs])
cpu_p = med([1000*rows["plain"][n]["cpu_ms"]/rows["plain"][n]["frames"] for n in pairs])
cpu_c = med([1000*rows["capture"][n]["cpu_ms"]/rows["capture"][n]["frames"] for n in pairs])
slow = 1e6/fps_c - 1e6/fps_p
ratio = [rows["capture"][n]["fps"]/rows["plain"][n]["fps"] for n in pairs]
rep = med([(rows["capture"][n]["own_us"] or 0) + (rows["capture"][n]["driver_us"] or 0) for n in pairs])
own = med([rows["capture"][n]["own_us"] or 0 for n in pairs])
print(f"{len(pairs)} pairs, commit {commit}, {cpus} CPUs, load average before {open(out+'/load_before.txt').read().strip()}, "
      f"after {open(out+'/load_after.txt').read().strip()}")
print(f"frame rate median {fps_p:.1f} -> {fps_c:.1f} fps ({100*(fps_c/fps_p-1):+.1f} %; per pair median "
      f"{100*(med(ratio)-1):+.1f} %, capture slower in {sum(r < 1 for r in ratio)} of {len(ratio)}); "
      f"frame time +{slow:.1f} us")
print(f"CPU per frame median {cpu_p:.1f} -> {cpu_c:.1f} us (+{cpu_c-cpu_p:.1f} us); reported "
      f"{rep:.1f} us per frame ({own:.1f} latlab's own + the driver estimate): "
      f"{rep/(cpu_c-cpu_p) if cpu_c > cpu_p else float('nan'):.2f} x the measured CPU added")
# The replay waits for its submissions, so the device time the layer's
# command buffers add is wall time it loses too: the whole reported cost
# against the per-pair median of the frame time added.
added = med([1e6/rows["capture"][n]["fps"] - 1e6/rows["plain"][n]["fps"] for n in pairs])
whole = med([(rows["capture"][n]["own_us"] or 0) + (rows["capture"][n]["driver_us"] or 0)
             + (rows["capture"][n]["gpu_us"] or 0) for n in pairs])
print(f"frame time added, per pair median {added:+.1f} us; reported with the device estimate {whole:.1f} us per frame"
      + (f" ({whole/added:.2f} x)" if added > 0 else ""))
# The same with the spans priced at the budget's learnt price (where it
# learnt one: the console's "a GPU span costs this program about").
by_price = med([(rows["capture"][n]["own_us"] or 0)
                + (rows["capture"][n]["learnt_us"] if rows["capture"][n]["learnt_us"] is not None
                   else (rows["capture"][n]["driver_us"] or 0) + (rows["capture"][n]["gpu_us"] or 0))
                for n in pairs])
print(f"reported with the spans at the budget's price {by_price:.1f} us per frame"
      + (f" ({by_price/added:.2f} x)" if added > 0 else ""))
PY
