#!/usr/bin/env bash
# On the GPU machine's host CPU: the profiler's zone cost with 1, 3 and 8
# threads recording into one profiler at once (BM_ProfilerZoneThreads),
# beside one thread alone and after a second thread recorded (BM_ProfilerZone,
# BM_ProfilerZoneShared, with FILTER=BM_ProfilerZone), of two builds of the
# recording code (BEFORE and AFTER): the two builds alternate REPS times (default 2), 10
# repetitions each (FILTER, default BM_ProfilerZoneThreads, picks the
# benchmarks). Then the protocol tests (each thread parked at each step, the
# broken variants caught, and the randomized run) on all of the machine's
# cores, twice.
# Every step is bounded by `timeout` (about 3 minutes in all expected).
#   BEFORE: latlab_bench built from the commit to compare against, with the
#           benchmark added (default .devbin/before/latlab_bench: pack.sh
#           empties .devbin, so copy it there after packing the tree tested)
#   AFTER:  the tree tested (default .devbin/latlab_bench, as pack.sh leaves
#           it, with latlab_profiler_protocol_tests)
#   PROTOCOL_TESTS: the protocol tests' binary (default
#           .devbin/latlab_profiler_protocol_tests; empty: skipped)
#   BENCH_S: the limit of one benchmark run, s (default 150)
#   OUT=/tmp/o bench/device/zone_threads.sh
# On dev (2 CPUs), with the release builds of both trees and nothing else
# running: OUT=/tmp/o BEFORE=<before tree>/build/release/bench/latlab_bench
#   AFTER=build/release/bench/latlab_bench FILTER=BM_ProfilerZone REPS=3
#   BENCH_S=400 PROTOCOL_TESTS=build/dev/tests/latlab_profiler_protocol_tests
#   bash bench/device/zone_threads.sh
# Output under $OUT: zone_{before,after}_<rep>.json/.txt, protocol_<k>.txt,
# summary.txt (python3; skipped without it): per benchmark the least of each
# run's min of 10 ns_per_zone, and the median of the runs' medians.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-build/device-zone-threads/out}
mkdir -p "$out"
before=${BEFORE:-$PWD/.devbin/before/latlab_bench}
after=${AFTER:-$PWD/.devbin/latlab_bench}
reps=${REPS:-2}
filter=${FILTER:-BM_ProfilerZoneThreads}
protocol=${PROTOCOL_TESTS-$PWD/.devbin/latlab_profiler_protocol_tests}
bench_s=${BENCH_S:-150}
[[ -d $PWD/.devbin/lib ]] && export LD_LIBRARY_PATH=$PWD/.devbin/lib:${LD_LIBRARY_PATH:-}
T() { local s=$1; shift; timeout -k 5 "$s" "$@"; }

{ date -u; uname -a; grep -m1 'model name' /proc/cpuinfo; nproc; } > "$out/machine.txt"
for rep in $(seq 1 "$reps"); do
  for label in before after; do
    bin=$before
    [[ $label == after ]] && bin=$after
    echo "== $(date -u +%T) $label rep $rep"
    T "$bench_s" "$bin" --benchmark_filter="$filter" --benchmark_repetitions=10 \
      --benchmark_out="$out/zone_${label}_$rep.json" --benchmark_out_format=json \
      > "$out/zone_${label}_$rep.txt" 2>&1
    echo "rc=$?" >> "$out/zone_${label}_$rep.txt"
  done
done
for k in 1 2; do
  [[ -n $protocol ]] || break
  echo "== $(date -u +%T) protocol tests $k"
  T 60 "$protocol" > "$out/protocol_$k.txt" 2>&1
  echo "rc=$?" >> "$out/protocol_$k.txt"
done

command -v python3 >/dev/null || exit 0
python3 - "$out" <<'PY' | tee "$out/summary.txt"
import glob, json, os, statistics, sys
out = sys.argv[1]
runs = {}  # (label, benchmark) -> [(min, median) per run]
for path in sorted(glob.glob(os.path.join(out, "zone_*_*.json"))):
    label = os.path.basename(path).split("_")[1]
    try:
        doc = json.load(open(path))
    except (OSError, ValueError):
        continue
    per = {}
    for b in doc.get("benchmarks", []):
        if b.get("run_type") != "iteration" or "ns_per_zone" not in b:
            continue
        per.setdefault(b["run_name"], []).append(b["ns_per_zone"])
    for name, v in per.items():
        runs.setdefault((label, name), []).append((min(v), statistics.median(v)))
names = sorted({n for _, n in runs})
print("ns per zone: least min of 10 over the runs (median of the runs' medians)")
print(f"{'benchmark':58s} {'before':>16s} {'after':>16s}")
for n in names:
    cells = []
    for label in ("before", "after"):
        r = runs.get((label, n))
        cells.append(f"{min(m for m, _ in r):6.2f} ({statistics.median(md for _, md in r):6.2f})"
                     if r else f"{'-':>16s}")
    print(f"{n:58s} {cells[0]:>16s} {cells[1]:>16s}")
PY
