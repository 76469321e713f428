#!/usr/bin/env bash
# `latlab capture` on the GPU machine (no display: no present, so no frames;
# every figure is per submission):
#   1. the layer's cost: `latlab run --backend vulkan --mode baseline` alone
#      and under `latlab capture`: the layer's own CPU time per vkQueueSubmit
#      (overhead.layer_cpu_per_submit, measured inside the layer) and the
#      change in latlab's own workload_submit_cpu_span stage (the cost as the
#      program sees it);
#   2. two independent measurements of the same GPU work: the layer's
#      per-submit GPU begin/end against latlab run's own gpu_begin/gpu_end
#      markers (its frames CSV), joined by submit time; |difference| p50/p99.
#
#   bench/device/capture.sh [FRAMES]   (measured frames, default 2000)
#   LATLAB_BINARY=path/to/latlab bench/device/capture.sh   (prebuilt; its layers/ must be beside it
#                                      or LATLAB_CAPTURE_LAYER_DIR set)
# Targets (printed, not enforced): layer CPU per submit p50 <= 2 us;
# |layer - latlab| GPU begin and end p50 <= 1 us.
# Output: $OUT or build/device-capture/out: machine.txt, plain.json, plain.csv, captured.json,
# captured_run.json, captured_run.csv, capture.json, submits.csv, summary.txt, build.log.
# About 3 min to build on 16 cores, then ~2 x (FRAMES / 500 s).
set -uo pipefail
cd "$(dirname "$0")/../.."

frames="${1:-2000}"
build=build/device-capture
out="${OUT:-$build/out}"
mkdir -p "$out"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/latlab-xdg-$(id -u)}"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  uname -a
  grep -m1 'model name' /proc/cpuinfo
  echo "cpus: $(nproc)"
  nvidia-smi --query-gpu=name,driver_version,pstate --format=csv 2>&1 | tail -n +2
  uptime
} >"$out/machine.txt"

bin="${LATLAB_BINARY:-}"
if [ -z "$bin" ]; then
  timeout 400 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLATLAB_WERROR=ON \
    -DLATLAB_BUILD_TESTS=OFF -DLATLAB_BUILD_BENCH=OFF >"$out/build.log" 2>&1 &&
  timeout 400 cmake --build "$build" -j"$(nproc)" --target latlab VkLayer_latlab_capture \
    >>"$out/build.log" 2>&1 || { echo "build failed (build.log)"; tail -20 "$out/build.log"; exit 1; }
  bin="$build/apps/latlab/latlab"
fi

run_args=(run --backend vulkan --mode baseline --frames "$frames" --blocks 1 --warmup 200 --seed 1)
timeout 300 "$bin" "${run_args[@]}" --out "$out/plain.json" --frames-csv "$out/plain.csv" \
  >"$out/plain.txt" 2>&1 || echo "plain run failed ($?)"
timeout 300 "$bin" capture --out "$out/capture.json" --submits-csv "$out/submits.csv" -- \
  "$bin" "${run_args[@]}" --out "$out/captured_run.json" --frames-csv "$out/captured_run.csv" \
  >"$out/captured.txt" 2>&1 || echo "captured run failed ($?)"

python3 - "$out" <<'PY' | tee "$out/summary.txt"
import csv, json, sys, statistics as st
out = sys.argv[1]
def pct(v, q):
    v = sorted(v); 
    if not v: return float('nan')
    i = q * (len(v) - 1); lo = int(i); hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (i - lo)
cap = json.load(open(f"{out}/capture.json"))
print("capture: partial", cap["partial"], cap["partial_reason"], "| submits", cap["submits"],
      "| spans", cap["submit_spans"])
o = cap["overhead"]["layer_cpu_per_submit"]
print(f"layer CPU per submit (inside the layer): p50 {o['p50']:.3f} us  p90 {o['p90']:.3f}  p99 {o['p99']:.3f}  (target p50 <= 2 us)")
def stage(path, name):
    j = json.load(open(path))
    return j["modes"]["baseline"]["total"]["stages"][name]
for name in ("workload_submit_cpu_span", "gpu_execution", "submit_start_to_gpu_begin"):
    a, b = stage(f"{out}/plain.json", name), stage(f"{out}/captured_run.json", name)
    print(f"{name}: alone p50 {a['p50']:.3f} us, under capture p50 {b['p50']:.3f} us (+{b['p50']-a['p50']:.3f}); p99 {a['p99']:.3f} -> {b['p99']:.3f}")
subs = [r for r in csv.DictReader(open(f"{out}/submits.csv")) if r["gpu_begin_ns"]]
subs.sort(key=lambda r: int(r["cpu_start_ns"]))
starts = [int(r["cpu_start_ns"]) for r in subs]
import bisect
db, de, n, unmatched = [], [], 0, 0
for f in csv.DictReader(open(f"{out}/captured_run.csv")):
    if f.get("block_kind") != "measured" or not f["gpu_begin_host_ns"] or not f["submit_start_ns"]:
        continue
    s0, s1 = int(f["submit_start_ns"]), int(f["submit_end_ns"])
    i = bisect.bisect_left(starts, s0)
    if i >= len(subs) or starts[i] > s1:
        unmatched += 1; continue
    r = subs[i]; n += 1
    db.append(int(f["gpu_begin_host_ns"]) - int(r["gpu_begin_ns"]))
    de.append(int(r["gpu_end_ns"]) - int(f["gpu_end_host_ns"]))
print(f"joined frames {n}, unmatched {unmatched}")
for name, d in (("gpu_begin: latlab - layer", db), ("gpu_end: layer - latlab", de)):
    a = [abs(x) / 1000 for x in d]
    print(f"{name}: signed p50 {pct([x/1000 for x in d], .5):.3f} us; |diff| p50 {pct(a, .5):.3f} us p99 {pct(a, .99):.3f} us (target |p50| <= 1 us)")
PY
