#!/usr/bin/env bash
# On the GPU machine: the measured path against the independent
# reference path, allocations per frame, and the profiler's zone cost.
#   * 3 alternations (vulkan, cuda, vulkan, cuda, ...) of
#     `latlab run --mode baseline --bare --frames $FRAMES` (default 1000):
#     measured blocks interleaved with reference blocks (ReferencePath: a
#     prerecorded command buffer with two timestamps on Vulkan, two stamps on
#     CUDA's own stream) and raw-sleep blocks; diagnostics.comparison holds
#     the ratios;
#     each run has the poll observer on (--poll on): poll_latency beside
#     fence_latency, gpu_end_to_poll_wake beside gpu_end_to_fence_wake, and
#     the poller's CPU per frame (poll_cpu);
#   * with POLL_AB=1 (default) one more run per backend and rep with
#     --poll off (no --bare): fence_latency without the spinning thread, to
#     see what the spinner costs the blocking waiter;
#   * alloc_per_frame (sim and Vulkan): heap allocations per measured frame;
#   * BM_ProfilerZone: bookkeeping ns per zone (10 repetitions), one thread
#     alone and (BM_ProfilerZoneShared) after a second thread recorded;
#     BM_ProfilerZoneThreads: 1, 3 and 8 threads recording at once.
# REPS=0 skips the runs: only the allocations and the zone cost.
# Every step is bounded by `timeout`. Needs .devbin (bench/device/pack.sh) or
# LATLAB_BIN_DIR with latlab, alloc_per_frame and latlab_bench.
# Output under $OUT: lean_<backend>_<rep>.json/.txt, nopoll_<backend>_<rep>.json/.txt,
# alloc.json, profiler_zone.txt,
# summary.txt (python3; skipped without it).
#   OUT=/tmp/o bench/device/lean.sh        FRAMES=1500 REPS=3 bench/device/lean.sh
# Targets: core latency p50 of the measured path without its
# deliberate parts <= 1.05x the reference's p50 (p99 <= 1.10x), over the
# runs: the median of the runs' p50s over the median of the reference's
# (the summary gives it, and how many single runs held);
# workload_submit_cpu_span p50 <= 1.5x the reference submit; 0 allocations
# per frame; <= 15 ns per zone.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${LATLAB_BIN_DIR:-$PWD/.devbin}
out=${OUT:-build/device-lean/out}
mkdir -p "$out"
frames=${FRAMES:-1000}
reps=${REPS:-3}
poll_ab=${POLL_AB:-1}
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/latlab-xdg-$(id -u)}"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
[[ -d $B/lib ]] && export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
T() { local s=$1; shift; timeout -k 5 "$s" "$@"; }
# One run of FRAMES frames at 8-12 ms, its reference and raw-sleep blocks: ~3x.
run_s=$(( frames * 12 * 3 / 1000 + 60 ))

{ date -u; uname -a; grep -m1 'model name' /proc/cpuinfo; nproc
  nvidia-smi --query-gpu=name,driver_version,pstate --format=csv 2>&1; } > "$out/machine_lean.txt"

for rep in $(seq 1 "$reps"); do
  for b in vulkan cuda; do
    echo "== $(date -u +%T) $b rep $rep"
    T "$run_s" "$B/latlab" run --backend "$b" --mode baseline --bare --poll on --frames "$frames" --blocks 5 \
      --warmup 100 --seed "$rep" --out "$out/lean_${b}_$rep.json" > "$out/lean_${b}_$rep.txt" 2>&1
    echo "rc=$?" >> "$out/lean_${b}_$rep.txt"
    if [[ $poll_ab == 1 ]]; then
      echo "== $(date -u +%T) $b rep $rep --poll off"
      T $(( frames * 12 / 1000 + 60 )) "$B/latlab" run --backend "$b" --mode baseline --poll off \
        --frames "$frames" --blocks 5 --warmup 100 --seed "$rep" --out "$out/nopoll_${b}_$rep.json" \
        > "$out/nopoll_${b}_$rep.txt" 2>&1
      echo "rc=$?" >> "$out/nopoll_${b}_$rep.txt"
    fi
  done
