#!/usr/bin/env bash
# What `latlab capture` costs a program nobody here wrote, on a machine
# without a display: a gfxreconstruct replay of a vkcube trace that submits
# and never presents (--surface-index past the trace's one surface), with
# memory rebound for the replaying device (-m rebind). PAIRS alternating
# pairs (odd pairs plain first, even pairs captured first), no warm-up run.
# Per run the replay's "Replay FPS"; per capture also the result's reported
# cost per replayed frame: CPU (overhead.layer_cpu_us + driver_cpu_us) and
# the device time the layer's command buffers add (overhead.gpu_us; the
# replay waits for each submission, so it loses that in wall time). Then
# the medians, the per-pair change and the reported cost (CPU + device)
# against the measured wall time per frame, also with the spans priced at
# the budget's learnt price where it learnt one (overhead.layer_cpu_us +
# bracketed_submits x gpu_span_price_us). CAPTURE_ARGS: more options of
# latlab capture (e.g. "--gpu-spans all" to time every submission).
# SUBMITS_CSV=1: each capture also writes its submissions CSV, and
# bench/submit_costs.py says where timing a submission cost the replay.
#   GFXRECON=.devbin/gfxrecon-replay TRACE=.devbin/cube3000.gfxr \
#     LATLAB_BINARY=.devbin/latlab LATLAB_CAPTURE_LAYER_DIR=.devbin/capture_layer \
#     PAIRS=7 OUT=/tmp/o bash bench/device/capture_replay.sh
# The trace: VK_INSTANCE_LAYERS=VK_LAYER_LUNARG_gfxreconstruct
#   GFXRECON_CAPTURE_FILE_TIMESTAMP=false GFXRECON_CAPTURE_FILE=cube3000.gfxr
#   xvfb-run -a vkcube --c 3000 (gfxreconstruct and vulkan-tools, Debian 12).
set -uo pipefail
bin=${LATLAB_BINARY:-build/release/apps/latlab/latlab}
replay=${GFXRECON:-gfxrecon-replay}; trace=${TRACE:?TRACE: a gfxreconstruct trace}
out=${OUT:-/tmp/latlab-capture-replay}; pairs=${PAIRS:-7}
mkdir -p "$out"; rm -f "$out"/runs.txt
# The frame rate past the trace's first frames (MEASURE): its first frame
# creates the device, where the layer's one-time set-up (overhead.setup_ms)
# would count as frame time; that shows in the whole run's wall time.
cmd=("$replay" -m rebind --surface-index 5 --measurement-frame-range "${MEASURE:-16-1000000000}" "$trace")
run() {  # $1: plain|capture, $2: pair
  local t0 rc; t0=$(date +%s%N)
  if [ "$1" = plain ]; then
    timeout -k 5 120 "${cmd[@]}" > "$out/$1$2.txt" 2>&1
  else
    timeout -k 5 120 "$bin" capture --out "$out/capture$2.json" ${CAPTURE_ARGS:-} \
      ${SUBMITS_CSV:+--submits-csv "$out/submits$2.csv"} -- "${cmd[@]}" > "$out/$1$2.txt" 2>&1
  fi
  rc=$?; echo "$1 $2 rc=$rc wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))" >> "$out/runs.txt"
}
cut -d' ' -f1-3 /proc/loadavg > "$out/load_before.txt"
for p in $(seq 1 "$pairs"); do
  if [ $((p % 2)) = 1 ]; then run plain "$p"; run capture "$p"; else run capture "$p"; run plain "$p"; fi
done
cut -d' ' -f1-3 /proc/loadavg > "$out/load_after.txt"
python3 - "$out" "$pairs" <<'PY' | tee "$out/summary.txt"
import json, re, statistics, sys
out, pairs = sys.argv[1], int(sys.argv[2])
def fps(path):
    m = re.search(r"(?:Replay|Measurement range) FPS: ([0-9.]+) fps, [0-9.]+ seconds, (\d+) frames", open(path).read())
    return (float(m[1]), int(m[2])) if m else (None, None)
walls = {}  # (kind, pair): the whole run's wall ms (latlab's own start and end included for capture)
for line in open(f"{out}/runs.txt"):
    m = re.match(r"(\w+) (\d+) rc=\S+ wall_ms=(\d+)", line)
    if m: walls[(m[1], int(m[2]))] = int(m[3])