done
echo "== $(date -u +%T) allocations per frame"
T 120 "$B/alloc_per_frame" --frames 2000 --json > "$out/alloc.json" 2> "$out/alloc.err"
echo "rc=$?" >> "$out/alloc.err"
echo "== $(date -u +%T) profiler zone"
T 300 "$B/latlab_bench" --benchmark_filter='BM_ProfilerZone' --benchmark_repetitions=10 \
  --benchmark_report_aggregates_only=false > "$out/profiler_zone.txt" 2>&1
echo "rc=$?" >> "$out/profiler_zone.txt"

command -v python3 >/dev/null || exit 0
python3 - "$out" <<'PY' | tee "$out/summary.txt"
import glob, json, os, sys
out = sys.argv[1]
def g(d, *ks):
    for k in ks:
        if not isinstance(d, dict) or d.get(k) is None: return None
        d = d[k]
    return d
def f(x): return "null" if x is None else f"{x:.3f}"
runs = {}  # backend -> each run's core_latency_without_deliberate
for path in sorted(glob.glob(os.path.join(out, "lean_*.json"))):
    try: j = json.load(open(path))
    except Exception as e: print(os.path.basename(path), "unreadable:", e); continue
    c = g(j, "diagnostics", "comparison") or {}
    lean = c.get("core_latency_without_deliberate") or {}
    core = g(c, "observers", "core_latency") or {}
    fence = g(c, "observers", "fence_latency") or {}
    sub = c.get("workload_submit_cpu_span") or {}
    runs.setdefault(os.path.basename(path).split("_")[1], []).append(lean)
    print(f"{os.path.basename(path)}: core p50 {f(core.get('measured_p50'))} / ref {f(core.get('reference_p50'))} us"
          f" = {f(core.get('p50_ratio'))}; without deliberate p50 {f(lean.get('p50_ratio'))} (<=1.05)"
          f" p99 {f(lean.get('p99_ratio'))} (<=1.10); fence p50 {f(fence.get('p50_ratio'))};"
          f" submit span p50 {f(sub.get('p50_ratio'))} (<=1.5)")
# Over the runs (alternated runs, the median of their p50s, which one run's
# noise cannot move much): per backend, the median of the measured path's p50
# (and p99) without its deliberate parts over the median of the reference's.
import statistics
for b, ls in sorted(runs.items()):
    parts = []
    for q, target in (("p50", 1.05), ("p99", 1.10)):
        m = [x.get(f"measured_{q}") for x in ls]; r = [x.get(f"reference_{q}") for x in ls]
        per = [x.get(f"{q}_ratio") for x in ls]
        if None in m or None in r or not m: parts.append(f"{q} n/a"); continue
        ratio = statistics.median(m) / statistics.median(r)
        held = sum(1 for x in per if x is not None and x <= target)
        parts.append(f"{q} median {statistics.median(m):.1f} / {statistics.median(r):.1f} us = {ratio:.3f}"
                     f" (<= {target:.2f}: {'held' if ratio <= target else 'MISSED'}; per run held in {held} of {len(per)})")
    print(f"over {len(ls)} {b} runs, core latency without deliberate parts: " + "; ".join(parts))
def dist(j, *ks):
    d = g(j, *ks) or {}
    return f"{f(d.get('p50'))}/{f(d.get('p99'))}"
print("poll observer (p50/p99 us; total of the measured path): fence_latency, poll_latency,"
      " gpu_end_to_fence_wake, gpu_end_to_poll_wake, poll_cpu, frames past the spin limit;"
      " fence_latency of the --poll off run on the same seed")
for path in sorted(glob.glob(os.path.join(out, "lean_*.json"))):
    try: j = json.load(open(path))
    except Exception: continue
    t = g(j, "modes", "baseline", "total") or {}
    np = os.path.join(out, "nopoll_" + os.path.basename(path)[len("lean_"):])
    try: nj = json.load(open(np)); nf = dist(nj, "modes", "baseline", "total", "fence_latency")
    except Exception: nf = "n/a"
    print(f"{os.path.basename(path)}: fence {dist(t, 'fence_latency')} poll {dist(t, 'poll_latency')}"
          f" end->fence {dist(t, 'stages', 'gpu_end_to_fence_wake')} end->poll {dist(t, 'gpu_end_to_poll_wake')}"
          f" poll_cpu {dist(t, 'poll_cpu')} past_limit {g(t, 'missing_markers', 'poll_limit')}"
          f" | --poll off fence {nf}")
try: print("alloc:", json.dumps(json.load(open(os.path.join(out, "alloc.json")))))
except Exception as e: print("alloc: unreadable:", e)
PY