rows = []
for i in range(1, pairs + 1):
    (a, _), (b, frames) = fps(f"{out}/plain{i}.txt"), fps(f"{out}/capture{i}.txt")
    rep = gpu = learnt = c = None; spans = ""
    try:
        c = json.load(open(f"{out}/capture{i}.json")); o = c["overhead"]
        if o.get("layer_cpu_us") is not None and frames:
            gpu = (o.get("gpu_us") or 0) / frames
            rep = (o["layer_cpu_us"] + (o.get("driver_cpu_us") or 0)) / frames + gpu
            # Where the budget learnt a span's price from the replay, the
            # spans' cost by that price instead of the probe's estimates.
            if o.get("gpu_span_price_from") in ("frames", "submissions"):
                learnt = (o["layer_cpu_us"] + o["bracketed_submits"] * o["gpu_span_price_us"]) / frames
                spans += f', price learnt {o["gpu_span_price_us"]:.1f} us a span'
            else:
                learnt = rep
        spans = f'{c["submit_spans"]["measured"]} of {c["submits"]} submissions with a span' + spans
    except Exception:
        pass
    if a and b:
        added = 1e6 / b - 1e6 / a
        rows.append((a, b, added, rep, learnt))
        setup = c["overhead"].get("setup_ms") if c else None
        whole = (walls.get(("capture", i), 0) - walls.get(("plain", i), 0)) if walls else None
        print(f"pair {i}: whole run {whole:+d} ms (latlab reports {setup if setup is None else round(setup, 1)} ms "
              f"at vkCreateDevice); ", end="")
        print(f"fps {a:.1f} -> {b:.1f} ({100*(b/a-1):+.1f} %), wall per frame {added:+.1f} us, "
              f"reported {rep if rep is None else round(rep, 1)} us per frame "
              f"(by the learnt price {learnt if learnt is None else round(learnt, 1)}) "
              f"({gpu if gpu is None else round(gpu, 1)} of it device time); {spans}")
    else:
        print(f"pair {i}: no replay figures (see {out}/plain{i}.txt, {out}/capture{i}.txt)")
if rows:
    pa = statistics.median(r[0] for r in rows); pb = statistics.median(r[1] for r in rows)
    per = statistics.median(100 * (r[1] / r[0] - 1) for r in rows)
    added = statistics.median(r[2] for r in rows)
    reps = [r[3] for r in rows if r[3] is not None]
    print(f"{len(rows)} pairs, load before {open(out+'/load_before.txt').read().strip()}, after {open(out+'/load_after.txt').read().strip()}")
    print(f"frame rate median {pa:.1f} -> {pb:.1f} fps ({100*(pb/pa-1):+.1f} %; per pair median {per:+.1f} %, "
          f"capture slower in {sum(r[1] < r[0] for r in rows)} of {len(rows)})")
    wholes = [walls[("capture", i)] - walls[("plain", i)] for i in range(1, pairs + 1)
              if ("capture", i) in walls and ("plain", i) in walls]
    setups = []
    for i in range(1, pairs + 1):
        try: setups.append(json.load(open(f"{out}/capture{i}.json"))["overhead"]["setup_ms"])
        except Exception: pass
    setups = [s for s in setups if s is not None]
    if wholes:
        print(f"whole run (latlab's own start and end included) added, median {statistics.median(wholes):+.0f} ms; "
              f"latlab reports {statistics.median(setups) if setups else float('nan'):.1f} ms at vkCreateDevice")
    if reps:
        rep = statistics.median(reps)
        learnt = statistics.median(r[4] for r in rows if r[4] is not None)
        print(f"wall time per frame added, median {added:.1f} us; reported {rep:.1f} us per frame"
              + (f" ({rep / added:.2f} x)" if added > 0 else "")
              + f"; by the budget's price {learnt:.1f} us" + (f" ({learnt / added:.2f} x)" if added > 0 else ""))
PY
if [ -n "${SUBMITS_CSV:-}" ]; then
  python3 "$(dirname "$0")/../submit_costs.py" $(ls "$out"/submits*.csv 2>/dev/null) | tee "$out/submit_costs.txt"
fi
